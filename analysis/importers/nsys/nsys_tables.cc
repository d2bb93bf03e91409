#include "analysis/importers/nsys/nsys_tables.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "analysis/importers/common/import_util.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

constexpr char kRuntimeTable[] = "CUPTI_ACTIVITY_KIND_RUNTIME";

}  // namespace

absl::Status ReadNsysDevices(SqliteDb* db, proto::TraceHeader* header,
                             std::unordered_set<uint32_t>* described,
                             std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(bool has_gpu, db->HasTable("TARGET_INFO_GPU"));
  if (!has_gpu) {
    warnings->push_back("no TARGET_INFO_GPU table: device names unknown");
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(Columns c, db->TableColumns("TARGET_INFO_GPU"));
  ASSIGN_OR_RETURN(SqliteStmt st, db->Prepare(c.SelectAll("TARGET_INFO_GPU")));
  const int name = c.Index("name");
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    auto col = [&st, &c](const char* n) { return st.Int(c.Index(n)); };
    uint32_t id = static_cast<uint32_t>(col("id"));
    if (!described->insert(id).second) continue;
    proto::DeviceInfo* d = header->add_devices();
    d->set_id(id);
    d->set_kind("gpu");
    d->set_vendor("NVIDIA");  // nsys traces CUDA only
    d->set_name(name >= 0 && !st.IsNull(name) ? Utf8Clean(st.Text(name)) : "unknown");
    uint32_t major = static_cast<uint32_t>(col("computeMajor"));
    uint32_t minor = static_cast<uint32_t>(col("computeMinor"));
    d->set_cc_major(major);
    d->set_cc_minor(minor);
    if (major > 0) d->set_arch(absl::StrCat("sm_", major, minor));
    d->set_sm_count(static_cast<uint32_t>(col("smCount")));
    d->set_memory_bytes(static_cast<uint64_t>(col("totalMemory")));
    // memoryBandwidth is in bytes/s in nsys exports.
    d->set_memory_bandwidth_gbps(static_cast<double>(col("memoryBandwidth")) / 1e9);
    d->set_clock_mhz(static_cast<double>(col("clockRate")) / 1e6);
    // Occupancy limits (columns of newer exports; absent ones read as 0 = unknown).
    d->set_max_threads_per_block(static_cast<uint32_t>(col("maxThreadsPerBlock")));
    d->set_max_warps_per_sm(static_cast<uint32_t>(col("maxWarpsPerSm")));
    d->set_max_blocks_per_sm(static_cast<uint32_t>(col("maxBlocksPerSm")));
    d->set_regs_per_block(static_cast<uint32_t>(col("maxRegistersPerBlock")));
    d->set_regs_per_sm(static_cast<uint32_t>(col("maxRegistersPerSm")));
    d->set_warp_size(static_cast<uint32_t>(col("threadsPerWarp")));
    d->set_shared_mem_per_block(static_cast<uint64_t>(col("maxShmemPerBlock")));
    d->set_shared_mem_per_block_optin(static_cast<uint64_t>(col("maxShmemPerBlockOptin")));
    d->set_shared_mem_per_sm(static_cast<uint64_t>(col("maxShmemPerSm")));
    if (d->max_warps_per_sm() > 0 || d->regs_per_sm() > 0) {
      d->set_limits_source("nsys TARGET_INFO_GPU");
    }
  }
  return absl::OkStatus();
}

void HostCallSums::WriteTo(const std::unordered_map<int64_t, std::string>& strings,
                           proto::TraceHeader* header) const {
  proto::HostCalls* h = header->mutable_host_calls();
  for (const auto& [id, sums] : by_name_) {
    auto it = strings.find(id);  // StringIds, as the kernels' names
    const std::string* name = it == strings.end() ? nullptr : &it->second;
    const uint64_t calls = sums.calls;
    const uint64_t ns = sums.ns;
    h->set_runtime_calls(h->runtime_calls() + calls);
    h->set_runtime_ns(h->runtime_ns() + ns);
    if (name != nullptr && IsLaunchCall(*name)) {
      h->set_launch_calls(h->launch_calls() + calls);
      h->set_launch_ns(h->launch_ns() + ns);
    }
    if (name == nullptr) continue;
    if (std::string_view kind = SyncKindOf(*name); !kind.empty()) {
      AddSyncCalls(kind, calls, ns, header);
    }
  }
}

absl::StatusOr<bool> NsysHasHostCalls(SqliteDb* db) {
  ASSIGN_OR_RETURN(bool has_runtime, db->HasTable(kRuntimeTable));
  if (!has_runtime) return false;
  ASSIGN_OR_RETURN(Columns c, db->TableColumns(kRuntimeTable));
  return c.Has("start") && c.Has("end") && c.Has("nameId");
}

// Time the host spent in CUDA runtime/driver calls, and in kernel launches among them,
// summed per call name in one scan: SQLite's GROUP BY sorts every row (0.36 s CPU per
// million calls measured here), a map of the few distinct names does not (nothing is kept
// per call).
absl::Status ReadNsysHostCalls(SqliteDb* db,
                               const std::unordered_map<int64_t, std::string>& strings,
                               proto::TraceHeader* header) {
  ASSIGN_OR_RETURN(bool has, NsysHasHostCalls(db));
  if (!has) return absl::OkStatus();
  ASSIGN_OR_RETURN(SqliteStmt scan,
                   db->Prepare(absl::StrCat("SELECT nameId, start, \"end\" FROM ", kRuntimeTable,
                                             " WHERE \"end\" >= start")));
  HostCallSums sums;
  while (true) {
    ASSIGN_OR_RETURN(bool row, scan.Step());
    if (!row) break;
    sums.Add(scan.IsNull(0) ? -1 : scan.Int(0), scan.Int(1), scan.Int(2));  // -1: no name
  }
  sums.WriteTo(strings, header);
  return absl::OkStatus();
}

}  // namespace qprof::importers
