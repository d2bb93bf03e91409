// `qprof record` pieces, and the command itself in a bad environment (no GPU here).
#include "api/record_support.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace qprof::api {
namespace {

constexpr char kLddOk[] =
    "\tlinux-vdso.so.1 (0x00007ffd)\n"
    "\tlibcupti.so.13 => /usr/local/cuda/lib64/libcupti.so.13 (0x00007f1)\n"
    "\tlibprotobuf.so.32 => /lib/x86_64-linux-gnu/libprotobuf.so.32 (0x00007f2)\n"
    "\t/lib64/ld-linux-x86-64.so.2 (0x00007f3)\n";
constexpr char kLddNoCupti[] =
    "\tlibcupti.so.13 => not found\n"
    "\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f2)\n";

TEST(RecordSupportTest, ParsesLddOutput) {
  LddResult r = ParseLdd(kLddOk);
  EXPECT_TRUE(r.missing.empty());
  EXPECT_EQ(r.found.at("libcupti.so.13"), "/usr/local/cuda/lib64/libcupti.so.13");
  EXPECT_TRUE(CheckDependencies("libqprof_inject.so", r).ok());
}

TEST(RecordSupportTest, MissingCuptiIsOneClearMessage) {
  absl::Status s = CheckDependencies("/x/libqprof_inject.so", ParseLdd(kLddNoCupti));
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("libcupti.so.13 not found"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("LD_LIBRARY_PATH"), absl::string_view::npos) << s;
  EXPECT_EQ(s.message().find('\n'), absl::string_view::npos);
}

TEST(RecordSupportTest, EnvironmentForBothPasses) {
  RecordEnvOptions o;
  o.inject_library = "/b/libqprof_inject.so";
  o.cupti_library = "/c/libcupti.so.13";
  o.out_dir = "/abs/out";
  o.run_token = "1234567890";
  o.metrics_pass = true;
  o.duration_s = 2.5;
  auto env = RecordEnvironment(o);
  EXPECT_EQ(env.at("CUDA_INJECTION64_PATH"), "/b/libqprof_inject.so");
  EXPECT_EQ(env.at("NVTX_INJECTION64_PATH"), "/c/libcupti.so.13");
  EXPECT_EQ(env.at("QPROF_MODE"), "metrics");
  EXPECT_EQ(env.at("QPROF_DURATION_S"), "2.5");
  EXPECT_EQ(env.at("QPROF_RUN_TOKEN"), "1234567890");
  EXPECT_EQ(env.count("QPROF_NVTX"), 0u);
  o.metrics_pass = false;
  o.duration_s = 0;
  o.cupti_library = "";
  auto trace = RecordEnvironment(o);
  EXPECT_EQ(trace.at("QPROF_MODE"), "trace");
  EXPECT_EQ(trace.count("NVTX_INJECTION64_PATH"), 0u);
  EXPECT_EQ(trace.count("QPROF_DURATION_S"), 0u);
}

// Issue 16, bug 5: turning NVTX off must tell the collector too, which otherwise points
// NVTX at libcupti itself precisely because NVTX_INJECTION64_PATH is unset.
TEST(RecordSupportTest, NoNvtxTellsTheCollector) {
  RecordEnvOptions o;
  o.inject_library = "/b/l.so";
  o.cupti_library = "/c/libcupti.so.13";
  o.out_dir = "/abs";
  o.nvtx = false;
  auto env = RecordEnvironment(o);
  EXPECT_EQ(env.count("NVTX_INJECTION64_PATH"), 0u);
  EXPECT_EQ(env.at("QPROF_NVTX"), "off");
}

// Issue 16, bug 6: the folder is passed absolute (the program may change directory).
TEST(RecordSupportTest, OutputFolderIsPassedAbsolute) {
  RecordEnvOptions o;
  o.out_dir = "rel/out";
  auto env = RecordEnvironment(o);
  EXPECT_EQ(env.at("QPROF_OUT_DIR"), (std::filesystem::current_path() / "rel/out").string());
  EXPECT_EQ(AbsolutePath("/x/../y"), "/y");
}

TEST(RecordSupportTest, RunTokensDiffer) {
  const std::string a = NewRunToken();
  const std::string b = NewRunToken();
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 10u);
  EXPECT_EQ(a.find_first_not_of("0123456789"), std::string::npos);
}

