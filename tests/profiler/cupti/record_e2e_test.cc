// `qprof record` end to end without a GPU: the real qprof, the real libqprof_inject.so
// (collector and writer), and stand-ins for libcuda.so.1 and libcupti.so.13 built from
// the fake GPU (fake/). The test program logs what it launched; each trace is held
// against that log. The stand-in driver loads the injection library in cuInit, as the
// real driver does with CUDA_INJECTION64_PATH (see fake/libcuda_standin.cc for what is
// emulated and docs/collector.md for what a GPU run must still confirm).
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "proto/trace_io.h"

namespace qprof {
namespace {

namespace fs = std::filesystem;

struct RecordRun {
  int exit_code = -1;
  std::string output;   // qprof's stdout and stderr
  std::string dir;      // the test's folder; traces are in <dir>/out
  std::vector<std::string> log;  // the program's own log lines
};

// `separator` comes between qprof's options and the command: "--" or nothing, as with
// nsys profile.
RecordRun Record(const std::string& scenario, const std::string& env = "",
                 const std::string& flags = "", const std::string& separator = "--") {
  static int n = 0;
  RecordRun run;
  run.dir = ::testing::TempDir() + "/record_e2e_" + scenario + "_" + std::to_string(n++);
  fs::remove_all(run.dir);
  fs::create_directories(run.dir);
  const std::string log = run.dir + "/launched.log";
  // --out is relative on purpose: the program may change directory (scenario chdir).
  const std::string cmd = "cd '" + run.dir + "' && env LD_LIBRARY_PATH=" QPROF_FAKE_CUDA_DIR
                          " QPROF_FLUSH_MS=100 QPROF_BUFFER_MB=1 " + env + " " QPROF_BIN
                          " record --out out " + flags + " " + separator + " " QPROF_FAKE_APP " " + scenario +
                          " '" + log + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return run;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), p) != nullptr) run.output += buf.data();
  const int status = pclose(p);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) run.log.push_back(line);
  return run;
}

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string f; std::getline(ss, f, '\t');) out.push_back(f);
  if (!line.empty() && line.back() == '\t') out.push_back("");
  return out;
}

// (kind, name as launched, stream, tid, nvtx path) -> how many.
using Launch = std::tuple<std::string, std::string, uint64_t, uint64_t, std::string>;

std::map<Launch, int> Logged(const RecordRun& run) {
  std::map<Launch, int> out;
  for (const std::string& line : run.log) {
    std::vector<std::string> f = Fields(line);
    if (f.size() < 5) continue;
    const std::string kind = f[0] == "graph" ? "kernel" : f[0];
    ++out[{kind, f[1], std::stoull(f[2]), std::stoull(f[3]), f[4]}];
  }
  return out;
}

std::map<Launch, int> Traced(const proto::Trace& t) {
  std::map<Launch, int> out;
  for (const proto::Activity& a : t.activities()) {
    const std::string kind = a.kind() == proto::ACTIVITY_KIND_KERNEL   ? "kernel"
                             : a.kind() == proto::ACTIVITY_KIND_MEMCPY ? "memcpy"
                                                                       : "memset";
    const std::string name = a.mangled_name().empty() ? a.name() : a.mangled_name();
    ++out[{kind, name, a.stream_id(), a.tid(), a.nvtx_path()}];
  }
  return out;
}

std::vector<std::string> Files(const RecordRun& run, const std::string& suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(run.dir + "/out", ec)) {
    const std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(p);
    }
  }
  return out;
}

// The launches one side has more of than the other, for failure messages.
std::string Difference(const std::map<Launch, int>& traced, const std::map<Launch, int>& logged) {
  std::string out;
  int shown = 0;
  auto show = [&](const char* side, const Launch& l, int n) {
    if (shown++ < 10) {
      out += std::string(side) + " x" + std::to_string(n) + ": " + std::get<0>(l) + " " +
             std::get<1>(l) + " stream " + std::to_string(std::get<2>(l)) + " tid " +
             std::to_string(std::get<3>(l)) + " path '" + std::get<4>(l) + "'\n";
    }
  };
  for (const auto& [l, n] : traced) {
    auto it = logged.find(l);
    if (it == logged.end() || it->second < n) show("only traced", l, n - (it == logged.end() ? 0 : it->second));
  }
  for (const auto& [l, n] : logged) {
    auto it = traced.find(l);
    if (it == traced.end() || it->second < n) show("only logged", l, n - (it == traced.end() ? 0 : it->second));
  }
  return out;
}

