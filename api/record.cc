#include "api/record.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "api/record_support.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#ifdef QPROF_API_WITH_CUDA
#include "profiler/cupti/cupti_collector.h"
#include "profiler/cupti/metrics_join.h"
#endif
#include "proto/trace_io.h"

namespace qprof::api {
namespace {

std::string ExeDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string RunCapture(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buf;
  while (fgets(buf.data(), buf.size(), pipe) != nullptr) out += buf.data();
  pclose(pipe);
  return out;
}

// True when `command` (a path or a name found on PATH) is the running qprof binary.
bool IsThisBinary(const std::string& command) {
  std::string path = command;
  if (command.find('/') == std::string::npos) {
    path = RunCapture("command -v '" + command + "' 2>/dev/null");
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  }
  std::error_code ec;
  return !path.empty() &&
         std::filesystem::equivalent(path, "/proc/self/exe", ec) && !ec;
}

// Waits for processes reparented to us (we are their subreaper), for up to `seconds`.
// Returns how many were still running at the end.
int WaitForOrphans(int seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(-1, &status, WNOHANG);
    if (done < 0 && errno == ECHILD) return 0;  // none left
    if (done > 0) continue;
    if (std::chrono::steady_clock::now() >= deadline) {
      int left = 0;
      // Count without waiting: the ones still there are not ours to stop.
      while (waitpid(-1, &status, WNOHANG) == 0 && left == 0) ++left;
      return left;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Runs the command with `env` added; returns its exit status (128+signal if killed).
absl::StatusOr<int> RunChild(const std::vector<std::string>& command,
                             const std::map<std::string, std::string>& env, const NoteFn& note) {
  // Orphaned descendants (a forked worker outliving the command) come back to us.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "qprof: error: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  // Ctrl-C goes to the child (same process group); we wait for it and still summarise.
  struct sigaction ignore = {}, old_int = {}, old_quit = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WaitForOrphans(kOrphanWaitS) > 0 && note) {
    note(fmt::format("processes started by {} were still running {} s after it ended; their "
                     "traces are not finished", command[0], kOrphanWaitS));
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

absl::Status JoinMetricsPass(const std::set<std::string>& traces,
                             const std::set<std::string>& metric_files) {
#ifdef QPROF_API_WITH_CUDA
  // Match processes of the two runs by their order of start; with a different number of
  // processes, every trace gets the metrics of all processes (joined by kernel name).
  std::vector<proto::Trace> metrics;
  for (const std::string& f : metric_files) {
    ASSIGN_OR_RETURN(proto::Trace t, ReadTrace(f));
    metrics.push_back(std::move(t));
  }
  auto by_start = [](const proto::Trace& a, const proto::Trace& b) {
    return a.header().run().start_unix_ns() < b.header().run().start_unix_ns();
  };
  std::sort(metrics.begin(), metrics.end(), by_start);
  std::vector<std::pair<std::string, proto::Trace>> runs;
  for (const std::string& f : traces) {
    ASSIGN_OR_RETURN(proto::Trace t, ReadTrace(f));
    runs.emplace_back(f, std::move(t));
  }
  std::sort(runs.begin(), runs.end(),
            [&](const auto& a, const auto& b) { return by_start(a.second, b.second); });
  proto::Trace merged;
  for (const proto::Trace& m : metrics) {
    merged.mutable_header()->mutable_collector()->MergeFrom(m.header().collector());
    for (const proto::Activity& a : m.activities()) *merged.add_activities() = a;
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    const proto::Trace& source = metrics.size() == runs.size() ? metrics[i] : merged;
    profiler::cupti::JoinKernelMetrics(source, &runs[i].second);
    RETURN_IF_ERROR(WriteTrace(runs[i].second, runs[i].first));
  }
  return absl::OkStatus();
#else
  (void)traces;
  (void)metric_files;
  return absl::UnimplementedError("metrics join needs a CUDA build");
#endif
}

// Before the metrics pass: what it will cost, per kind of GPU the trace pass ran on, from
// libcupti's own pass scheduling offline (profiler/cupti, MetricPassCostFor).
void NoteMetricsCost(const std::set<std::string>& trace_files, const std::string& set_name,
                     const NoteFn& note) {
#ifdef QPROF_API_WITH_CUDA
  if (!note) return;
  profiler::cupti::MetricSet set = profiler::cupti::MetricSet::kDefault;
  profiler::cupti::ParseMetricSet(set_name, &set);
  std::set<std::pair<int, int>> capabilities;
  for (const std::string& f : trace_files) {
    absl::StatusOr<proto::Trace> t = ReadTrace(f);
    if (!t.ok()) continue;
    for (const proto::DeviceInfo& d : t->header().devices()) {
      if (d.kind() == "gpu" && d.cc_major() > 0) capabilities.insert({d.cc_major(), d.cc_minor()});
    }
  }
  if (capabilities.empty()) {
    note(fmt::format("metrics pass ({} set): the trace pass recorded no GPU, so its cost is "
                     "said when it starts", profiler::cupti::MetricSetName(set)));
  }
  for (const auto& [major, minor] : capabilities) {
    absl::StatusOr<profiler::cupti::MetricPassCost> cost =
        profiler::cupti::MetricPassCostFor(major, minor, set);
    if (!cost.ok()) {
      note(fmt::format("metrics pass ({} set) on compute capability {}.{}: cost not known "
                       "before it starts ({})", profiler::cupti::MetricSetName(set), major,
                       minor, cost.status().message()));
      continue;
    }
    note(fmt::format("metrics pass ({} set, {} metrics) on {} ({}): {} counter passes, so "
                     "every kernel is replayed {} times with its memory saved and restored",
                     profiler::cupti::MetricSetName(set), cost->metrics.size(), cost->chip,
                     cost->products, cost->passes, cost->passes));
    if (set == profiler::cupti::MetricSet::kDefault) {
      absl::StatusOr<profiler::cupti::MetricPassCost> full =
          profiler::cupti::MetricPassCostFor(major, minor, profiler::cupti::MetricSet::kFull);
      if (full.ok()) {
        note(fmt::format("(--metrics=full adds SM throughput: {} passes on {})", full->passes,
                         full->chip));
      }
    }
  }
#else
  (void)trace_files;
  (void)set_name;
  (void)note;
#endif
}

// With --capture-range-end stop-shutdown or repeat-shutdown:N the injection library ends
// the program with SIGTERM once the last range ended, as nsys does: that is the run
// finishing as asked, not the program failing. True when a trace of this run says so.
bool EndedByCaptureRange(const RecordRequest& o, int code, const std::set<std::string>& files) {
  const std::string& end = o.capture.capture_range_end;
  const bool shutdown = end.empty() || end == "stop-shutdown" || end.rfind("repeat-shutdown", 0) == 0;
  if (!shutdown || o.capture.capture_range.empty() || o.capture.capture_range == "none" ||
      code != 128 + SIGTERM) {
    return false;
  }
  for (const std::string& f : files) {
    absl::StatusOr<proto::Trace> t = ReadTrace(f);
    if (t.ok() && t->header().collector().ended_by() == "capture range end") return true;
  }
  return false;
}

// What the capture options will do, said before the program starts.
void NoteCapture(const CaptureOptions& c, const std::function<void(const std::string&)>& note) {
  if (!c.capture_range.empty() && c.capture_range != "none") {
    const std::string range = c.capture_range == "nvtx" ? "nvtx:" + c.nvtx_capture : c.capture_range;
    const std::string end = c.capture_range_end.empty() ? "stop-shutdown" : c.capture_range_end;
    note(fmt::format("only work launched inside {} capture ranges is recorded (range end: {}{})",
                     range, end,
                     end == "stop-shutdown" || end.rfind("repeat-shutdown", 0) == 0
                         ? ", then the program is ended with SIGTERM"
                         : ""));
  }
  if (c.delay_s > 0) note(fmt::format("nothing is recorded in the first {} s (--delay)", c.delay_s));
}

// The second run with hardware counters, joined onto the first run's traces.
absl::Status RunMetricsPass(const RecordRequest& o, RecordEnvOptions env, const RunTraces& traces) {
  auto note = [&o](const std::string& line) {
    if (o.on_note) o.on_note(line);
  };
  if (!o.metric_set.empty() && o.metric_set != "default" && o.metric_set != "full") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown metric set '", o.metric_set, "': default or full"));
  }
  NoteMetricsCost(traces.complete, o.metric_set, o.on_note);
  note("metrics pass: running the command again with hardware counters (kernel replay, "
       "slower)");
  env.metrics_pass = true;
  std::map<std::string, std::string> metrics_env = RecordEnvironment(env);
  metrics_env["QPROF_METRIC_SET"] = o.metric_set.empty() ? "default" : o.metric_set;
  ASSIGN_OR_RETURN(int mcode, RunChild(o.command, metrics_env, o.on_note));
  const RunTraces metric_files = ListRunTraces(env.out_dir, env.run_token, true);
  if (mcode != 0 && !EndedByCaptureRange(o, mcode, metric_files.complete)) {
    note(fmt::format("metrics pass exited with status {}", mcode));
  }
  if (metric_files.complete.empty()) {
    note("the metrics pass wrote no metrics; traces have times only");
  } else {
    RETURN_IF_ERROR(JoinMetricsPass(traces.complete, metric_files.complete));
    // The metrics now live in the traces; the pass files have no usable times.
    for (const std::string& f : metric_files.complete) std::remove(f.c_str());
    note(fmt::format("joined {} metrics pass file(s) into the traces",
                     metric_files.complete.size()));
  }
  for (const std::string& f : metric_files.cut) std::remove(f.c_str());
  return absl::OkStatus();
}

// The traces a run wrote, read back, and their analysis (or why there is none).
absl::StatusOr<RecordResult> LoadRecorded(const RunTraces& traces, int code) {
  RecordResult result;
  result.exit_code = code;
  for (const std::set<std::string>* files : {&traces.complete, &traces.cut}) {
    for (const std::string& f : *files) {
      ASSIGN_OR_RETURN(proto::Trace t, ReadTrace(f));
      result.traces.emplace_back(f, std::move(t));
    }
  }
  size_t kernels = 0;
  std::vector<proto::Trace> loaded;
  for (const auto& [path, t] : result.traces) {
    for (const proto::Activity& a : t.activities()) {
      kernels += a.kind() == proto::ACTIVITY_KIND_KERNEL;
    }
    loaded.push_back(t);
  }
  if (kernels == 0) {
    result.no_profile_reason =
        "no GPU kernels were recorded: the command initialised CUDA but launched nothing (or "
        "nothing could be recorded: see the warnings above)";
    return result;
  }
  absl::StatusOr<proto::Profile> profile = Analyze(loaded, AnalyzeOptions{});
  if (profile.ok()) {
    result.profile = *std::move(profile);
  } else {
    result.no_profile_reason = absl::StrCat("no analysis: ", profile.status().message());
  }
  return result;
}

}  // namespace

absl::StatusOr<RecordResult> Record(const RecordRequest& o) {
#ifndef QPROF_API_WITH_CUDA
  return absl::FailedPreconditionError(
      "this qprof was built without CUDA (QPROF_CUDA=OFF): `record` needs libqprof_inject.so "
      "and CUPTI; rebuild with -DQPROF_CUDA=ON");
#endif
  auto note = [&o](const std::string& line) {
    if (o.on_note) o.on_note(line);
  };
  if (o.command.empty()) {
    return absl::InvalidArgumentError("nothing to run: use qprof record [options] CMD ARGS...");
  }

  if (o.duration_s < 0) return absl::InvalidArgumentError("--duration must be positive");
  RETURN_IF_ERROR(CheckCaptureOptions(o.capture));
  // Where CMake built libqprof_inject.so, looked at after the install paths.
#ifdef QPROF_INJECT_BUILD_PATH
  const std::string build_path = QPROF_INJECT_BUILD_PATH;
#else
  const std::string build_path;
#endif
  // qprof run --backend cuda runs its own CUPTI collector in-process; CUPTI takes one
  // subscriber per process, so the injected one and qprof's would shut each other out.
  if (IsThisBinary(o.command[0])) {
    return absl::InvalidArgumentError(
        "qprof cannot be recorded by itself: use qprof run --backend cuda, which runs the "
        "CUPTI collector in-process");
  }
  ASSIGN_OR_RETURN(std::string inject, FindInjectLibrary(ExeDir(), build_path));
  LddResult ldd = ParseLdd(RunCapture("ldd '" + inject + "' 2>&1"));
  RETURN_IF_ERROR(CheckDependencies(inject, ldd));
  if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == nullptr) {
    return absl::UnavailableError(
        "no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded): nothing to record; "
        "run qprof record where the GPU is, or import an existing trace with qprof analyze");
  }
  RETURN_IF_ERROR(MakeDirs(o.out_dir));
  // QPROF_RECORD_NO_NVTX=1 leaves NVTX alone (CUDA 13.0 can crash in nvtxNameOsThreadA
  // when CUPTI handles NVTX); kernels then have no NVTX path.
  RecordEnvOptions env;
  env.inject_library = inject;
  env.nvtx = std::getenv("QPROF_RECORD_NO_NVTX") == nullptr;
  env.cupti_library = ldd.found.count("libcupti.so.13") ? ldd.found.at("libcupti.so.13") : "";
  env.out_dir = AbsolutePath(o.out_dir);
  env.run_token = NewRunToken();
  env.duration_s = o.duration_s;
  env.capture = o.capture;

  note(fmt::format("recording {} (traces in {}, run {})", o.command[0], env.out_dir,
                   env.run_token));
  NoteCapture(o.capture, note);
  ASSIGN_OR_RETURN(int code, RunChild(o.command, RecordEnvironment(env), o.on_note));
  const RunTraces traces = ListRunTraces(env.out_dir, env.run_token, false);
  if (EndedByCaptureRange(o, code, traces.complete)) {
    note(fmt::format("{} was ended at the end of the capture range (--capture-range-end {})",
                     o.command[0], o.capture.capture_range_end.empty()
                                       ? "stop-shutdown" : o.capture.capture_range_end));
    code = 0;
  }
  if (traces.complete.empty() && traces.cut.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the command wrote no trace (exit status ", code, "): it never initialised CUDA, or "
        "the CUDA driver did not load ", inject, " (see the qprof[inject] lines above)"));
  }
  if (o.metrics) RETURN_IF_ERROR(RunMetricsPass(o, env, traces));
  return LoadRecorded(traces, code);
}

}  // namespace qprof::api
