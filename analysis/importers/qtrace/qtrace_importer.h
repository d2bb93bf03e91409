// Our own .qtrace files, read through proto/trace_io.h. The trace keeps its provenance
// (measured, imported, modelled); source_kind becomes "qtrace" and source_path this file,
// and a trace converted by `qprof import` gets a note naming what it was converted from.
#ifndef QPROF_ANALYSIS_IMPORTERS_QTRACE_QTRACE_IMPORTER_H_
#define QPROF_ANALYSIS_IMPORTERS_QTRACE_QTRACE_IMPORTER_H_

#include <string>

#include "absl/status/statusor.h"
#include "analysis/importers/import.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

absl::StatusOr<proto::Trace> ImportQtrace(const std::string& path, const ImportOptions& options);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_QTRACE_QTRACE_IMPORTER_H_
