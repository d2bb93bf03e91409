// Pieces of `qprof record` that do not run anything: finding the injection library,
// reading `ldd` output, the child's environment, and which trace files a run wrote.
// Kept apart from record_command.cc so they are tested without a GPU or a child process.
#ifndef QPROF_API_RECORD_SUPPORT_H_
#define QPROF_API_RECORD_SUPPORT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::api {

inline constexpr char kInjectLibraryName[] = "libqprof_inject.so";

// Where libqprof_inject.so is: $QPROF_INJECT_LIB if set (must exist), else next to the
// qprof binary (`exe_dir`), else <exe_dir>/../lib, else `build_tree_path` (the path
// CMake built it at; empty to skip). NotFound names every place looked at.
absl::StatusOr<std::string> FindInjectLibrary(const std::string& exe_dir,
                                              const std::string& build_tree_path);

struct LddResult {
  std::vector<std::string> missing;          // sonames ldd reported "not found"
  std::map<std::string, std::string> found;  // soname -> resolved path
};
// Parses `ldd FILE` output ("\tlibcupti.so.13 => /usr/local/cuda/lib64/libcupti.so.13 (0x..)").
LddResult ParseLdd(const std::string& ldd_output);

// One line for missing dependencies, e.g. that libcupti.so.13 is not on the library path
// and how to fix it. OK when nothing is missing.
absl::Status CheckDependencies(const std::string& library, const LddResult& ldd);

// `qprof record`'s capture options, as nsys spells them (profiler/capture_range.h):
// --capture-range none|cudaProfilerApi|nvtx|nvtx:NAME[@DOMAIN], --nvtx-capture
// NAME[@DOMAIN] (with nvtx), --capture-range-end, --delay. InvalidArgument, with one line
// saying what is wrong, for values that do not parse or do not go together.
struct CaptureOptions {
  std::string capture_range;      // "" = none
  std::string nvtx_capture;
  std::string capture_range_end;  // "" = stop-shutdown (nsys's default)
  double delay_s = 0;
};
absl::Status CheckCaptureOptions(const CaptureOptions& o);

struct RecordEnvOptions {
  std::string inject_library;
  std::string cupti_library;  // what NVTX_INJECTION64_PATH names ("" to leave it alone)
  std::string out_dir;        // made absolute here: the program may change directory
  std::string run_token;      // in every trace file name of this run
  bool metrics_pass = false;
  double duration_s = 0;
  bool nvtx = true;           // false: QPROF_NVTX=off, NVTX_INJECTION64_PATH not set
  CaptureOptions capture;     // QPROF_CAPTURE_RANGE, QPROF_NVTX_CAPTURE, ... (when set)
};

// Environment additions for the profiled command.
std::map<std::string, std::string> RecordEnvironment(const RecordEnvOptions& o);

// `path` made absolute against the current directory (already absolute: unchanged).
std::string AbsolutePath(const std::string& path);

// A token for one `qprof record` run: 10 decimal digits from the clock and the pid.
// Trace files are named qprof-<pid>-<token>.qtrace, so a pid the system reused for
// another run's process never names an old file, and an old file is never taken for new.
std::string NewRunToken();

// This run's traces in `dir`: complete ones ("qprof-<pid>-<token>.qtrace", metrics:
// "....metrics.qtrace") and cut ones (still "<name>.partial": the process was killed
// before it finished its trace), each sorted.
struct RunTraces {
  std::set<std::string> complete;
  std::set<std::string> cut;
};
RunTraces ListRunTraces(const std::string& dir, const std::string& token, bool metrics);

}  // namespace qprof::api

#endif  // QPROF_API_RECORD_SUPPORT_H_