#define EXPECT_SAME_LAUNCHES(traced, logged) \
  EXPECT_TRUE((traced) == (logged)) << Difference((traced), (logged))

proto::Trace Read(const std::string& path) {
  absl::StatusOr<proto::Trace> t = ReadTrace(path);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : proto::Trace();
}

std::string LogValue(const RecordRun& run, const std::string& key) {
  for (const std::string& line : run.log) {
    std::vector<std::string> f = Fields(line);
    if (f.size() == 2 && f[0] == key) return f[1];
  }
  return "";
}

TEST(RecordE2eTest, NormalExitTracesEveryLaunchWithItsThreadStreamAndPath) {
  RecordRun run = Record("normal");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  EXPECT_TRUE(Files(run, ".partial").empty());
  const proto::Trace t = Read(traces[0]);
  EXPECT_FALSE(t.truncated());
  const std::map<Launch, int> logged = Logged(run);
  ASSERT_GT(logged.size(), 10u);
  EXPECT_SAME_LAUNCHES(Traced(t), logged);  // every launch once, on its stream, thread, path
  EXPECT_EQ(t.header().collector().buffers_late(), 0u);
  // The file is named by pid and this run's token, both also in the header.
  const proto::ProcessInfo& p = t.header().process();
  EXPECT_EQ(fs::path(traces[0]).filename().string(),
            "qprof-" + std::to_string(p.pid()) + "-" + p.run_token() + ".qtrace");
  // NVTX: the application's path, NCCL's range apart; libcupti named for NVTX.
  int nccl = 0;
  for (const proto::Activity& a : t.activities()) {
    if (a.name().rfind("ncclDevKernel", 0) != 0) continue;
    ++nccl;
    EXPECT_EQ(a.nvtx_domain_paths().at("NCCL"), "ncclAllReduce");
    EXPECT_EQ(a.nvtx_path().rfind("decode/step ", 0), 0u) << a.nvtx_path();
  }
  EXPECT_EQ(nccl, 10);
  EXPECT_EQ(t.ranges_size(), 2 * (1 + 5) + 2 * 5);
  EXPECT_EQ(LogValue(run, "nvtx"), fs::canonical(QPROF_FAKE_CUDA_DIR "/libcupti.so.13").string());
  // The GPU's properties, read from the driver.
  ASSERT_EQ(t.header().devices_size(), 1);
  EXPECT_EQ(t.header().devices(0).name(), "Fake H100 (qprof test stand-in)");
  const proto::CollectorStats& s = t.header().collector();
  EXPECT_EQ(s.records_dropped(), 0u);
  EXPECT_EQ(s.records_written(), static_cast<uint64_t>(t.activities_size()));
  EXPECT_EQ(s.ended_by(), "exit");
  EXPECT_GE(s.buffers_completed(), 2u);  // buffers came back while it ran
  EXPECT_NE(run.output.find("kernels"), std::string::npos) << run.output;
}

// Issue 16, bug 11 (signals) and the streamed writer: SIGKILL cannot be caught; what was
// streamed before it is readable, says it was cut, and every record in it was launched.
// `qprof record CMD ARGS...` without `--`: qprof's options (a value option among them) come
// first, the command and its arguments after; the trace is the same.
TEST(RecordE2eTest, CommandWithoutDoubleDashAsWithNsysProfile) {
  RecordRun run = Record("normal", "", "--duration 0", "");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  EXPECT_SAME_LAUNCHES(Traced(Read(traces[0])), Logged(run));
}

TEST(RecordE2eTest, KilledProgramLeavesACutButReadableTrace) {
  RecordRun run = Record("kill");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("exited with status 137"), std::string::npos) << run.output;
  EXPECT_TRUE(Files(run, ".qtrace").empty());
  std::vector<std::string> cut = Files(run, ".qtrace.partial");
  ASSERT_EQ(cut.size(), 1u) << run.output;
  const proto::Trace t = Read(cut[0]);
  EXPECT_TRUE(t.truncated());
  EXPECT_NE(run.output.find("cut: the process ended without finishing its trace"), std::string::npos)
      << run.output;
  const std::map<Launch, int> logged = Logged(run);
  const std::map<Launch, int> traced = Traced(t);
  int traced_kernels = 0;
  for (const auto& [launch, n] : traced) {
    ASSERT_TRUE(logged.count(launch)) << std::get<1>(launch);
    EXPECT_LE(n, logged.at(launch));
    traced_kernels += n;
  }
  EXPECT_GT(traced_kernels, 0);
  EXPECT_EQ(t.header().process().pid() != 0, true);
}

