// The nsys export's side tables that describe the trace rather than its activities:
// devices (TARGET_INFO_GPU) and the host's time in CUDA runtime/driver calls
// (CUPTI_ACTIVITY_KIND_RUNTIME, summed per call name). Read by column name; absent tables
// and columns leave their figures unset.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_TABLES_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_TABLES_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/importers/nsys/sqlite_db.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

// Adds a DeviceInfo per TARGET_INFO_GPU row whose id is not yet in `described`; a missing
// table is a warning. DataLoss when the file is cut inside the table (rows before kept).
absl::Status ReadNsysDevices(SqliteDb* db, proto::TraceHeader* header,
                             std::unordered_set<uint32_t>* described,
                             std::vector<std::string>* warnings);

// Time the host spent in runtime/driver calls, summed per call name (StringIds id, -1 for
// none) row by row by whatever scans the runtime table: ReadNsysHostCalls, or the nsys
// reader's launch join on its way through the table (the same rows, one scan fewer).
class HostCallSums {
 public:
  HostCallSums() = default;
  HostCallSums(const HostCallSums&) = delete;  // last_ points into by_name_
  HostCallSums& operator=(const HostCallSums&) = delete;

  // A call's row; rows with end < start count for nothing, as in ReadNsysHostCalls' SQL.
  void Add(int64_t name_id, int64_t start, int64_t end) {
    if (end < start) return;
    if (last_ == nullptr || last_id_ != name_id) {
      last_ = &by_name_[name_id];
      last_id_ = name_id;
    }
    ++last_->calls;
    last_->ns += static_cast<uint64_t>(end - start);
  }
  // The runtime/driver calls, the launch calls and the synchronising calls among them
  // (import_util.h: SyncKindOf), into the header's host calls; `strings` is StringIds.
  void WriteTo(const std::unordered_map<int64_t, std::string>& strings,
               proto::TraceHeader* header) const;

 private:
  struct Sums {
    uint64_t calls = 0, ns = 0;
  };
  std::map<int64_t, Sums> by_name_;  // a few distinct names; nothing is kept per call
  Sums* last_ = nullptr;              // the last name's (map nodes do not move)
  int64_t last_id_ = 0;
};

// Whether the runtime table has what host-call sums need (start, end, nameId).
absl::StatusOr<bool> NsysHasHostCalls(SqliteDb* db);

// Runtime/driver calls, the launch calls and the synchronising calls among them
// (import_util.h: SyncKindOf), summed into the header's host calls; `strings` is StringIds
// (id -> text).
absl::Status ReadNsysHostCalls(SqliteDb* db,
                               const std::unordered_map<int64_t, std::string>& strings,
                               proto::TraceHeader* header);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_TABLES_H_
