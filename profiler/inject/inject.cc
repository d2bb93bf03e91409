// libqprof_inject.so: `qprof record` sets CUDA_INJECTION64_PATH to this library; the CUDA
// driver loads it inside cuInit and calls InitializeInjection(). We start the CUPTI
// collector there and write one trace per process when it ends (atexit) or when its
// CUDA context is torn down (cudaDeviceReset / context destroy), whichever comes first.
//
// Environment (set by `qprof record`; children inherit it, so each process of a
// multi-process program writes its own file):
//   QPROF_OUT_DIR      output folder (default: current directory)
//   QPROF_MODE         "trace" (default) or "metrics"
//   QPROF_DURATION_S   keep GPU records of the first S seconds only
//   QPROF_BUFFER_CAP_MB activity buffer cap (default 256)
// Output: <dir>/qprof-<pid>.qtrace (metrics: qprof-<pid>.metrics.qtrace).
//
// Rules for living in someone else's process: no exceptions escape, no exit/abort, every
// failure is one line on stderr prefixed "qprof[inject]" and the program carries on.
// CUDA 13.0 can crash when libcupti is unloaded without cuptiFinalize; this library is
// linked with -z nodelete (never unloaded) and keeps libcupti loaded for the same reason.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>

#include "base/file_util.h"
#include "profiler/cupti/cupti_collector.h"
#include "proto/trace_io.h"
#include "proto/vocabulary.h"

namespace {

using qprof::profiler::Collector;
using qprof::profiler::cupti::CuptiOptions;

struct InjectState {
  std::unique_ptr<Collector> collector;
  std::string path;
  bool metrics = false;
  uint64_t start_unix_ns = 0;
  std::mutex mu;
  bool written = false;
};

InjectState* g_state = nullptr;  // leaked on purpose: must outlive static destructors

void Log(const std::string& line) {
  std::fprintf(stderr, "qprof[inject] pid %d: %s\n", static_cast<int>(getpid()), line.c_str());
}

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? std::string(v) : std::string(fallback);
}

std::string CommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

// Stops the collector and writes the trace, once per process.
void WriteTraceOnce() {
  InjectState* s = g_state;
  if (s == nullptr) return;
  try {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->written) return;
    s->written = true;
    absl::Status stop = s->collector->Stop();
    if (!stop.ok()) Log("stopping the collector: " + std::string(stop.message()));
    qprof::proto::Trace trace;
    absl::Status flush = s->collector->Flush(&trace);
    if (!flush.ok()) {
      Log("no trace written: " + std::string(flush.message()));
      return;
    }
    qprof::proto::TraceHeader* h = trace.mutable_header();
    h->set_schema_version(qprof::kTraceSchemaVersion);
    // A metrics pass has no meaningful times: mark it so nobody analyses it as a trace.
    h->set_source_kind(s->metrics ? "cupti-metrics-pass" : "qtrace");
    qprof::proto::RunInfo* run = h->mutable_run();
    run->set_backend("cuda");
    run->set_command_line(CommandLine());
    run->set_start_unix_ns(s->start_unix_ns);
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) == 0) run->set_hostname(host);
    (*run->mutable_extra())["pid"] = std::to_string(getpid());
    (*run->mutable_extra())["recorded_by"] = s->metrics ? "qprof record --metrics (metrics pass)"
                                                        : "qprof record";
    absl::Status write = qprof::WriteTrace(trace, s->path);
    if (!write.ok()) {
      Log("writing " + s->path + ": " + std::string(write.message()));
    }
  } catch (...) {
    Log("internal error while writing the trace; the program is not affected");
  }
}

void AtExit() { WriteTraceOnce(); }

int Initialize() {
  if (g_state != nullptr) return 1;
  auto* s = new InjectState();
  const std::string dir = Env("QPROF_OUT_DIR", ".");
  s->metrics = Env("QPROF_MODE", "trace") == "metrics";
  s->path = dir + "/qprof-" + std::to_string(getpid()) + (s->metrics ? ".metrics" : "") + ".qtrace";
  s->start_unix_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count());
  absl::Status mk = qprof::MakeDirs(dir);
  if (!mk.ok()) {
    Log("cannot create " + dir + ": " + std::string(mk.message()) + "; not profiling");
    delete s;
    return 1;
  }
  CuptiOptions options;
  options.mode = s->metrics ? CuptiOptions::Mode::kMetrics : CuptiOptions::Mode::kTrace;
  options.duration_s = std::atof(Env("QPROF_DURATION_S", "0").c_str());
  const double cap_mb = std::atof(Env("QPROF_BUFFER_CAP_MB", "256").c_str());
  if (cap_mb >= 8) options.max_buffer_bytes = static_cast<size_t>(cap_mb * (1 << 20));
  options.on_context_teardown = [] { WriteTraceOnce(); };
  auto collector = qprof::profiler::cupti::MakeCuptiCollector(options);
  if (!collector.ok()) {
    Log("not profiling: " + std::string(collector.status().message()));
    delete s;
    return 1;
  }
  s->collector = std::move(collector).value();
  absl::Status start = s->collector->Start();
  if (!start.ok()) {
    Log("not profiling: " + std::string(start.message()));
    delete s;
    return 1;
  }
  g_state = s;
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
