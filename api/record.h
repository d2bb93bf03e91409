// `qprof record` as a library call: profile an unmodified CUDA program by running it with
// CUDA_INJECTION64_PATH pointing at libqprof_inject.so (and NVTX_INJECTION64_PATH at
// libcupti, for NVTX ranges), so every CUDA process it starts writes
// <out>/qprof-<pid>-<token>.qtrace (the token is new for every run). With metrics the
// command runs a second time with hardware counters (kernel replay: slow, timing distorted;
// the number of counter passes, i.e. how often every kernel is replayed, is noted before it
// starts) and the per-kernel metrics are joined onto the kernels of the first run. A trace a killed
// process left unfinished is read up to its last whole chunk and reported as cut.
//
// The caller is the "child subreaper" of the command while it runs: processes the command
// leaves behind (a worker forked and orphaned) are waited for, up to kOrphanWaitS seconds,
// so their traces are finished before they are listed.
#ifndef QPROF_API_RECORD_H_
#define QPROF_API_RECORD_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/analyze.h"
#include "api/record_support.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::api {

// How long processes the command left behind are waited for once it has exited.
inline constexpr int kOrphanWaitS = 10;

struct RecordRequest {
  std::vector<std::string> command;  // the program and its arguments
  std::string out_dir = "qprof-traces";
  double duration_s = 0;             // keep GPU activity of the first S seconds (0 = all)
  // Record only the work inside capture ranges (cudaProfilerStart/Stop, a named NVTX
  // range) and/or after a delay, as nsys's --capture-range, --nvtx-capture,
  // --capture-range-end and --delay do (profiler/capture_range.h).
  CaptureOptions capture;
  bool metrics = false;              // a second run with hardware counters
  std::string metric_set;            // its set: "default" (also when empty) or "full"
  NoteFn on_note;                    // "recording ...", the metrics pass, orphans
};

struct RecordResult {
  int exit_code = 0;                                           // the command's (128+signal)
  std::vector<std::pair<std::string, proto::Trace>> traces;   // complete ones, then cut ones
  // The analysis of all traces, when they hold kernels and it could run.
  std::optional<proto::Profile> profile;
  std::string no_profile_reason;
};

// Errors: InvalidArgument (nothing to run, qprof itself, a negative duration or delay,
// capture options that do not parse),
// FailedPrecondition (a build without CUDA, no trace written), Unavailable (no driver),
// NotFound (no injection library). A command that exits non-zero still returns its traces
// with exit_code set.
absl::StatusOr<RecordResult> Record(const RecordRequest& request);

}  // namespace qprof::api

#endif  // QPROF_API_RECORD_H_