// Issue 16, bug 11: SIGTERM ends a program that has no handler of its own; the trace is
// still finished, with every launch.
TEST(RecordE2eTest, SigtermStillFinishesTheTrace) {
  RecordRun run = Record("sigterm");
  EXPECT_NE(run.output.find("exited with status 143"), std::string::npos) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  const proto::Trace t = Read(traces[0]);
  EXPECT_FALSE(t.truncated());
  EXPECT_SAME_LAUNCHES(Traced(t), Logged(run));
  EXPECT_EQ(t.header().collector().ended_by(), "signal SIGTERM");
}

// Issue 16, bug 11: a worker forked without exec writes its own trace, named by its own
// pid; it neither overwrites nor corrupts the parent's, which holds every launch.
// Issue 25: "fork" forks before the trace file is open, "fork-late" after (a chunk is
// on disk): the child must leave the parent's open file alone (close its copy of the
// descriptor unwritten) and write its own trace. fork-late fails when the child keeps
// the parent's writer.
void ExpectForkedWorkerGetsItsOwnTrace(const std::string& scenario) {
  SCOPED_TRACE(scenario);
  RecordRun run = Record(scenario);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const std::string child_pid = LogValue(run, "child");
  ASSERT_FALSE(child_pid.empty()) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 2u) << run.output;
  EXPECT_TRUE(Files(run, ".partial").empty());
  int parents = 0, children = 0;
  for (const std::string& f : traces) {
    const proto::Trace t = Read(f);
    const proto::ProcessInfo& p = t.header().process();
    EXPECT_NE(f.find("qprof-" + std::to_string(p.pid()) + "-"), std::string::npos) << f;
    if (std::to_string(p.pid()) == child_pid) {
      ++children;
      EXPECT_NE(p.forked_from_pid(), 0u);
      EXPECT_EQ(t.activities_size(), 0);
      bool said = false;
      for (const std::string& w : t.header().collector().warnings()) {
        said = said || w.find("forked without exec") != std::string::npos;
      }
      EXPECT_TRUE(said);
    } else {
      ++parents;
      EXPECT_SAME_LAUNCHES(Traced(t), Logged(run));  // 100 before and 100 after the fork
    }
  }
  EXPECT_EQ(parents, 1);
  EXPECT_EQ(children, 1);
}

// Issue 16, bug 7, end to end: cudaDeviceReset does not end the trace.

TEST(RecordE2eTest, ForkedWorkerGetsItsOwnTrace) { ExpectForkedWorkerGetsItsOwnTrace("fork"); }

TEST(RecordE2eTest, ForkedWorkerLeavesTheParentsOpenTraceAlone) {
  ExpectForkedWorkerGetsItsOwnTrace("fork-late");
}

TEST(RecordE2eTest, DeviceResetDoesNotEndTheTrace) {
  RecordRun run = Record("reset");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_SAME_LAUNCHES(Traced(Read(traces[0])), Logged(run));
}

// Issue 16, bug 6: the program changes directory before CUDA starts; its trace still
// lands in --out (passed as an absolute path).
TEST(RecordE2eTest, ProgramThatChangesDirectoryStillWritesIntoOut) {
  RecordRun run = Record("chdir");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  EXPECT_SAME_LAUNCHES(Traced(Read(traces[0])), Logged(run));
}

TEST(RecordE2eTest, ProgramThatLaunchesNothing) {
  RecordRun run = Record("none");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  const proto::Trace t = Read(traces[0]);
  EXPECT_EQ(t.activities_size(), 0);
  EXPECT_EQ(t.header().collector().ended_by(), "exit");
  EXPECT_NE(run.output.find("no GPU kernels were recorded"), std::string::npos) << run.output;
}

TEST(RecordE2eTest, ProgramThatNeverInitialisesCuda) {
  RecordRun run = Record("nocuda");
  EXPECT_EQ(run.exit_code, 2) << run.output;  // bad input: nothing to read
  EXPECT_NE(run.output.find("the command wrote no trace"), std::string::npos) << run.output;
}

