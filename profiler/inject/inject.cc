// libqprof_inject.so: `qprof record` sets CUDA_INJECTION64_PATH to this library; the CUDA
// driver loads it inside cuInit and calls InitializeInjection(). We start the collector
// there and stream one trace per process: the header and chunks of records while the
// program runs (every QPROF_FLUSH_MS), the footer when it ends (exit, SIGINT/SIGTERM).
// A process killed outright leaves "<name>.qtrace.partial", readable up to its last
// whole chunk and marked as cut by the reader.
//
// Environment (set by `qprof record`; children inherit it, so each CUDA process of a
// multi-process program writes its own file):
//   QPROF_OUT_DIR       output folder (made absolute at start; default: current directory)
//   QPROF_RUN_TOKEN     per-run token in the file name (default: made up here)
//   QPROF_MODE          "trace" (default) or "metrics"
//   QPROF_DURATION_S    keep GPU records of the first S seconds only
//   QPROF_BUFFER_MB     activity buffer size, 1..64 (default 8)
//   QPROF_BUFFER_CAP_MB activity buffer cap (default 256)
//   QPROF_FLUSH_MS      how often completed buffers are written out (default 1000)
//   QPROF_NVTX          "off": leave NVTX alone (no ranges, NVTX_INJECTION64_PATH unset)
//   QPROF_METRIC_KERNELS metrics mode: kernels profiled per context (default 2048)
//   QPROF_METRIC_SET    metrics mode: "default" (about three passes) or "full"
//   QPROF_CAPTURE_RANGE      "cudaProfilerApi", "nvtx" or "nvtx:NAME[@DOMAIN]": record only
//                            the work launched inside such ranges (capture_range.h)
//   QPROF_NVTX_CAPTURE       with "nvtx": NAME[@DOMAIN] (NAME@* for any domain)
//   QPROF_CAPTURE_RANGE_END  stop-shutdown (default), stop, none, repeat[:N],
//                            repeat-shutdown:N, as nsys spells them
//   QPROF_DELAY_S            record nothing in the first S seconds
// Output: <dir>/qprof-<pid>-<token>.qtrace (metrics: qprof-<pid>-<token>.metrics.qtrace).
//
// A child forked without exec inherits this library's state, but neither CUPTI's
// threads nor ours, and CUDA cannot be used in it: the child drops the parent's open
// file (without writing to it) and writes its own trace, named by its own pid, saying
// it was forked. A child that execs starts afresh through cuInit.
//
// Rules for living in someone else's process: no exceptions escape, no exit/abort, every
// failure is one line on stderr prefixed "qprof[inject]" and the program carries on.
// This library links neither Abseil nor protobuf (the host may carry other versions);
// it writes the trace with profiler/trace_wire.h. CUDA 13.0 can crash when libcupti is
// unloaded without cuptiFinalize: linked with -z nodelete, never unloaded.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "profiler/cupti/collector_core.h"
#include "profiler/trace_wire.h"

namespace {

using qprof::profiler::ActivityData;
using qprof::profiler::CollectorStatsData;
using qprof::profiler::CoreCode;
using qprof::profiler::CoreStatus;
using qprof::profiler::FooterData;
using qprof::profiler::HeaderData;
using qprof::profiler::RangeData;
using qprof::profiler::WireTraceWriter;
using qprof::profiler::cupti::CollectorCore;
using qprof::profiler::cupti::CoreOptions;
using qprof::profiler::cupti::DecodedBatch;

struct InjectState {
  std::unique_ptr<CollectorCore> core;
  bool started = false;
  CoreStatus start_failure;
  bool metrics = false;
  std::string dir;
  std::string token;
  HeaderData header;  // devices are added when it is written

