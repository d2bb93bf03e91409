// analyze, merge and the report staging through the library API, as the command and the
// Python module call them (api/analyze.h, api/merge.h, api/report_files.h).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "api/analyze.h"
#include "api/diff.h"
#include "api/inputs.h"
#include "api/merge.h"
#include "api/report_files.h"
#include "base/file_util.h"
#include "gtest/gtest.h"

namespace qprof::api {
namespace {

namespace fs = std::filesystem;

std::string TestDataDir() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) return env;
  return std::string(QPROF_SOURCE_DIR) + "/../shared/testdata";
}

std::string Shared(const std::string& rel) {
  const std::string p = TestDataDir() + "/" + rel;
  return fs::exists(p) ? p : "";
}

fs::path TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(AnalysisApi, PartialThenMergeEqualsAnalyzingTheTracesAtOnce) {
  const std::string a = Shared("kineto/a100x2_nccl_allreduce.json.gz");
  const std::string b = Shared("nsys/rtx3080_mock.sqlite");
  if (a.empty() || b.empty()) GTEST_SKIP() << "shared test data not found at " << TestDataDir();
  AnalyzeRequest both;
  both.inputs = {a, b};
  auto whole = Analyze(both);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_FALSE(whole->from_report);
  MergeRequest merge;
  for (const std::string& in : {a, b}) {
    AnalyzeRequest one;
    one.inputs = {in};
    auto partial = AnalyzePartial(one);
    ASSERT_TRUE(partial.ok()) << partial.status();
    EXPECT_NE(partial->summary.find("partial profile of 1 traces"), std::string::npos);
    merge.bytes.push_back(partial->bytes);
    merge.byte_names.push_back(in);
  }
  std::vector<std::string> notes;
  merge.analysis.on_note = [&](const std::string& s) { notes.push_back(s); };
  auto merged = Merge(merge);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->totals().kernel_time_ns(), whole->profile.totals().kernel_time_ns());
  EXPECT_EQ(merged->totals().kernel_count(), whole->profile.totals().kernel_count());
  ASSERT_EQ(merged->kernels_size(), whole->profile.kernels_size());
  for (int i = 0; i < merged->kernels_size(); ++i) {
    EXPECT_EQ(merged->kernels(i).name(), whole->profile.kernels(i).name());
    EXPECT_EQ(merged->kernels(i).time_ns(), whole->profile.kernels(i).time_ns());
  }
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("merged 2 partial profiles", 0), 0u) << notes[0];
  // A partial that is not one is named in the error.
  merge.bytes.push_back("not a partial");
  merge.byte_names.push_back("junk.qprofile");
  auto bad = Merge(merge);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("junk.qprofile"), std::string::npos) << bad.status();
}

TEST(AnalysisApi, ProfileJsonIsReadBackAndRefusesWhatNeedsTheTrace) {
  const std::string trace = Shared("kineto/a100_triton_example.json.gz");
  if (trace.empty()) GTEST_SKIP() << "shared test data not found at " << TestDataDir();
  const fs::path dir = TempDir("qprof_api_profile_json");
  AnalyzeRequest r;
  r.inputs = {trace};
  r.perfetto = true;
  auto first = Analyze(r);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_NE(first->perfetto_json.find("\"traceEvents\""), std::string::npos);
  ReportFiles files;
  const std::string json = (dir / "p.json").string();
  ASSERT_TRUE(StageProfileReports(first->profile, {json, ""}, &files).ok());
  EXPECT_FALSE(fs::exists(json));  // staged, not yet in place
  auto written = files.Commit();
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->size(), 1u);
  EXPECT_EQ((*written)[0].path, json);
  ASSERT_TRUE(LooksLikeProfileJson(json));

  AnalyzeRequest back;
  back.inputs = {json};
  back.label = "relabelled";
  auto again = Analyze(back);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->from_report);
  EXPECT_EQ(again->profile.label(), "relabelled");
  EXPECT_EQ(again->profile.totals().kernel_time_ns(), first->profile.totals().kernel_time_ns());
  back.device = "h100";
  auto refused = Analyze(back);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--device needs the trace"), std::string::npos)
      << refused.status();
  back.device.clear();
  auto partial = AnalyzePartial(back);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("--partial needs the trace"), std::string::npos);
  back.inputs.push_back(trace);
  EXPECT_FALSE(Analyze(back).ok());  // a report cannot be combined with other inputs
  fs::remove_all(dir);
}

