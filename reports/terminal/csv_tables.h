// The terminal summary's tables as CSV, like `nsys stats --format csv`: for spreadsheets,
// pandas and joins with other tools.
//
// Contract:
// - RFC 4180: fields with a comma, a quote or a line break are quoted, quotes doubled;
//   rows end with "\n".
// - Names are never shortened. Kernel rows carry both `name` (qprof's normalised name, the
//   one its tables and diffs group by) and `raw_name` (as the trace spelled it: what nsys
//   stats prints and Perfetto searches find).
// - Times are integer nanoseconds and shares fractions (0..1), as in the JSON report.
// - One table is plain CSV (a header row, then rows). Several are each preceded by a line
//   "# <table>" and separated by a blank line, so `grep -A` or a split on blank lines gets one.
#ifndef QPROF_REPORTS_TERMINAL_CSV_TABLES_H_
#define QPROF_REPORTS_TERMINAL_CSV_TABLES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::reports {

// "classes", "kernels", "roles", "ranges", "ranks".
const std::vector<std::string>& ProfileCsvTables();
// "classes", "roles", "kernels", "ranks".
const std::vector<std::string>& DiffCsvTables();

// The named tables (empty: all of them, in the order above); InvalidArgument naming the
// choices for an unknown table.
absl::StatusOr<std::string> ProfileCsv(const proto::Profile& profile,
                                       const std::vector<std::string>& tables = {});
absl::StatusOr<std::string> DiffCsv(const proto::Diff& diff,
                                    const std::vector<std::string>& tables = {});

// One CSV field, quoted when it must be.
std::string CsvField(const std::string& s);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_TERMINAL_CSV_TABLES_H_