// Issue 16, bug 5: QPROF_RECORD_NO_NVTX=1 keeps NVTX away from CUPTI in the program
// (the collector used to point NVTX at libcupti itself, because the variable was unset).
TEST(RecordE2eTest, NoNvtxReallyTurnsNvtxOff) {
  RecordRun run = Record("normal", "QPROF_RECORD_NO_NVTX=1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(LogValue(run, "nvtx"), "-");
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u);
  const proto::Trace t = Read(traces[0]);
  EXPECT_EQ(t.ranges_size(), 0);
  for (const proto::Activity& a : t.activities()) ASSERT_EQ(a.nvtx_path(), "");
}

// Issue 16, bug 1 and issue 25, end to end: the metrics pass's ranges are tied to the
// kernels launched, graph replays included (one range per node, no launch callbacks; the
// captured launches make none), so the join gives every kernel its own metrics. What the
// pass costs is printed before it starts, by qprof and again by the collector when the
// chip is known; and nothing calls the driver inside cuInit (the stand-in driver says so
// when something does: fails when the injection library does not tell the collector it
// starts inside cuInit).
TEST(RecordE2eTest, MetricsPassJoinsOntoEveryKernel) {
  // Every kernel of the run gets a range (the default, 2048 per context, is fewer).
  RecordRun run = Record("normal", "QPROF_METRIC_KERNELS=20000", "--metrics");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("joined 1 metrics pass file"), std::string::npos) << run.output;
  EXPECT_TRUE(Files(run, ".metrics.qtrace").empty());  // folded into the trace
  const size_t cost = run.output.find("qprof: metrics pass (default set, ");
  const size_t pass = run.output.find("qprof: metrics pass: running the command again");
  ASSERT_NE(cost, std::string::npos) << run.output;
  EXPECT_LT(cost, pass) << run.output;
  EXPECT_NE(run.output.find("on GH100 (H100, H200, GH200): 3 counter passes"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("(--metrics=full adds SM throughput: 10 passes on GH100)"),
            std::string::npos) << run.output;
  EXPECT_NE(run.output.find("on chip GH100: 3 counter passes"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("inside cuInit"), std::string::npos) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u);
  const proto::Trace t = Read(traces[0]);
  const proto::CollectorStats& s = t.header().collector();
  EXPECT_TRUE(s.metrics_available()) << s.DebugString();
  EXPECT_EQ(s.cupti_detail().metric_passes(), 3u);
  EXPECT_EQ(s.cupti_detail().metric_set(), "default");
  int kernels = 0, graph_kernels = 0;
  for (const proto::Activity& a : t.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    graph_kernels += a.graph_id() != 0;
    ASSERT_TRUE(a.metrics().has_tensor_pipe_pct()) << a.name();
    EXPECT_DOUBLE_EQ(a.metrics().tensor_pipe_pct(),
                     a.name().find("mma") != std::string::npos ? 80.0 : 0.5) << a.name();
  }
  EXPECT_EQ(graph_kernels, 2 * 2 * 3);  // two threads, two replays of three kernels
  EXPECT_EQ(s.metrics_kernels_matched(), static_cast<uint64_t>(kernels));
  EXPECT_EQ(s.metrics_kernels_unmatched(), 0u);
}

// `--metrics full` (or =full): the full set, with its cost said before it starts.
TEST(RecordE2eTest, FullMetricsSayTheirCost) {
  RecordRun run = Record("none", "", "--metrics full");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("metrics pass (full set"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(": 10 counter passes"), std::string::npos) << run.output;
}

