// The streamed analysis against the in-memory one, per-rank analysis of generated rank sets
// (8 and 64 ranks made from a shared trace, one rank slowed down), and partial profiles:
// analysing files at once equals merging their partials.
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "analysis/diff/diff.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "reports/html/html_report.h"
#include "reports/terminal/terminal_report.h"
#include "tests/analysis/aggregate/rank_files.h"

namespace qprof {
namespace {

using google::protobuf::util::MessageDifferencer;

importers::ImportOptions Quiet() {
  importers::ImportOptions o;
  o.progress = false;
  return o;
}

std::vector<std::string> SharedTraces() {
  std::vector<std::string> out;
  std::string dir = testing::SharedTestData();
  if (dir.empty()) return out;
  for (const char* sub : {"nsys", "kineto"}) {
    for (const auto& e : std::filesystem::directory_iterator(dir + "/" + sub)) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

proto::Profile Finish(const aggregate::ProfileState& state) {
  auto p = AnalyzeState(state, {});
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : proto::Profile();
}

void ExpectEqual(const proto::Profile& a, const proto::Profile& b, const std::string& what) {
  MessageDifferencer diff;
  std::string report;
  diff.ReportDifferencesToString(&report);
  EXPECT_TRUE(diff.Compare(a, b)) << what << ":\n" << report.substr(0, 4000);
}

// Streaming a file (records in table or file order, launch stacks resolved as they stream,
// occupancy per launch configuration, nothing held per launch) gives the very Profile that
// analysing the whole imported trace gives.
TEST(Streaming, EveryRealTraceGivesTheSameProfileAsInMemory) {
  std::vector<std::string> files = SharedTraces();
  if (files.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  for (const std::string& f : files) {
    auto state = IngestFile(f, Quiet());
    ASSERT_TRUE(state.ok()) << state.status();
    auto trace = importers::ImportFile(f, Quiet());
    ASSERT_TRUE(trace.ok()) << trace.status();
    auto whole = Analyze({*trace}, {});
    ASSERT_TRUE(whole.ok()) << whole.status();
    ExpectEqual(*whole, Finish(*state), f);
  }
}

// Decoding on worker threads in small batches (many batch boundaries) gives the very trace
// one thread gives.
TEST(Streaming, KinetoOnWorkerThreadsEqualsOneThread) {
  std::vector<std::string> files = SharedTraces();
  if (files.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  for (const std::string& f : files) {
    if (f.find("/kineto/") == std::string::npos) continue;
    importers::ImportOptions one = Quiet(), many = Quiet();
    one.threads = 1;
    many.threads = 3;
    many.batch_bytes = 16 << 10;
    auto a = importers::ImportFile(f, one);
    auto b = importers::ImportFile(f, many);
    ASSERT_TRUE(a.ok() && b.ok()) << f;
    std::string diff;
    MessageDifferencer d;
    d.ReportDifferencesToString(&diff);
    EXPECT_TRUE(d.Compare(*a, *b)) << f << ": " << diff.substr(0, 2000);
  }
}

struct RankSet {
  std::vector<std::string> paths;
  proto::Trace source;
};

RankSet MakeRanks(const std::string& name, int ranks, int slow) {
  RankSet set;
  auto t = importers::ImportFile(testing::SharedTestData() + "/kineto/a100x2_nccl_allreduce.json.gz",
                                 Quiet());
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return set;
  set.source = *t;
  set.paths = testing::WriteRankSet(set.source, testing::TempDir(name), ranks, slow, 1.5);
  return set;
}

void ExpectStraggler(const proto::Profile& p, int ranks, int slow) {
  ASSERT_EQ(p.ranks_size(), ranks);
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(p.ranks(r).rank(), static_cast<uint32_t>(r));
  const proto::RankSummary& s = p.rank_summary();
  EXPECT_EQ(s.ranks(), static_cast<uint32_t>(ranks));
  EXPECT_EQ(s.slowest_rank(), static_cast<uint32_t>(slow));
  EXPECT_TRUE(p.ranks(slow).slowest());
  // Every non-communication kernel of the slowed rank ran 1.5x as long; the others are
  // copies of one another, so the median is theirs.
  EXPECT_NEAR(s.imbalance(), 1.5, 1e-3);
  EXPECT_NEAR(p.ranks(slow).compute_vs_median(), 1.5, 1e-3);
  for (int r = 0; r < ranks; ++r) {
    if (r == slow) continue;
    EXPECT_DOUBLE_EQ(p.ranks(r).compute_vs_median(), 1.0) << r;
    EXPECT_FALSE(p.ranks(r).slowest()) << r;
    EXPECT_EQ(p.ranks(r).kernel_time_ns(), p.ranks(0 == slow ? 1 : 0).kernel_time_ns());
    EXPECT_GT(p.ranks(r).comm_share(), p.ranks(slow).comm_share()) << r;
  }
  EXPECT_NE(s.note().find(std::string("rank ") + std::to_string(slow) + " (rank" +
                          std::to_string(slow) + ".json)"),
            std::string::npos)
      << s.note();
}

TEST(Ranks, EightRanksFindTheSlowedOne) {
  if (testing::SharedTestData().empty()) GTEST_SKIP() << "no ../shared/testdata";
  RankSet set = MakeRanks("ranks8", 8, 5);
  auto state = IngestFiles(set.paths, {Quiet(), 0});
  ASSERT_TRUE(state.ok()) << state.status();
  proto::Profile p = Finish(*state);
  ExpectStraggler(p, 8, 5);
  // Each rank's row is what analysing its file alone gives.
  for (int r = 0; r < 8; ++r) {
    auto one = IngestFile(set.paths[static_cast<size_t>(r)], Quiet());
    ASSERT_TRUE(one.ok());
    proto::Profile alone = Finish(*one);
    EXPECT_EQ(p.ranks(r).kernel_time_ns(), alone.totals().kernel_time_ns()) << r;
    EXPECT_EQ(p.ranks(r).busy_time_ns(), alone.totals().busy_time_ns()) << r;
    EXPECT_EQ(p.ranks(r).kernel_count(), alone.totals().kernel_count()) << r;
  }
  // The slowed rank's compute is the source's, slowed: 1.5x per kernel, rounded to ns.
  EXPECT_EQ(p.ranks(5).compute_time_ns(), testing::ComputeNs(set.source, 1.5));
  EXPECT_EQ(p.ranks(0).compute_time_ns(), testing::ComputeNs(set.source, 1.0));
  // Diff against the same job with rank 2 slowed instead: ranks match by number.
  RankSet other = MakeRanks("ranks8b", 8, 2);
  auto other_state = IngestFiles(other.paths, {Quiet(), 0});
  ASSERT_TRUE(other_state.ok());
  proto::Diff d = diff::DiffProfiles(p, Finish(*other_state));
  ASSERT_EQ(d.ranks_size(), 8);
  EXPECT_NEAR(d.ranks(2).compute_ratio(), 1.5, 1e-3);
  EXPECT_NEAR(d.ranks(5).compute_ratio(), 1 / 1.5, 1e-3);
  EXPECT_DOUBLE_EQ(d.ranks(0).compute_ratio(), 1.0);
  EXPECT_NE(d.rank_headline().find("slowest rank: 5"), std::string::npos) << d.rank_headline();
  const std::string diff_html = reports::RenderDiffHtml(d);
  EXPECT_NE(diff_html.find("id=\"diff-ranks\""), std::string::npos);
  EXPECT_NE(diff_html.find("data-rank=\"2\" data-status=\"both\""), std::string::npos);
  const std::string diff_text = reports::DiffSummaryText(d);
  EXPECT_NE(diff_text.find("Ranks (8 matched by number)"), std::string::npos) << diff_text;
  std::filesystem::remove_all(std::filesystem::path(set.paths[0]).parent_path());
  std::filesystem::remove_all(std::filesystem::path(other.paths[0]).parent_path());
}

TEST(Ranks, SixtyFourRanksShowTheSlowedOneInEveryReport) {
  if (testing::SharedTestData().empty()) GTEST_SKIP() << "no ../shared/testdata";
  RankSet set = MakeRanks("ranks64", 64, 41);
  auto state = IngestFiles(set.paths, {Quiet(), 0});
  ASSERT_TRUE(state.ok()) << state.status();
  proto::Profile p = Finish(*state);
  ExpectStraggler(p, 64, 41);
  std::string html = reports::RenderProfileHtml(p, {});
  EXPECT_NE(html.find("id=\"rank-table\""), std::string::npos);
  EXPECT_NE(html.find("data-slowest=\"41\""), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"slowest\" data-rank=\"41\">"), std::string::npos);
  reports::TerminalOptions topt;
  topt.width = 100;
  std::string text = reports::ProfileSummaryText(p, topt);
  EXPECT_NE(text.find("Ranks (64 traces)"), std::string::npos) << text;
  EXPECT_NE(text.find("41 *"), std::string::npos) << text;  // first row: the most compute
  EXPECT_NE(text.find("56 more ranks"), std::string::npos) << text;
  std::filesystem::remove_all(std::filesystem::path(set.paths[0]).parent_path());
}

// 16 files analysed at once (in parallel, merged in order) and 16 partial profiles, each
// written to a file and read back, merged in the same order: the same Profile.
TEST(Partials, SixteenFilesAtOnceEqualSixteenPartialsMerged) {
  if (testing::SharedTestData().empty()) GTEST_SKIP() << "no ../shared/testdata";
  RankSet set = MakeRanks("partials", 12, 7);
  std::vector<std::string> files = set.paths;
  for (const std::string& f : SharedTraces()) {
    if (f.find("/nsys/") != std::string::npos) files.push_back(f);
  }
  ASSERT_EQ(files.size(), 16u);
  auto at_once = IngestFiles(files, {Quiet(), 0});
  ASSERT_TRUE(at_once.ok()) << at_once.status();
  const proto::Profile whole = Finish(*at_once);
  aggregate::ProfileState merged;
  const std::string dir = testing::TempDir("partial_files");
  for (size_t i = 0; i < files.size(); ++i) {
    auto one = IngestFile(files[i], Quiet());
    ASSERT_TRUE(one.ok()) << one.status();
    const std::string path = dir + "/part" + std::to_string(i) + ".qprofile";
    ASSERT_TRUE(aggregate::WritePartialFile(*one, path).ok());
    auto back = aggregate::ReadPartialFile(path);
    ASSERT_TRUE(back.ok()) << back.status();
    merged.Merge(std::move(*back));
  }
  ExpectEqual(whole, Finish(merged), "16 partials merged");
  // The comparison covers the launch statistics, which the partials carry: they are there.
  EXPECT_GT(whole.launch_summary().launches(), 0u);
  EXPECT_GT(whole.launch_summary().launches_with_context(), 0u);  // NVTX stacks
  EXPECT_GT(whole.launch_summary().launches_with_occupancy(), 0u);
  int with_launch = 0, with_context = 0;
  for (const auto& k : whole.kernels()) {
    with_launch += k.launch().launches_with_occupancy() > 0;
    with_context += !k.launch_context().empty();
  }
  EXPECT_GT(with_launch, 0);
  EXPECT_GT(with_context, 0);
  // The comparison covers the idle gaps and the NVTX range summary: both are there.
  EXPECT_GT(whole.idle().gap_count(), 0u);
  EXPECT_GT(whole.idle().span_ns(), whole.idle().busy_ns());
  EXPECT_GT(whole.idle().host().runtime_calls(), 0u);
  EXPECT_GT(whole.nvtx_summary_size(), 0);
  ASSERT_EQ(whole.ranks_size(), 16);
  EXPECT_NEAR(static_cast<double>(whole.ranks(7).compute_time_ns()) /
                  static_cast<double>(whole.ranks(0).compute_time_ns()),
              1.5, 1e-3);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(std::filesystem::path(set.paths[0]).parent_path());
}

// Launch contexts that split a kernel name by role (the story trace: SGLang stacks) and the
// source's own occupancy estimates (Kineto args) merge exactly too: two files at once equal
// their two partials merged, in either order of analysis.
TEST(Partials, LaunchContextsAndOccupancyMergeTheSameWay) {
  std::vector<std::string> files = {
      std::string(QPROF_SOURCE_DIR) + "/tests/analysis/testdata/story_sglang_mxfp4_kineto.json"};
  for (const std::string& f : SharedTraces()) {
    if (f.find("h100_qwen") != std::string::npos) files.push_back(f);
  }
  auto at_once = IngestFiles(files, {Quiet(), 0});
  ASSERT_TRUE(at_once.ok()) << at_once.status();
  const proto::Profile whole = Finish(*at_once);
  aggregate::ProfileState merged;
  for (const std::string& f : files) {
    auto one = IngestFile(f, Quiet());
    ASSERT_TRUE(one.ok()) << one.status();
    auto back = aggregate::FromPartial(aggregate::ToPartial(*one), f);
    ASSERT_TRUE(back.ok()) << back.status();
    merged.Merge(std::move(*back));
  }
  ExpectEqual(whole, Finish(merged), "story + qwen partials merged");
  bool context_role = false, diagnosed = false;
  for (const auto& k : whole.kernels()) {
    context_role |= k.evidence() == "launch_context";
    diagnosed |= k.has_diagnosis();
  }
  EXPECT_TRUE(context_role);
  EXPECT_TRUE(diagnosed);
  EXPECT_GT(whole.launch_summary().launches_with_context(), 0u);
  if (files.size() > 1) EXPECT_GT(whole.launch_summary().reported_compared(), 0u);
  // The Qwen trace recorded its ops' shapes: the work derived from them (kernel rows and
  // role ceilings) is part of what merges equally.
  uint64_t with_work = 0;
  for (const auto& k : whole.kernels()) with_work += k.work_launches();
  if (files.size() > 1) {
    EXPECT_GT(with_work, 0u);
    EXPECT_GT(whole.ceilings().roles_size(), 0);
  }
}

// Past the exact limits (a kernel with more launches than the quantiles keep, more steps
// than the timeline keeps): still the same Profile however the traces are split.
TEST(Partials, SketchedQuantilesAndSampledTimelineMergeTheSameWay) {
  std::vector<proto::Trace> traces(16);
  int64_t t = 0;
  for (int i = 0; i < 16; ++i) {
    proto::Trace& tr = traces[static_cast<size_t>(i)];
    tr.mutable_header()->set_source_path("part" + std::to_string(i));
    tr.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
    for (int step = 0; step < 220; ++step) {
      // Steps 1..3520, each a little longer than the one before: the median step (by span)
      // is 1761, which a sample of every 2nd, 4th, ... step does not keep.
      const int number = i * 220 + step + 1;
      for (int k = 0; k < 10; ++k) {
        proto::Activity* a = tr.add_activities();
        a->set_kind(proto::ACTIVITY_KIND_KERNEL);
        a->set_name(k % 2 ? "nvjet_tst_128x64" : "elementwise_kernel");
        a->set_start_ns(t);
        a->set_end_ns(t + 1000 + number + (k * 7919) % 500);
        a->set_nvtx_path("decode/step " + std::to_string(number) + "/layer 0");
        t += 8000;
      }
    }
  }
  auto analyse = [&traces](const std::vector<std::vector<int>>& groups) {
    aggregate::ProfileState all;
    for (const auto& g : groups) {
      aggregate::ProfileState part;
      for (int i : g) {
        aggregate::ProfileState one;
        aggregate::AccumulateTrace(traces[static_cast<size_t>(i)], &one);
        part.Merge(std::move(one));
      }
      auto back = aggregate::FromPartial(aggregate::ToPartial(part), "part");
      EXPECT_TRUE(back.ok()) << back.status();
      all.Merge(std::move(*back));
    }
    return Finish(all);
  };
  std::vector<std::vector<int>> singles, halves = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}};
  for (int i = 0; i < 16; ++i) singles.push_back({i});
  proto::Profile a = analyse(singles), b = analyse(halves);
  ExpectEqual(a, b, "16 singles vs 2 halves");
  ASSERT_EQ(a.kernels_size(), 2);
  EXPECT_EQ(a.kernels(0).calls(), 17600u);
  EXPECT_EQ(a.kernels(0).quantile_error(), 0.005);  // 17,600 launches each: sketched
  // 3,520 steps of 10 launches: the timeline sample keeps every few steps only.
  EXPECT_NE(a.timeline_note().find("sampled"), std::string::npos) << a.timeline_note();
  EXPECT_NE(a.timeline_note().find("median step 1761"), std::string::npos) << a.timeline_note();
  EXPECT_GT(a.timeline_size(), 0);
}

}  // namespace
}  // namespace qprof

namespace qprof {
namespace {

// One kernel launched directly inside 1000 numbered step frames: half of the steps as
// Kineto "ProfilerStep#N" user annotations (launch stacks), half as NVTX "step N" ranges
// (paths). The step number is not part of any group or verdict, so the state holds one
// group per context kind however many steps run, the kernel is one row whose launch
// context reads "ProfilerStep#N (user_annotation)", and partials merge to the same Profile.
proto::Trace NumberedStepTrace(int first_step, int steps) {
  proto::Trace tr;
  tr.mutable_header()->set_source_path("steps" + std::to_string(first_step));
  tr.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  proto::LaunchContextStats* cs = tr.mutable_header()->mutable_launch_context_stats();
  cs->add_stacks();  // stacks[0]: no frames
  int64_t t = int64_t{first_step} * 100000;
  for (int i = 0; i < steps; ++i) {
    const int step = first_step + i;
    proto::Activity* a = tr.add_activities();
    a->set_kind(proto::ACTIVITY_KIND_KERNEL);
    a->set_name("elementwise_kernel");
    a->set_start_ns(t);
    a->set_end_ns(t + 2000 + step % 7);
    a->mutable_grid()->set_x(128);
    a->mutable_grid()->set_y(1);
    a->mutable_grid()->set_z(1);
    a->mutable_block()->set_x(256);
    a->mutable_block()->set_y(1);
    a->mutable_block()->set_z(1);
    if (step % 2 == 0) {
      proto::LaunchFrame* f = cs->add_frames();
      f->set_name("ProfilerStep#" + std::to_string(step));
      f->set_kind("user_annotation");
      cs->add_stacks()->add_frames(static_cast<uint32_t>(cs->frames_size() - 1));
      a->mutable_launch_context()->set_stack(static_cast<uint32_t>(cs->stacks_size() - 1));
    } else {
      a->set_nvtx_path("step " + std::to_string(step));
    }
    t += 10000;
  }
  return tr;
}

TEST(Groups, NumberedStepFramesDoNotMakeAGroupPerStep) {
  aggregate::ProfileState whole;
  aggregate::AccumulateTrace(NumberedStepTrace(1, 1000), &whole);
  // Two verdicts ("ProfilerStep#N (user_annotation)", "step N (nvtx)"), one group each;
  // before step numbers were folded, 1000 of each.
  EXPECT_EQ(whole.contexts.size(), 2u);
  EXPECT_EQ(whole.groups.size(), 2u);
  const proto::Profile p = Finish(whole);
  ASSERT_EQ(p.kernels_size(), 1);
  EXPECT_EQ(p.kernels(0).calls(), 1000u);
  EXPECT_TRUE(p.kernels(0).launch_context() == "ProfilerStep#N (user_annotation)" ||
              p.kernels(0).launch_context() == "step N (nvtx)")
      << p.kernels(0).launch_context();

  aggregate::ProfileState merged;
  for (int part = 0; part < 4; ++part) {
    aggregate::ProfileState one;
    aggregate::AccumulateTrace(NumberedStepTrace(1 + part * 250, 250), &one);
    auto back = aggregate::FromPartial(aggregate::ToPartial(one), "part");
    ASSERT_TRUE(back.ok()) << back.status();
    merged.Merge(std::move(*back));
  }
  EXPECT_EQ(merged.groups.size(), 2u);
  aggregate::ProfileState at_once;
  for (int part = 0; part < 4; ++part) {
    aggregate::ProfileState one;
    aggregate::AccumulateTrace(NumberedStepTrace(1 + part * 250, 250), &one);
    at_once.Merge(std::move(one));
  }
  ExpectEqual(Finish(at_once), Finish(merged), "4 numbered-step partials merged");
}

// torch's profiler numbers each instance of a module class ("nn.Module: Qwen2RMSNorm_31"):
// folded like step numbers, the same kernel launched from every layer's instance is one
// group and one row with one context, not one per layer. The instance frames are counted in
// the raw trace (a plain scan of its text), so the test shows there were many to fold.
TEST(Groups, ModuleInstancesDoNotMakeAGroupPerLayer) {
  const std::string dir = testing::SharedTestData();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  const std::string path = dir + "/kineto/h100_qwen1.5-0.5b_inference.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  std::set<std::string> instances;
  {
    gzFile f = gzopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    std::string text;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
    gzclose(f);
    const std::string tag = "\"nn.Module: Qwen2RMSNorm_";
    for (size_t at = text.find(tag); at != std::string::npos; at = text.find(tag, at + 1)) {
      instances.insert(text.substr(at, text.find('"', at + 1) - at));
    }
  }
  ASSERT_GT(instances.size(), 10u) << "the trace has one RMSNorm module per layer";

  auto state = IngestFile(path, Quiet());
  ASSERT_TRUE(state.ok()) << state.status();
  std::map<std::string, int> rmsnorm_groups;  // kernel -> groups launched under an RMSNorm
  for (const auto& g : state->groups) {
    if (g.context == 0) continue;
    const std::string& shown = state->contexts[g.context - 1].innermost;
    EXPECT_EQ(shown.find("Qwen2RMSNorm_1"), std::string::npos) << shown;
    if (shown.find("Qwen2RMSNorm") != std::string::npos) {
      EXPECT_NE(shown.find("nn.Module: Qwen2RMSNorm_N"), std::string::npos) << shown;
      ++rmsnorm_groups[g.name];
    }
  }
  ASSERT_FALSE(rmsnorm_groups.empty());
  for (const auto& [name, n] : rmsnorm_groups) EXPECT_EQ(n, 1) << name;
  const proto::Profile p = Finish(*state);
  for (const auto& k : p.kernels()) {
    if (k.launch_context().find("RMSNorm") == std::string::npos) continue;
    EXPECT_EQ(k.launch_context(), "nn.Module: Qwen2RMSNorm_N (python)") << k.name();
    EXPECT_EQ(k.role(), "norm") << k.name();
  }
}

}  // namespace
}  // namespace qprof
