// Pieces of `qprof record` that do not run anything: finding the injection library,
// reading `ldd` output, the child's environment, and which trace files a run wrote.
// Kept apart from record_command.cc so they are tested without a GPU or a child process.
#ifndef QPROF_CLI_RECORD_SUPPORT_H_
#define QPROF_CLI_RECORD_SUPPORT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::cli {

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

// Environment additions for the profiled command.
std::map<std::string, std::string> RecordEnvironment(const std::string& inject_library,
                                                     const std::string& cupti_library,
                                                     const std::string& out_dir,
                                                     bool metrics_pass, double duration_s);

// "qprof-<pid>.qtrace" files in `dir` (metrics: "qprof-<pid>.metrics.qtrace"), sorted.
std::set<std::string> ListTraceFiles(const std::string& dir, bool metrics);

}  // namespace qprof::cli

#endif  // QPROF_CLI_RECORD_SUPPORT_H_
