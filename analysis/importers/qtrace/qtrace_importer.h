// .qtrace files (proto/trace.proto) read as a stream of frames: header, chunks, footer.
//
// Same contract as proto/trace_io.h's ReadTrace (a file cut short reads up to its last whole
// frame, Trace.truncated with the byte offset), but frame by frame through a small buffer,
// so a trace of any length is analysed in bounded memory. The header the sink gets says
// the trace was read from `path` (a .qtrace saved by `qprof import` keeps a note of what it
// was converted from); the footer's collector statistics and run information replace the
// header's at the end.
#ifndef QPROF_ANALYSIS_IMPORTERS_QTRACE_QTRACE_IMPORTER_H_
#define QPROF_ANALYSIS_IMPORTERS_QTRACE_QTRACE_IMPORTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/importers/common/trace_sink.h"
#include "analysis/importers/import.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

// Activities in file order (not sorted).
absl::StatusOr<proto::Trace> ImportQtrace(const std::string& path, const ImportOptions& options);

absl::Status StreamQtrace(const std::string& path, const ImportOptions& options, TraceSink* sink);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_QTRACE_QTRACE_IMPORTER_H_
