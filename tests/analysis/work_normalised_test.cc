// Diffs normalised for the work each side captured, on the real before/after pair of nsys
// exports (expectations from the raw SQLite, queried here) and on synthetic profiles.
#include <sqlite3.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>
#include <string>

#include "analysis/analyze.h"
#include "analysis/diff/diff.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/raw_nsys.h"

namespace qprof {
namespace {

using testing_raw::CommKernels;
using testing_raw::CommPerCall;
using testing_raw::Query;
using testing_raw::TestDataDir;

// Time per call of kernels whose short name starts with `prefix`, from the raw table.
double PerCall(const std::string& path, const std::string& prefix) {
  return Query(path,
               "SELECT CAST(SUM(k.end - k.start) AS REAL) / COUNT(*) FROM "
               "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName WHERE "
               "s.value LIKE '" + prefix + "%'");
}

double Calls(const std::string& path, const std::string& prefix) {
  return Query(path,
               "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON "
               "s.id = k.shortName WHERE s.value LIKE '" + prefix + "%'");
}

double CommCalls(const std::string& path) {
  return Query(path, "WITH c AS (" + CommKernels() + ") SELECT COUNT(*) FROM c");
}

proto::Profile AnalyzeFile(const std::string& path) {
  importers::ImportOptions io;
  io.progress = false;
  auto t = importers::ImportFile(path, io);
  EXPECT_TRUE(t.ok()) << t.status();
  AnalyzeOptions o;
  auto p = Analyze({*t}, o);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

const proto::DiffRow* Role(const proto::Diff& d, const std::string& role) {
  for (const auto& r : d.roles()) {
    if (r.key() == role) return &r;
  }
  return nullptr;
}

bool HasWarning(const proto::Diff& d, const std::string& code) {
  for (const auto& w : d.warnings()) {
    if (w.code() == code) return true;
  }
  return false;
}

TEST(WorkNormalisedDiff, BeforeAfterComparesPerCallAndNamesComm) {
  const std::string before = TestDataDir() + "/nsys/h100x2_train_before.sqlite";
  const std::string after = TestDataDir() + "/nsys/h100x2_train_after.sqlite";
  if (!std::filesystem::exists(before) || !std::filesystem::exists(after)) {
    GTEST_SKIP() << "test data not found under " << TestDataDir() << " (set QPROF_TESTDATA)";
  }
  proto::Profile a = AnalyzeFile(before), b = AnalyzeFile(after);
  a.set_label("before");
  b.set_label("after");
  proto::Diff d = diff::DiffProfiles(a, b);
  // Neither export has tokens or steps: per call.
  EXPECT_EQ(d.unit(), "call");
  EXPECT_EQ(d.moved_role(), "comm") << d.per_unit_headline();
  // The figures the headline is made of, against the raw tables.
  const proto::DiffRow* comm = Role(d, "comm");
  ASSERT_NE(comm, nullptr);
  const double comm_a = CommPerCall(before), comm_b = CommPerCall(after);
  EXPECT_NEAR(comm->a_per_unit_ns(), comm_a, 1e-6 * comm_a);
  EXPECT_NEAR(comm->b_per_unit_ns(), comm_b, 1e-6 * comm_b);
  EXPECT_NEAR(comm->per_unit_ratio(), comm_b / comm_a, 1e-9);
  // 185 us -> 226 us per call (the NCCL kernels alone: 385 us -> 544 us).
  EXPECT_GT(comm->per_unit_ratio(), 1.2);
  EXPECT_GT(PerCall(after, "ncclDevKernel") / PerCall(before, "ncclDevKernel"), 1.3);
  EXPECT_EQ(comm->a_calls(), static_cast<uint64_t>(CommCalls(before)));
  EXPECT_EQ(comm->b_calls(), static_cast<uint64_t>(CommCalls(after)));
  EXPECT_GT(comm->a_calls(), static_cast<uint64_t>(Calls(before, "ncclDevKernel")));
  // attention is flash_fwd only: the same time per call within 1.5%, though fewer calls.
  const proto::DiffRow* attn = Role(d, "attn.dense");
  ASSERT_NE(attn, nullptr);
  const double fa = PerCall(before, "flash_fwd"), fb = PerCall(after, "flash_fwd");
  EXPECT_NEAR(attn->per_unit_ratio(), fb / fa, 1e-9);
  EXPECT_LT(std::fabs(attn->per_unit_ratio() - 1), 0.015);
  EXPECT_LT(Calls(after, "flash_fwd"), Calls(before, "flash_fwd"));
  // Different amounts of work captured: said, and the headline names comm per call.
  EXPECT_TRUE(HasWarning(d, "work_differs"));
  EXPECT_FALSE(HasWarning(d, "role_missing"));
  EXPECT_EQ(d.per_unit_headline().rfind("comm: time per call", 0), 0u) << d.per_unit_headline();
  const std::string pct = std::to_string(
      static_cast<int>(std::lround(100 * (comm_b / comm_a - 1))));
  EXPECT_NE(d.per_unit_headline().find("(+" + pct + "%)"), std::string::npos)
      << d.per_unit_headline();
}

// Busy and idle by sort and sweep over the imported trace's kernels, per device.
struct Sweep {
  uint64_t span = 0, busy = 0, gaps = 0, gap_ns = 0;
};

Sweep SweepKernels(const proto::Trace& t) {
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> by_device;
  for (const auto& a : t.activities()) {
    if (a.kind() == proto::ACTIVITY_KIND_KERNEL && a.end_ns() >= a.start_ns()) {
      by_device[a.device_id()].emplace_back(a.start_ns(), a.end_ns());
    }
  }
  Sweep out;
  for (auto& [d, iv] : by_device) {
    std::sort(iv.begin(), iv.end());
    int64_t cs = iv[0].first, ce = iv[0].second, last = iv[0].second;
    for (const auto& [s, e] : iv) last = std::max(last, e);
    out.span += static_cast<uint64_t>(last - iv[0].first);
    for (const auto& [s, e] : iv) {
      if (s > ce) {
        out.busy += static_cast<uint64_t>(ce - cs);
        ++out.gaps;
        out.gap_ns += static_cast<uint64_t>(s - ce);
        cs = s;
      }
      ce = std::max(ce, e);
    }
    out.busy += static_cast<uint64_t>(ce - cs);
  }
  return out;
}

proto::Trace ImportOrDie(const std::string& path) {
  importers::ImportOptions io;
  io.progress = false;
  auto t = importers::ImportFile(path, io);
  EXPECT_TRUE(t.ok()) << t.status();
  return *std::move(t);
}

const proto::AmdahlRow* RoleAmdahl(const proto::Profile& p, const std::string& role) {
  for (const auto& a : p.ceilings().amdahl()) {
    if (a.scope() == "role" && a.name() == role) return &a;
  }
  return nullptr;
}

// The 2x A100 all-reduce trace: 163 ms of kernels in a 660 ms span, the GPU idle ~76.5%.
TEST(IdleTime, AllReduceSpanBusyIdleGapsAndAmdahlAgainstTheSpan) {
  const std::string path = TestDataDir() + "/kineto/a100x2_nccl_allreduce.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << path;
  const proto::Trace t = ImportOrDie(path);
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  const Sweep want = SweepKernels(t);
  const proto::IdleSummary& s = p->idle();
  EXPECT_EQ(s.span_ns(), want.span);
  EXPECT_EQ(s.busy_ns(), want.busy);
  EXPECT_EQ(s.idle_ns(), want.span - want.busy);
  EXPECT_EQ(s.gap_count(), want.gaps);
  EXPECT_EQ(want.gap_ns, want.span - want.busy);
  EXPECT_NEAR(s.idle_share(), 0.765, 0.005);  // the figure, from the raw events
  uint64_t in_buckets = 0, bucket_ns = 0;
  for (const auto& b : s.gaps()) {
    in_buckets += b.count();
    bucket_ns += b.time_ns();
  }
  EXPECT_EQ(in_buckets, s.gap_count());
  EXPECT_EQ(bucket_ns, s.idle_ns());
  // Idle in long gaps, the host not busy launching: not launch-bound.
  EXPECT_EQ(s.verdict(), "idle") << s.note();
  // Amdahl against the span: comm's exposed time (the NCCL kernels' union minus the other
  // kernels' union, swept here) over the span; hidden comm would save no wall time.
  const proto::AmdahlRow* comm = RoleAmdahl(*p, "comm");
  ASSERT_NE(comm, nullptr);
  std::vector<std::pair<int64_t, int64_t>> nccl, other;
  for (const auto& a : t.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    (a.name().find("nccl") != std::string::npos ? nccl : other).emplace_back(a.start_ns(), a.end_ns());
  }
  std::sort(nccl.begin(), nccl.end());
  std::sort(other.begin(), other.end());
  uint64_t exposed = 0;
  for (const auto& [s0, e0] : nccl) {  // NCCL kernels here never overlap each other
    int64_t cur = s0;
    for (const auto& [s1, e1] : other) {
      if (e1 <= cur || s1 >= e0) continue;
      if (s1 > cur) exposed += static_cast<uint64_t>(s1 - cur);
      cur = std::max(cur, e1);
    }
    if (cur < e0) exposed += static_cast<uint64_t>(e0 - cur);
  }
  EXPECT_EQ(p->comm().exposed_ns(), exposed);
  EXPECT_NEAR(comm->span_share(), static_cast<double>(exposed) / want.span, 1e-9);
  EXPECT_NEAR(comm->speedup_if_vanished_span(), 1 / (1 - comm->span_share()), 1e-9);
  EXPECT_LT(comm->speedup_if_vanished_span(), comm->speedup_if_vanished());
  // Host calls: one launch call per kernel, and runtime calls at least as many.
  uint64_t kernels = 0;
  for (const auto& a : t.activities()) kernels += a.kind() == proto::ACTIVITY_KIND_KERNEL;
  EXPECT_EQ(s.host().launch_calls(), kernels);
  EXPECT_GE(s.host().runtime_calls(), s.host().launch_calls());
  // ProfilerStep#N ranges are steps; backward kernels are launched outside them (autograd's
  // thread), so per-step idle is not claimed.
  EXPECT_EQ(p->steps_size(), 3);
  for (const auto& st : p->steps()) EXPECT_FALSE(st.has_idle_at_least_ns());
  // The NVTX summary counts the steps and the all-reduce ranges.
  bool steps_row = false;
  for (const auto& r : p->nvtx_summary()) {
    if (r.name() == "ProfilerStep#*") {
      steps_row = true;
      EXPECT_EQ(r.count(), 3u);
    }
  }
  EXPECT_TRUE(steps_row);
}

// nsys: host runtime time against the raw table; the NVTX summary's op_id/seq grouping
// against the raw NVTX rows.
TEST(IdleTime, NsysHostCallsAndNvtxSummaryAgreeWithTheRawTables) {
  const std::string path = TestDataDir() + "/nsys/h100x2_train_before.sqlite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << path;
  const proto::Trace t = ImportOrDie(path);
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  const auto& h = p->idle().host();
  EXPECT_EQ(static_cast<double>(h.runtime_ns()),
            Query(path, "SELECT SUM(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  EXPECT_EQ(static_cast<double>(h.runtime_calls()),
            Query(path, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
  EXPECT_GT(h.launch_calls(), 0u);
  const proto::NvtxSumRow* flash = nullptr;
  for (const auto& r : p->nvtx_summary()) {
    if (r.name() == "FlashAttnFunc") flash = &r;
  }
  ASSERT_NE(flash, nullptr);
  const std::string where =
      " FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId WHERE n.\"end\" IS NOT NULL "
      "AND COALESCE(n.text, s.value) LIKE 'FlashAttnFunc, seq = %'";
  EXPECT_EQ(static_cast<double>(flash->count()), Query(path, "SELECT COUNT(*)" + where));
  EXPECT_EQ(static_cast<double>(flash->total_ns()),
            Query(path, "SELECT SUM(n.\"end\" - n.start)" + where));
  const Sweep want = SweepKernels(t);
  EXPECT_EQ(p->idle().span_ns(), want.span);
  EXPECT_EQ(p->idle().busy_ns(), want.busy);
}

// A counter-only Kineto trace: its kernels exist only as cuda_profiler_range events; they
// are imported as kernels with their counters and no time.
TEST(IdleTime, CounterOnlyKinetoTraceImportsItsKernels) {
  const std::string path = TestDataDir() + "/kineto/a100_cupti_counters.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << path;
  const proto::Trace t = ImportOrDie(path);
  // The raw document's range events, counted in its inflated text.
  gzFile f = gzopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  size_t ranges = 0;
  for (size_t pos = 0; (pos = text.find("\"cuda_profiler_range\"", pos)) != std::string::npos;
       ++pos) {
    ++ranges;
  }
  ASSERT_GT(ranges, 0u);
  size_t kernels = 0;
  for (const auto& a : t.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    EXPECT_EQ(a.end_ns(), a.start_ns());
    EXPECT_FALSE(a.metrics().raw().empty());
  }
  EXPECT_EQ(kernels, ranges);
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->totals().kernel_count(), ranges);
  EXPECT_EQ(p->totals().kernel_time_ns(), 0u);
}

// --tokens / --steps for traces that do not record them: tokens/s over the span, steps.
TEST(IdleTime, TokensAndStepsGivenOnTheCommandLine) {
  const std::string path = TestDataDir() + "/nsys/h100x2_train_before.sqlite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << path;
  const proto::Trace t = ImportOrDie(path);
  AnalyzeOptions o;
  o.tokens = 4096;
  o.steps = 2;
  auto p = Analyze({t}, o);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->totals().tokens(), 4096u);
  EXPECT_EQ(p->totals().steps(), 2u);
  EXPECT_EQ(p->totals().wall_time_ns(), p->idle().span_ns());
  EXPECT_DOUBLE_EQ(p->totals().tokens_per_s(), 4096 * 1e9 / p->idle().span_ns());
  EXPECT_NE(p->totals().work_source().find("--tokens"), std::string::npos);
}

// Decode-like traces: many short kernels with short gaps between launches is launch-bound;
// kernels back to back is busy.
TEST(IdleTime, ShortGapsBetweenManyKernelsAreLaunchBound) {
  auto trace = [](int64_t dur, int64_t gap) {
    proto::Trace t;
    t.mutable_header()->set_provenance(proto::PROVENANCE_MEASURED_GPU);
    int64_t at = 0;
    for (int step = 0; step < 4; ++step) {
      for (int k = 0; k < 200; ++k) {
        proto::Activity* a = t.add_activities();
        a->set_kind(proto::ACTIVITY_KIND_KERNEL);
        a->set_name(k % 2 ? "rmsnorm_kernel" : "gemv_kernel");
        a->set_start_ns(at);
        a->set_end_ns(at + dur);
        a->set_nvtx_path("decode/step " + std::to_string(step));
        at += dur + gap;
      }
    }
    return t;
  };
  auto p = Analyze({trace(5'000, 20'000)}, {});  // 5 us kernels, 20 us apart
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->idle().verdict(), "launch-bound") << p->idle().note();
  EXPECT_NEAR(p->idle().idle_share(), 20.0 * 799 / (25.0 * 800 - 20), 1e-9);
  EXPECT_EQ(p->idle().gap_count(), 799u);
  // Every kernel is inside a step: per-step idle is claimed, 200 kernels' gaps but the last.
  ASSERT_EQ(p->steps_size(), 4);
  EXPECT_EQ(p->steps(0).idle_at_least_ns(), 199u * 20'000);
  p = Analyze({trace(50'000, 1'000)}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->idle().verdict(), "busy");
}

// Synthetic profiles: roles with calls and time, optional tokens and steps.
proto::Profile Synthetic(const std::string& label, uint64_t attn_calls, uint64_t attn_ns,
                         uint64_t comm_calls, uint64_t comm_ns) {
  proto::Profile p;
  p.set_label(label);
  auto add = [&p](const std::string& role, const std::string& cls, uint64_t calls, uint64_t ns) {
    proto::KernelRow* k = p.add_kernels();
    k->set_name(role + "_kernel");
    k->set_role(role);
    k->set_class_(cls);
    k->set_calls(calls);
    k->set_time_ns(ns);
    proto::RoleRow* r = p.add_roles();
    r->set_role(role);
    r->set_class_(cls);
    r->set_calls(calls);
    r->set_time_ns(ns);
    p.mutable_totals()->set_kernel_time_ns(p.totals().kernel_time_ns() + ns);
    p.mutable_totals()->set_kernel_count(p.totals().kernel_count() + calls);
  };
  add("attn.dense", "tensor", attn_calls, attn_ns);
  if (comm_calls > 0) add("comm", "comm", comm_calls, comm_ns);
  return p;
}

TEST(WorkNormalisedDiff, PrefersTokensThenStepsThenCalls) {
  // B holds half the work; attention per call unchanged, comm per call doubled.
  proto::Profile a = Synthetic("a", 100, 100'000'000, 10, 1'000'000);
  proto::Profile b = Synthetic("b", 50, 50'000'000, 5, 1'000'000);
  proto::Diff d = diff::DiffProfiles(a, b);
  EXPECT_EQ(d.unit(), "call");
  EXPECT_EQ(d.moved_role(), "comm");
  EXPECT_DOUBLE_EQ(Role(d, "comm")->per_unit_ratio(), 2.0);
  EXPECT_DOUBLE_EQ(Role(d, "attn.dense")->per_unit_ratio(), 1.0);
  EXPECT_DOUBLE_EQ(Role(d, "comm")->speed_delta_ns(), 5 * (200'000.0 - 100'000.0));
  EXPECT_TRUE(HasWarning(d, "work_differs"));
  // Steps on both sides: per step (B ran 5 steps, A 10).
  a.mutable_totals()->set_steps(10);
  b.mutable_totals()->set_steps(5);
  d = diff::DiffProfiles(a, b);
  EXPECT_EQ(d.unit(), "step");
  EXPECT_DOUBLE_EQ(Role(d, "attn.dense")->a_per_unit_ns(), 10'000'000.0);
  EXPECT_DOUBLE_EQ(Role(d, "attn.dense")->b_per_unit_ns(), 10'000'000.0);
  EXPECT_DOUBLE_EQ(Role(d, "comm")->b_per_unit_ns(), 200'000.0);
  EXPECT_EQ(d.moved_role(), "comm");
  // Tokens on one side only: still per step; on both: per token.
  a.mutable_totals()->set_tokens(160);
  EXPECT_EQ(diff::DiffProfiles(a, b).unit(), "step");
  b.mutable_totals()->set_tokens(40);  // 8 tokens a step instead of 16
  d = diff::DiffProfiles(a, b);
  EXPECT_EQ(d.unit(), "token");
  EXPECT_DOUBLE_EQ(Role(d, "attn.dense")->per_unit_ratio(), 2.0);
  EXPECT_EQ(d.moved_role(), "attn.dense");
}

TEST(WorkNormalisedDiff, WarnsAboutDevicesAndAMissingRole) {
  proto::Profile a = Synthetic("a", 100, 100'000'000, 10, 1'000'000);
  proto::Profile b = Synthetic("b", 100, 100'000'000, 0, 0);  // comm gone
  a.add_devices()->set_name("NVIDIA H100 80GB HBM3");
  b.add_devices()->set_name("NVIDIA A100-SXM4-80GB");
  b.mutable_totals()->set_kernel_count(110);  // same amount of work
  proto::Diff d = diff::DiffProfiles(a, b);
  EXPECT_FALSE(HasWarning(d, "work_differs"));
  EXPECT_TRUE(HasWarning(d, "devices_differ"));
  // Per call, a role on one side only has no per-call change: attention did not move.
  EXPECT_EQ(d.moved_role(), "");
  a.mutable_totals()->set_steps(1);
  b.mutable_totals()->set_steps(1);
  d = diff::DiffProfiles(a, b);
  EXPECT_EQ(d.moved_role(), "comm");
  EXPECT_TRUE(HasWarning(d, "role_missing"));
}

}  // namespace
}  // namespace qprof