// Counters refused: the trace pass is kept, the reason and the fix are printed.
TEST(RecordE2eTest, MetricsRefusedKeepTheTraceAndSayHowToAllowThem) {
  RecordRun run = Record("normal", "QPROF_FAKE_COUNTERS=denied", "--metrics");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("metrics unavailable"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos)
      << run.output;
  // The summary falls back to the other evidence (here kernel-name rules).
  EXPECT_NE(run.output.find("tensor-pipe % not measured"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("name_rule"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("name not seen in the metrics pass"), std::string::npos) << run.output;
}

// Issue 16, bug 8, end to end: another profiler holds CUPTI. Nothing is taken from it;
// the trace says why it is empty.
TEST(RecordE2eTest, AnotherProfilerAttachedGivesAnEmptyTraceSayingWhy) {
  RecordRun run = Record("normal", "QPROF_FAKE_SUBSCRIBER='Nsight Systems'");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  const proto::Trace t = Read(traces[0]);
  EXPECT_EQ(t.activities_size(), 0);
  EXPECT_EQ(t.header().collector().subscriber_conflict(), "Nsight Systems");
  EXPECT_NE(run.output.find("another CUPTI client held the GPU: Nsight Systems"), std::string::npos)
      << run.output;
}

// Issue 35: `qprof record --capture-range=cudaProfilerApi` on a serving loop records only
// the step between cudaProfilerStart and cudaProfilerStop (the program logs that step as
// kernel/graph lines and everything else as "outside"); the trace says which range it
// holds. stop-shutdown (nsys's default) ends the program with SIGTERM once the range
// ended, which is the run finishing as asked (exit 0); stop lets it run on.
TEST(RecordE2eTest, CaptureRangeRecordsOnlyTheBracketedWork) {
  for (const std::string& end : {std::string(""), std::string("--capture-range-end=stop")}) {
    SCOPED_TRACE(end);
    RecordRun run = Record("capture", "", "--capture-range=cudaProfilerApi " + end);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    std::vector<std::string> traces = Files(run, ".qtrace");
    ASSERT_EQ(traces.size(), 1u) << run.output;
    const proto::Trace t = Read(traces[0]);
    EXPECT_SAME_LAUNCHES(Traced(t), Logged(run));
    EXPECT_EQ(Logged(run).size(), 5u);  // two eager kernels (5 launches) and the graph's three
    const auto& extra = t.header().run().extra();
    EXPECT_EQ(extra.at("capture_range"), "cudaProfilerApi");
    EXPECT_EQ(extra.at("capture_ranges"), "1");
    EXPECT_EQ(t.header().collector().ended_by(), "capture range end");
    EXPECT_NE(run.output.find("capture range cudaProfilerApi: 1 range(s) recorded"),
              std::string::npos) << run.output;
    const bool done = std::find(run.log.begin(), run.log.end(), "done") != run.log.end();
    if (end.empty()) {
      EXPECT_NE(run.output.find("was ended at the end of the capture range"), std::string::npos)
          << run.output;
      EXPECT_FALSE(done);  // ended during its 300 ms after the range
    } else {
      EXPECT_TRUE(done);
      EXPECT_GE(t.header().collector().records_outside_window(), 20u + 3u);
    }
  }
}

TEST(RecordE2eTest, NvtxCaptureRangeRecordsOnlyTheBracketedWork) {
  RecordRun run = Record("capture-nvtx", "", "--capture-range=nvtx --nvtx-capture=profile");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  const proto::Trace t = Read(traces[0]);
  EXPECT_SAME_LAUNCHES(Traced(t), Logged(run));
  EXPECT_EQ(t.header().run().extra().at("capture_range"), "nvtx:profile");
}

// The metrics pass profiles the same bracketed work (the range profiler's range is pushed
// only inside the capture range), so every captured kernel gets its metrics.
TEST(RecordE2eTest, CaptureRangeMetricsPassProfilesTheSameWork) {
  RecordRun run = Record("capture", "", "--metrics --capture-range=cudaProfilerApi");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::vector<std::string> traces = Files(run, ".qtrace");
  ASSERT_EQ(traces.size(), 1u) << run.output;
  const proto::Trace t = Read(traces[0]);
  const proto::CollectorStats& s = t.header().collector();
  EXPECT_TRUE(s.metrics_available()) << s.DebugString();
  EXPECT_EQ(s.metrics_kernels_matched(), 5u + 3u) << s.DebugString();
  EXPECT_EQ(s.metrics_kernels_unmatched(), 0u);
  EXPECT_EQ(run.output.find("metrics pass exited with status"), std::string::npos) << run.output;
}

TEST(RecordE2eTest, CaptureOptionsThatDoNotParseAreOneErrorLine) {
  RecordRun run = Record("none", "", "--capture-range=cudaProfilerAPI");
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("qprof: error: --capture-range must be none, cudaProfilerApi"),
            std::string::npos) << run.output;
  RecordRun nvtx = Record("none", "", "--capture-range=nvtx");
  EXPECT_EQ(nvtx.exit_code, 2) << nvtx.output;
  EXPECT_NE(nvtx.output.find("--nvtx-capture"), std::string::npos) << nvtx.output;
}

}  // namespace
}  // namespace qprof
