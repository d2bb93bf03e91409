// `qprof import` as a library call: any input qprof reads (Nsight Systems SQLite, PyTorch
// profiler JSON[.gz], Nsight Compute CSV, .qtrace), optionally with an ncu CSV joined onto
// its kernels, written as a .qtrace.
#ifndef QPROF_API_IMPORT_H_
#define QPROF_API_IMPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "api/analyze.h"
#include "proto/trace.pb.h"

namespace qprof::api {

struct ImportRequest {
  std::string input;
  std::string out_dir;      // write <out_dir>/<input name>.qtrace (created if missing)
  std::string qtrace_path;  // or this file; neither: write nothing
  std::string ncu;          // Nsight Compute CSV joined by kernel name and launch order
  bool progress = true;     // the importer's progress line on stderr
  NoteFn on_note;           // the ncu join, an --out that names a file
};

struct ImportResult {
  proto::Trace trace;
  std::string written;      // the .qtrace written ("" when none was asked for)
  int64_t kernels = 0, kernel_ns = 0, memcpys = 0, memsets = 0;
};

absl::StatusOr<ImportResult> Import(const ImportRequest& request);

// "trace.nsys.sqlite" -> "trace.nsys.qtrace", "t.json.gz" -> "t.qtrace".
std::string QtraceNameFor(const std::string& input);

}  // namespace qprof::api

#endif  // QPROF_API_IMPORT_H_