  // Guards the fields below. A pointer: a forked child replaces it with a fresh mutex,
  // since a parent thread that no longer exists may hold the inherited one.
  std::mutex* mu = new std::mutex();
  std::unique_ptr<WireTraceWriter> writer;
  bool write_failed = false;
};

InjectState* g_state = nullptr;  // leaked on purpose: must outlive static destructors
std::atomic<bool> g_finished{false};
std::atomic<bool> g_forked{false};
uint32_t g_forked_from = 0;
int g_signal_pipe[2] = {-1, -1};
std::atomic<int> g_signal{0};
std::atomic<bool> g_signal_done{false};
// The last capture range allowed ended (written to the finisher's pipe as byte 2); with
// a *-shutdown end the program is then ended by SIGTERM, as nsys ends it.
std::atomic<bool> g_capture_shutdown{false};
constexpr char kCaptureEndByte = 2;

void Log(const std::string& line) {
  std::fprintf(stderr, "qprof[inject] pid %d: %s\n", static_cast<int>(getpid()), line.c_str());
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? std::string(v) : std::string(fallback);
}

uint64_t NowUnixNs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string CommandLine() {
  std::string raw;
  if (FILE* f = std::fopen("/proc/self/cmdline", "rb")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) raw.append(buf, n);
    std::fclose(f);
  }
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

std::string AbsoluteDir(const std::string& dir) {
  if (!dir.empty() && dir[0] == '/') return dir;
  char cwd[4096];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return dir;
  return dir == "." ? std::string(cwd) : std::string(cwd) + "/" + dir;
}

bool MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string TracePath(const InjectState& s) {
  return s.dir + "/qprof-" + std::to_string(getpid()) + "-" + s.token +
         (s.metrics ? ".metrics" : "") + ".qtrace";
}

void FillProcess(InjectState* s) {
  qprof::profiler::ProcessData p;
  p.pid = static_cast<uint32_t>(getpid());
  p.parent_pid = static_cast<uint32_t>(getppid());
  p.run_token = s->token;
  p.forked_from_pid = g_forked_from;
  s->header.process = p;
  (*s->header.run).extra["pid"] = std::to_string(getpid());
}

// Opens the file and writes the header, once. Caller holds s->mu. False if no trace can
// be written (said once on stderr).
bool EnsureHeader(InjectState* s) {
  if (s->writer != nullptr) return true;
  if (s->write_failed) return false;
  const std::string path = TracePath(*s);
  CoreStatus open = WireTraceWriter::Open(path, &s->writer);
  if (open.ok()) {
    HeaderData header = s->header;
    // Driver calls: fine here (never inside cuInit), not in a forked child.
    if (s->core != nullptr && s->started && !g_forked.load()) header.devices = s->core->ReadDevices();
    open = s->writer->WriteHeader(header);
  }
  if (!open.ok()) {
    Log("no trace: " + open.message());
    s->writer.reset();
    s->write_failed = true;
    return false;
  }
  return true;
}

// Worker thread: records ready for the trace.
void WriteBatch(DecodedBatch& batch) {
  InjectState* s = g_state;
  if (s == nullptr || g_forked.load()) return;
  std::lock_guard<std::mutex> lock(*s->mu);
  if (!EnsureHeader(s)) return;
  CoreStatus w = s->writer->WriteChunk(batch.activities, batch.ranges);
  if (!w.ok()) {
    Log("writing the trace: " + w.message());
    s->writer.reset();
    s->write_failed = true;
  }
}

// Stops the collector and finishes the trace, once per process.
void Finish(const std::string& ended_by) {
  InjectState* s = g_state;
  if (s == nullptr || g_finished.exchange(true)) return;
  try {
    if (s->started && !g_forked.load()) {
      CoreStatus stop = s->core->Stop();  // drains the worker: not under s->mu
      if (!stop.ok()) Log("stopping the collector: " + stop.message());
    }
    std::lock_guard<std::mutex> lock(*s->mu);
    if (!EnsureHeader(s)) return;
    DecodedBatch rest;
    if (s->started && !g_forked.load()) s->core->TakeRemaining(&rest);
    CoreStatus w = s->writer->WriteChunk(rest.activities, rest.ranges);
    FooterData footer;
    CollectorStatsData stats;
    if (s->core != nullptr && !g_forked.load()) {
      s->core->FillStats(s->writer->activities_written(), &stats);
    } else {
      stats.collector = s->metrics ? "cupti-metrics" : "cupti";
    }
    if (!s->start_failure.ok()) {
      stats.warnings.push_back("nothing recorded: " + s->start_failure.message());
      if (s->metrics) stats.metrics_unavailable_reason = s->start_failure.message();
    }
    if (g_forked.load()) {
      stats.warnings.push_back("forked without exec from pid " + std::to_string(g_forked_from) +
                               " after CUDA was initialised: CUDA cannot be used in such a "
                               "child, so this trace holds no GPU activity");
    }
    stats.ended_by = ended_by;
    footer.collector = stats;
    footer.run = s->header.run;
    if (s->core != nullptr && !g_forked.load()) {
      for (const auto& [key, value] : s->core->CaptureSummary()) (*footer.run).extra[key] = value;
    }
    if (w.ok()) w = s->writer->Close(footer);
    if (!w.ok()) Log("writing the trace: " + w.message());
  } catch (...) {
    Log("internal error while writing the trace; the program is not affected");
  }
}

void AtExit() { Finish("exit"); }

// --- SIGINT / SIGTERM: the program would end without running atexit handlers. The
// handler only wakes the finisher thread (a write to a pipe is async-signal-safe), waits
// for it a bounded time, then lets the signal do what it would have done. ---
constexpr int kSignalWaitMs = 5000;

void OnSignal(int sig) {
  if (!g_forked.load() && g_signal_pipe[1] >= 0 && !g_signal.exchange(sig)) {
    const char byte = 1;
    (void)!write(g_signal_pipe[1], &byte, 1);
    for (int waited = 0; waited < kSignalWaitMs && !g_signal_done.load(); waited += 10) {
      struct timespec ts = {0, 10 * 1000 * 1000};
      nanosleep(&ts, nullptr);
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void FinisherThread() {
  char byte = 0;
  while (read(g_signal_pipe[0], &byte, 1) < 0 && errno == EINTR) {
  }
  if (byte == kCaptureEndByte && g_signal.load() == 0) {
    // The capture range ended: the trace is complete now (nsys stops collecting), and the
    // program keeps running unless the spec ends it.
    Finish("capture range end");
    g_signal_done.store(true);
    if (g_capture_shutdown.load()) {
      Log("capture range ended: ending the program (--capture-range-end " +
          std::string(Env("QPROF_CAPTURE_RANGE_END", "stop-shutdown")) + ")");
      kill(getpid(), SIGTERM);
    }
    return;
  }
  const int sig = g_signal.load();
  Finish(sig == SIGINT ? "signal SIGINT" : sig == SIGTERM ? "signal SIGTERM" : "signal");
  g_signal_done.store(true);
}

// Inside a CUPTI callback: only wakes the finisher (Stop() cannot run here).
void OnCaptureDone(bool shutdown) {
  if (g_forked.load() || g_signal_pipe[1] < 0) return;
  g_capture_shutdown.store(shutdown);
  (void)!write(g_signal_pipe[1], &kCaptureEndByte, 1);
}

// QPROF_CAPTURE_RANGE & co. False (said on stderr) when they do not parse: nothing is
// recorded then rather than everything.
bool ReadCaptureSpec(qprof::profiler::CaptureSpec* spec) {
  std::string error;
  const std::string range = Env("QPROF_CAPTURE_RANGE", "none");
  bool ok = qprof::profiler::ParseCaptureRange(range, spec, &error);
  if (ok && range == "nvtx") ok = qprof::profiler::ParseNvtxCapture(Env("QPROF_NVTX_CAPTURE", ""), spec, &error);
  if (ok) ok = qprof::profiler::ParseCaptureRangeEnd(Env("QPROF_CAPTURE_RANGE_END", "stop-shutdown"), spec, &error);
  spec->delay_s = std::atof(Env("QPROF_DELAY_S", "0").c_str());
  if (!ok) Log("not profiling: " + error);
  return ok;
}

void InstallSignalHandlers() {
  if (pipe(g_signal_pipe) != 0) return;
  std::thread(FinisherThread).detach();
  for (int sig : {SIGINT, SIGTERM}) {
    struct sigaction old = {};
    if (sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction act = {};
    act.sa_handler = OnSignal;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESTART;
    sigaction(sig, &act, nullptr);  // the program's own handler, if any, stays
  }
}

// In the child of a fork without exec (single-threaded, locks possibly held).
void ChildAfterFork() {
  CollectorCore::DisableAfterFork();
  InjectState* s = g_state;
  if (s == nullptr) return;
  g_forked_from = s->header.process ? s->header.process->pid : 0;
  g_forked.store(true);
  // The parent's file: close our copy of the descriptor, write nothing to it. The mutex
  // may be held by a parent thread that does not exist here: a fresh one replaces it
  // (the old one is leaked, as is the parent's writer object).
  if (s->writer != nullptr) s->writer.release()->Abandon();
  s->mu = new std::mutex();
  s->write_failed = false;
  s->started = false;
  FillProcess(s);
  g_finished.store(false);
}

int Initialize() {
  if (g_state != nullptr) return 1;
  auto* s = new InjectState();
  s->dir = AbsoluteDir(Env("QPROF_OUT_DIR", "."));
  s->metrics = Env("QPROF_MODE", "trace") == "metrics";
  const uint64_t start_ns = NowUnixNs();
  s->token = Env("QPROF_RUN_TOKEN", std::to_string(start_ns % 10000000000ull).c_str());
  if (!MakeDirs(s->dir)) {
    Log("cannot create " + s->dir + ": " + std::strerror(errno) + "; not profiling");
    delete s;
    return 1;
  }
  s->header.schema_version = qprof::profiler::kWireSchemaVersion;
  s->header.provenance = qprof::profiler::kProvenanceMeasuredGpu;
  // A metrics pass has no meaningful times: marked so nobody analyses it as a trace.
  s->header.source_kind = s->metrics ? "cupti-metrics-pass" : "qtrace";
  qprof::profiler::RunData run;
  run.backend = "cuda";
  run.command_line = CommandLine();
  run.start_unix_ns = start_ns;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) run.hostname = host;
  run.extra["recorded_by"] = s->metrics ? "qprof record --metrics (metrics pass)" : "qprof record";
  s->header.run = run;
  FillProcess(s);
  s->header.notes.push_back(
      "streamed by libqprof_inject: activities are in the order CUPTI delivered them; a file "
      "still named .partial was cut before its footer (the process was killed)");

  CoreOptions options;
  options.mode = s->metrics ? CoreOptions::Mode::kMetrics : CoreOptions::Mode::kTrace;
  options.in_driver_init = true;
  options.duration_s = std::atof(Env("QPROF_DURATION_S", "0").c_str());
  const double buffer_mb = std::atof(Env("QPROF_BUFFER_MB", "8").c_str());
  if (buffer_mb >= 1 && buffer_mb <= 64) options.buffer_bytes = static_cast<size_t>(buffer_mb * (1 << 20));
  const double cap_mb = std::atof(Env("QPROF_BUFFER_CAP_MB", "256").c_str());
  if (cap_mb >= buffer_mb) options.max_buffer_bytes = static_cast<size_t>(cap_mb * (1 << 20));
  options.flush_period_ms = std::atoi(Env("QPROF_FLUSH_MS", "1000").c_str());
  options.route_nvtx = Env("QPROF_NVTX", "on") != "off";
  const long metric_kernels = std::atol(Env("QPROF_METRIC_KERNELS", "2048").c_str());
  if (metric_kernels > 0) options.max_metric_kernels = static_cast<size_t>(metric_kernels);
  if (!qprof::profiler::cupti::ParseMetricSet(Env("QPROF_METRIC_SET", ""), &options.metric_set)) {
    Log("QPROF_METRIC_SET must be default or full; using the default set");
  }
  options.on_batch = WriteBatch;
  if (!ReadCaptureSpec(&options.capture)) {
    delete s;
    return 1;
  }
  options.on_capture_done = OnCaptureDone;
  s->core = std::make_unique<CollectorCore>(qprof::profiler::cupti::RealCuptiApi(), options);
  g_state = s;
  const CoreStatus start = s->core->Start();
  s->started = start.ok();
  if (!start.ok()) {
    Log("not profiling: " + start.message());
    // No GPU driver: nothing could ever be recorded, and nothing is written. Otherwise
    // (another profiler attached, libcupti too old) the trace says why it is empty.
    if (start.code() == CoreCode::kUnavailable) {
      g_state = nullptr;
      s->core.reset();
      delete s;
      return 1;
    }
    s->start_failure = start;
  }
  pthread_atfork(nullptr, nullptr, ChildAfterFork);
  InstallSignalHandlers();
  std::atexit(AtExit);
  return 1;
}

}  // namespace

// Called by the CUDA driver (once per process, inside cuInit). Returning 1 tells the
// driver the injection loaded; we return 1 even when profiling could not start, so the
// program always runs normally.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    return Initialize();
  } catch (...) {
    Log("internal error at start-up; not profiling");
    return 1;
  }
}