TEST(AnalysisApi, ReportFilesAreAllOrNone) {
  const fs::path dir = TempDir("qprof_api_report_files");
  {
    ReportFiles files;
    ASSERT_TRUE(files.Add((dir / "a.json").string(), "{}").ok());
    ASSERT_TRUE(files.Add("-", "to stdout").ok());
    EXPECT_FALSE(files.Add("-", "twice").ok());  // one standard output
    // A report that cannot be staged fails the operation before anything is committed.
    EXPECT_FALSE(files.Add((dir / "no/such/folder/b.html").string(), "<html>").ok());
  }  // dropped without Commit, as the command does on an error
  EXPECT_FALSE(fs::exists(dir / "a.json"));
  EXPECT_TRUE(fs::is_empty(dir)) << "a staged temporary was left behind";
  ReportFiles files;
  ASSERT_TRUE(files.Add((dir / "a.json").string(), "{}").ok());
  auto w = files.Commit();
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE(fs::exists(dir / "a.json"));
  fs::remove_all(dir);
}

// Outputs are checked before any work: a folder, a missing folder, one file for two reports,
// two reports on standard output; each error names the option or the path.
TEST(AnalysisApi, OutputsAreCheckedBeforeAnyWork) {
  const fs::path dir = TempDir("qprof_api_outputs");
  const std::string out = (dir / "out.html").string();
  EXPECT_TRUE(CheckOutputs({{"--json", (dir / "p.json").string()}, {"--html", out},
                            {"--perfetto", ""}}).ok());
  absl::Status folder = CheckOutputs({{"--html", dir.string()}});
  EXPECT_EQ(folder.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(folder.message(), dir.string() + ": is a directory, not a file to write");
  absl::Status missing = CheckOutputs({{"--json", (dir / "no" / "p.json").string()}});
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  absl::Status same = CheckOutputs({{"--json", out}, {"--html", (dir / "." / "out.html").string()}});
  EXPECT_EQ(same.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(same.message().find("--json and --html both name"), std::string::npos) << same;
  EXPECT_FALSE(CheckOutputs({{"--json", "-"}, {"--perfetto", "-"}}).ok());
  // The writers word the folder error the same way (the Python module writes through them).
  absl::Status write = WriteFileAtomic(dir.string(), "x");
  EXPECT_EQ(write.message(), folder.message());
  fs::remove_all(dir);
}

TEST(AnalysisApi, AnInputGivenTwiceIsRefused) {
  const fs::path dir = TempDir("qprof_api_twice");
  const std::string t = (dir / "t.json").string();
  ASSERT_TRUE(WriteFileAtomic(t, "{\"traceEvents\": []}").ok());
  EXPECT_TRUE(CheckDistinctInputs({t}).ok());
  absl::Status twice = CheckDistinctInputs({t, (dir / "." / "t.json").string()});
  EXPECT_EQ(twice.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("given twice (also as " + t + ")"), std::string::npos) << twice;
  AnalyzeRequest r;
  r.inputs = {t, t};
  EXPECT_FALSE(Analyze(r).ok());
  fs::remove_all(dir);
}

// Two sides whose labels agree are told apart by what differs, in order: device, folder,
// format, file name.
TEST(AnalysisApi, SideLabelsSayWhatDiffers) {
  proto::Profile a, b;
  a.add_devices()->set_name("NVIDIA H100 80GB HBM3");
  b.add_devices()->set_name("AMD Instinct MI300X");
  EXPECT_EQ(SideLabels(a, b, "/x/h100/q.json.gz", "/x/mi300/q.json.gz"),
            std::make_pair(std::string("h100"), std::string("mi300x")));
  b.mutable_devices(0)->set_name("NVIDIA H100 80GB HBM3");
  EXPECT_EQ(SideLabels(a, b, "/x/before/q.json", "/x/after/q.json"),
            std::make_pair(std::string("before"), std::string("after")));
  a.mutable_run()->set_format("mxfp4");
  b.mutable_run()->set_format("nvfp4");
  EXPECT_EQ(SideLabels(a, b, "/x/q.json", "/x/q.json"),
            std::make_pair(std::string("mxfp4"), std::string("nvfp4")));
  b.mutable_run()->set_format("mxfp4");
  EXPECT_EQ(SideLabels(a, b, "/x/q.json", "/x/q.json"),
            std::make_pair(std::string("A"), std::string("B")));
}

}  // namespace
}  // namespace qprof::api
