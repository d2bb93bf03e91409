// Nsight Compute CSV as a trace of its own (`qprof import x.csv`), and the join of its
// metrics onto another trace's kernels (JoinNcuMetrics in import.h).
//
// On its own, an ncu CSV has no timeline: ncu serialises and replays kernels. The trace
// lays the kernels end to end in profiling order with their measured durations
// (gpu__time_duration.sum / "Duration"), and says so in header.notes.
#ifndef QPROF_ANALYSIS_IMPORTERS_NCU_NCU_IMPORTER_H_
#define QPROF_ANALYSIS_IMPORTERS_NCU_NCU_IMPORTER_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "analysis/importers/import.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

absl::StatusOr<proto::Trace> ImportNcuCsv(const std::string& path, const ImportOptions& options);
absl::StatusOr<proto::Trace> ImportNcuCsvText(std::string_view text, const std::string& label);

// The key kernels are matched on when full names differ: the function's own name, without
// return type, namespaces, template arguments and parameters ("void a::b::k<4>(int)" -> "k").
std::string NcuMatchKey(std::string_view name);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NCU_NCU_IMPORTER_H_