TEST(RecordSupportTest, FindsTheLibraryAndNamesWhereItLooked) {
  unsetenv("QPROF_INJECT_LIB");
  const std::string dir = ::testing::TempDir() + "/record_find";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto missing = FindInjectLibrary(dir, "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound) << missing.value_or("");
  EXPECT_NE(missing.status().message().find(dir), absl::string_view::npos);
  std::ofstream(dir + "/libqprof_inject.so") << "x";
  auto found = FindInjectLibrary(dir, "");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(*found, dir + "/libqprof_inject.so");
}

// Issue 16, bug 6: only this run's files, by token; an old file of a reused pid is not
// taken for new, and cut (.partial) traces are listed apart.
TEST(RecordSupportTest, ListsThisRunsTracesByToken) {
  const std::string dir = ::testing::TempDir() + "/record_list";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* f : {"qprof-12-555.qtrace", "qprof-12-555.metrics.qtrace", "qprof-7-555.qtrace",
                        "qprof-12-444.qtrace",  // same pid, an earlier run
                        "qprof-12.qtrace", "other-1-555.qtrace", "qprof-x-555.qtrace",
                        "qprof-9-555.qtrace.partial", "qprof-9-555.metrics.qtrace.partial"}) {
    std::ofstream(dir + "/" + f) << "x";
  }
  RunTraces t = ListRunTraces(dir, "555", false);
  EXPECT_EQ(t.complete, (std::set<std::string>{dir + "/qprof-12-555.qtrace", dir + "/qprof-7-555.qtrace"}));
  EXPECT_EQ(t.cut, (std::set<std::string>{dir + "/qprof-9-555.qtrace.partial"}));
  RunTraces m = ListRunTraces(dir, "555", true);
  EXPECT_EQ(m.complete, (std::set<std::string>{dir + "/qprof-12-555.metrics.qtrace"}));
  EXPECT_EQ(m.cut, (std::set<std::string>{dir + "/qprof-9-555.metrics.qtrace.partial"}));
  EXPECT_TRUE(ListRunTraces(dir, "444", false).complete.count(dir + "/qprof-12-444.qtrace"));
}

// The real command on this machine: without a driver it must refuse with one line.
TEST(RecordCommandTest, NoGpuGivesOneClearMessage) {
#ifndef QPROF_TEST_WITH_CUDA
  GTEST_SKIP() << "a build without CUDA refuses `record` before looking for a driver";
#endif
  if (std::system("test -e /dev/nvidiactl") == 0) GTEST_SKIP() << "a GPU is present";
  const std::string qprof = std::string(QPROF_BINARY_DIR) + "/cli/qprof";
  if (!std::filesystem::exists(qprof)) GTEST_SKIP() << "qprof not built at " << qprof;
  std::string out;
  FILE* p = popen((qprof + " record -- /bin/true 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::array<char, 1024> buf;
  while (fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  int status = pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << out;
  EXPECT_EQ(out.rfind("qprof: error: no NVIDIA driver", 0), 0u) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

// Issue 35: capture options reach the injection library through the environment, as nsys
// spells them, and only when asked for; ones that do not parse or do not go together are
// one line.
TEST(RecordSupportTest, CaptureRangeEnvironment) {
  RecordEnvOptions o;
  o.inject_library = "/x/libqprof_inject.so";
  o.out_dir = "/tmp/out";
  EXPECT_EQ(RecordEnvironment(o).count("QPROF_CAPTURE_RANGE"), 0u);
  o.capture.capture_range = "cudaProfilerApi";
  o.capture.delay_s = 2.5;
  auto env = RecordEnvironment(o);
  EXPECT_EQ(env["QPROF_CAPTURE_RANGE"], "cudaProfilerApi");
  EXPECT_EQ(env["QPROF_CAPTURE_RANGE_END"], "stop-shutdown");  // nsys's default
  EXPECT_EQ(env["QPROF_DELAY_S"], "2.5");
  o.capture.capture_range = "nvtx";
  o.capture.nvtx_capture = "profile@engine";
  o.capture.capture_range_end = "repeat:3";
  env = RecordEnvironment(o);
  EXPECT_EQ(env["QPROF_NVTX_CAPTURE"], "profile@engine");
  EXPECT_EQ(env["QPROF_CAPTURE_RANGE_END"], "repeat:3");
}

TEST(RecordSupportTest, CaptureOptionsAreChecked) {
  auto check = [](const std::string& range, const std::string& nvtx, const std::string& end) {
    CaptureOptions o;
    o.capture_range = range;
    o.nvtx_capture = nvtx;
    o.capture_range_end = end;
    return CheckCaptureOptions(o);
  };
  EXPECT_TRUE(check("", "", "").ok());
  EXPECT_TRUE(check("cudaProfilerApi", "", "stop").ok());
  EXPECT_TRUE(check("nvtx", "step@*", "repeat-shutdown:2").ok());
  EXPECT_TRUE(check("nvtx:step", "", "").ok());
  EXPECT_FALSE(check("cudaprofilerapi", "", "").ok());
  EXPECT_FALSE(check("nvtx", "", "").ok());          // which range?
  EXPECT_FALSE(check("cudaProfilerApi", "step", "").ok());  // --nvtx-capture without nvtx
  EXPECT_FALSE(check("nvtx:step", "step", "").ok());  // named twice
  EXPECT_FALSE(check("", "", "stop").ok());           // an end without a range
  EXPECT_FALSE(check("cudaProfilerApi", "", "repeat:0").ok());
  CaptureOptions negative;
  negative.delay_s = -1;
  EXPECT_FALSE(CheckCaptureOptions(negative).ok());
}

}  // namespace
}  // namespace qprof::api
