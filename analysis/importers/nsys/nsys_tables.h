// The nsys export's side tables that describe the trace rather than its activities:
// devices (TARGET_INFO_GPU) and the host's time in CUDA runtime/driver calls
// (CUPTI_ACTIVITY_KIND_RUNTIME, summed per call name). Read by column name; absent tables
// and columns leave their figures unset.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_TABLES_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_TABLES_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "analysis/importers/nsys/sqlite_db.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

// Adds a DeviceInfo per TARGET_INFO_GPU row whose id is not yet in `described`; a missing
// table is a warning. DataLoss when the file is cut inside the table (rows before kept).
absl::Status ReadNsysDevices(SqliteDb* db, proto::TraceHeader* header,
                             std::unordered_set<uint32_t>* described,
                             std::vector<std::string>* warnings);

// Runtime/driver calls, the launch calls and the synchronising calls among them
// (import_util.h: SyncKindOf), summed into the header's host calls; `strings` is StringIds
// (id -> text).
absl::Status ReadNsysHostCalls(SqliteDb* db,
                               const std::unordered_map<int64_t, std::string>& strings,
                               proto::TraceHeader* header);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_TABLES_H_
