#include "analysis/importers/nsys/nsys_importer.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/common/launch_context.h"
#include "analysis/importers/nsys/sqlite_db.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

constexpr int kNvtxPushPop = 59;
constexpr int kNvtxStartEnd = 60;

uint32_t PidOf(int64_t global) { return static_cast<uint32_t>((global >> 24) & 0xFFFFFF); }
uint64_t TidOf(int64_t global) { return static_cast<uint64_t>(global & 0xFFFFFF); }

// CUpti_ActivityMemcpyKind.
const char* CopyKindName(int64_t k) {
  switch (k) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return "unknown";
  }
}

// Launch key: correlation ids are per process, so the process is part of the key.
struct LaunchKey {
  uint32_t pid;
  int64_t correlation;
  bool operator<(const LaunchKey& o) const {
    return pid != o.pid ? pid < o.pid : correlation < o.correlation;
  }
  bool operator==(const LaunchKey& o) const {
    return pid == o.pid && correlation == o.correlation;
  }
};

class NsysReader {
 public:
  NsysReader(SqliteDb* db, const std::string& path, const ImportOptions& options)
      : db_(db), path_(path), options_(options) {}

  absl::StatusOr<proto::Trace> Run() {
    ASSIGN_OR_RETURN(bool has_kernels, db_->HasTable("CUPTI_ACTIVITY_KIND_KERNEL"));
    ASSIGN_OR_RETURN(bool has_strings, db_->HasTable("StringIds"));
    ASSIGN_OR_RETURN(bool has_memcpy, db_->HasTable("CUPTI_ACTIVITY_KIND_MEMCPY"));
    ASSIGN_OR_RETURN(bool has_memset, db_->HasTable("CUPTI_ACTIVITY_KIND_MEMSET"));
    ASSIGN_OR_RETURN(bool has_nvtx, db_->HasTable("NVTX_EVENTS"));
    ASSIGN_OR_RETURN(bool has_runtime, db_->HasTable("CUPTI_ACTIVITY_KIND_RUNTIME"));
    if (!has_kernels && !has_strings && !has_memcpy && !has_nvtx && !has_runtime) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": SQLite database but not an Nsight Systems export (no StringIds or "
                 "CUPTI_ACTIVITY_KIND_* tables)"));
    }
    FillImportedHeader(&trace_, path_, "nsys-sqlite");
    if (has_strings) RETURN_IF_ERROR(ReadStrings());
    if (has_kernels) RETURN_IF_ERROR(ReadKernels());
    if (has_memcpy) RETURN_IF_ERROR(ReadCopies("CUPTI_ACTIVITY_KIND_MEMCPY", true));
    if (has_memset) RETURN_IF_ERROR(ReadCopies("CUPTI_ACTIVITY_KIND_MEMSET", false));
    if (has_runtime) RETURN_IF_ERROR(ReadRuntime());
    if (has_nvtx) RETURN_IF_ERROR(ReadNvtx());
    for (const Launch& l : launches_) {
      if (l.runtime_tid >= 0) {
        nester_.AddLaunch({PidOf(l.runtime_tid), TidOf(l.runtime_tid)}, l.runtime_start,
                          l.index);
        contexts_.AddLaunch({PidOf(l.runtime_tid), TidOf(l.runtime_tid)}, l.runtime_start,
                            l.index, l.runtime_api >= 0 ? ApiName(l.runtime_api) : "");
      }
    }
    nester_.Resolve(&trace_);
    ResolveContexts(has_runtime);
    RETURN_IF_ERROR(ReadDevices());
    SortActivities(&trace_);
    proto::CollectorStats* c = trace_.mutable_header()->mutable_collector();
    c->set_records_total(static_cast<uint64_t>(trace_.activities_size()));
    c->set_records_invalid(invalid_);
    if (invalid_ > 0) {
      c->add_warnings(absl::StrCat(invalid_, " activity rows with end < start were kept with "
                                             "zero duration"));
    }
    if (!has_kernels) c->add_warnings("no CUPTI_ACTIVITY_KIND_KERNEL table: no kernels");
    if (unlaunched_ > 0 && has_runtime) {
      c->add_warnings(absl::StrCat(unlaunched_, " kernels have no runtime launch record with "
                                                "their correlation id: no NVTX path"));
    }
    progress_.Finish();
    return std::move(trace_);
  }

 private:
  struct Launch {
    LaunchKey key;
    int index;
    int64_t runtime_tid = -1;
    int64_t runtime_start = 0;
    int64_t runtime_api = -1;  // StringIds id of the runtime call's name
  };

  std::string ApiName(int64_t id) const {
    auto it = strings_.find(id);
    if (it == strings_.end()) return "";
    // nsys names carry the API version: "cudaLaunchKernel_v7000".
    std::string name = it->second;
    size_t v = name.rfind("_v");
    if (v != std::string::npos && v + 2 < name.size() &&
        name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
      name.resize(v);
    }
    return name;
  }

  // Launch contexts from the NVTX push/pop ranges (launch_context.h) and their counts.
  void ResolveContexts(bool has_runtime) {
    proto::LaunchContextStats* cs = trace_.mutable_header()->mutable_launch_context_stats();
    contexts_.Resolve(&trace_, cs);
    cs->set_method("nsys: NVTX push/pop ranges open on the thread of the CUDA runtime call "
                   "with the kernel's correlation id");
    for (const Launch& l : launches_) {
      if (trace_.activities(l.index).kind() != proto::ACTIVITY_KIND_KERNEL) continue;
      cs->set_kernels(cs->kernels() + 1);
      if (has_runtime && l.runtime_tid < 0) cs->set_no_launch_record(cs->no_launch_record() + 1);
      // Kernels of a graph launch carry the graph's ids; the runtime call may be missing.
      const proto::Activity& a = trace_.activities(l.index);
      if (a.graph_id() != 0 && !a.launch_context().graph_launch()) {
        trace_.mutable_activities(l.index)->mutable_launch_context()->set_graph_launch(true);
        cs->set_graph_launches(cs->graph_launches() + 1);
      }
    }
  }

  absl::Status ReadStrings() {
    ASSIGN_OR_RETURN(SqliteStmt st, db_->Prepare("SELECT id, value FROM StringIds"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      if (st.IsNull(1)) continue;
      strings_.emplace(st.Int(0), Utf8Clean(st.Text(1)));
    }
    return absl::OkStatus();
  }

  const std::string* StringById(const SqliteStmt& st, int col) const {
    if (col < 0 || st.IsNull(col)) return nullptr;
    auto it = strings_.find(st.Int(col));
    return it == strings_.end() ? nullptr : &it->second;
  }

  // Column indexes shared by kernels, memcpys and memsets (-1 when absent).
  struct ActCols {
    explicit ActCols(const Columns& c)
        : start(c.Index("start")), end(c.Index("end")), device(c.Index("deviceId")),
          stream(c.Index("streamId")), corr(c.Index("correlationId")),
          gpid(c.Index("globalPid")), graph_node(c.Index("graphNodeId")),
          graph(c.Index("graphId")) {}
    int start, end, device, stream, corr, gpid, graph_node, graph;
  };

  void FillCommon(const SqliteStmt& st, const ActCols& c, proto::Activity* a) {
    int64_t start = st.Int(c.start), end = st.Int(c.end);
    if (end < start) {
      ++invalid_;
      end = start;
    }
    a->set_start_ns(start);
    a->set_end_ns(end);
    a->set_device_id(static_cast<uint32_t>(st.Int(c.device)));
    a->set_stream_id(static_cast<uint64_t>(st.Int(c.stream)));
    a->set_correlation_id(static_cast<uint64_t>(st.Int(c.corr)));
    int64_t gpid = st.Int(c.gpid);
    a->set_pid(PidOf(gpid));
    a->set_graph_node_id(static_cast<uint64_t>(st.Int(c.graph_node)));
    a->set_graph_id(static_cast<uint64_t>(st.Int(c.graph)));
    if (c.corr >= 0) {
      launches_.push_back({{PidOf(gpid), st.Int(c.corr)}, trace_.activities_size() - 1});
    }
  }

  absl::Status ReadKernels() {
    const char* table = "CUPTI_ACTIVITY_KIND_KERNEL";
    ASSIGN_OR_RETURN(Columns c, db_->TableColumns(table));
    ASSIGN_OR_RETURN(int64_t total, db_->CountRows(table));
    ASSIGN_OR_RETURN(SqliteStmt st, db_->Prepare(c.SelectAll(table)));
    const ActCols ac(c);
    const int demangled = c.Index("demangledName"), short_name = c.Index("shortName"),
              mangled = c.Index("mangledName"), text_name = c.Index("name");
    const int grid[3] = {c.Index("gridX"), c.Index("gridY"), c.Index("gridZ")};
    const int block[3] = {c.Index("blockX"), c.Index("blockY"), c.Index("blockZ")};
    const int regs = c.Index("registersPerThread"), smem = c.Index("staticSharedMemory"),
              dmem = c.Index("dynamicSharedMemory");
    int64_t n = 0;
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      progress_.Update(static_cast<uint64_t>(++n), static_cast<uint64_t>(total), "kernel rows");
      proto::Activity* a = trace_.add_activities();
      a->set_kind(proto::ACTIVITY_KIND_KERNEL);
      FillCommon(st, ac, a);
      const std::string* name = StringById(st, demangled);
      if (name == nullptr && text_name >= 0 && !st.IsNull(text_name)) {
        a->set_name(Utf8Clean(st.Text(text_name)));
      } else {
        if (name == nullptr) name = StringById(st, short_name);
        if (name == nullptr) name = StringById(st, mangled);
        a->set_name(name != nullptr ? *name : "unknown kernel");
      }
      if (const std::string* m = StringById(st, mangled)) a->set_mangled_name(*m);
      auto u32 = [&st](int col) { return static_cast<uint32_t>(st.Int(col)); };
      a->mutable_grid()->set_x(u32(grid[0]));
      a->mutable_grid()->set_y(u32(grid[1]));
      a->mutable_grid()->set_z(u32(grid[2]));
      a->mutable_block()->set_x(u32(block[0]));
      a->mutable_block()->set_y(u32(block[1]));
      a->mutable_block()->set_z(u32(block[2]));
      a->set_registers_per_thread(u32(regs));
      a->set_static_shared_bytes(u32(smem));
      a->set_dynamic_shared_bytes(u32(dmem));
    }
    return absl::OkStatus();
  }

  absl::Status ReadCopies(const char* table, bool is_memcpy) {
    ASSIGN_OR_RETURN(Columns c, db_->TableColumns(table));
    ASSIGN_OR_RETURN(SqliteStmt st, db_->Prepare(c.SelectAll(table)));
    const ActCols ac(c);
    const int bytes = c.Index("bytes"), copy_kind = c.Index("copyKind");
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      proto::Activity* a = trace_.add_activities();
      a->set_kind(is_memcpy ? proto::ACTIVITY_KIND_MEMCPY : proto::ACTIVITY_KIND_MEMSET);
      FillCommon(st, ac, a);
      a->set_bytes(static_cast<uint64_t>(st.Int(bytes)));
      if (is_memcpy) {
        const char* kind = CopyKindName(st.Int(copy_kind));
        a->set_copy_kind(kind);
        a->set_name(absl::StrCat("Memcpy ", kind));
      } else {
        a->set_name("Memset");
      }
    }
    return absl::OkStatus();
  }

  // For every activity launch, the thread and start of its runtime API call. When several
  // runtime rows share a key (nsys 2022 writes cudaLaunchKernel and _v7000), the earliest.
  absl::Status ReadRuntime() {
    const char* table = "CUPTI_ACTIVITY_KIND_RUNTIME";
    ASSIGN_OR_RETURN(Columns c, db_->TableColumns(table));
    if (!c.Has("correlationId") || !c.Has("globalTid") || !c.Has("start")) {
      trace_.mutable_header()->mutable_collector()->add_warnings(
          "CUPTI_ACTIVITY_KIND_RUNTIME lacks correlationId/globalTid/start: no NVTX paths");
      return absl::OkStatus();
    }
    std::sort(launches_.begin(), launches_.end(),
              [](const Launch& a, const Launch& b) { return a.key < b.key; });
    const bool has_name = c.Has("nameId");
    ASSIGN_OR_RETURN(SqliteStmt st,
                     db_->Prepare(absl::StrCat("SELECT globalTid, correlationId, start",
                                               has_name ? ", nameId" : "", " FROM ", table)));
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      int64_t gtid = st.Int(0);
      LaunchKey key{PidOf(gtid), st.Int(1)};
      int64_t start = st.Int(2);
      auto it = std::lower_bound(launches_.begin(), launches_.end(), key,
                                 [](const Launch& l, const LaunchKey& k) { return l.key < k; });
      for (; it != launches_.end() && it->key == key; ++it) {
        if (it->runtime_tid < 0 || start < it->runtime_start) {
          it->runtime_tid = gtid;
          it->runtime_start = start;
          it->runtime_api = has_name && !st.IsNull(3) ? st.Int(3) : -1;
        }
      }
    }
    for (const Launch& l : launches_) {
      if (l.runtime_tid < 0) {
        if (trace_.activities(l.index).kind() == proto::ACTIVITY_KIND_KERNEL) ++unlaunched_;
        continue;
      }
      proto::Activity* a = trace_.mutable_activities(l.index);
      a->set_pid(PidOf(l.runtime_tid));
      a->set_tid(TidOf(l.runtime_tid));
    }
    return absl::OkStatus();
  }

  absl::Status ReadNvtx() {
    ASSIGN_OR_RETURN(Columns c, db_->TableColumns("NVTX_EVENTS"));
    if (!c.Has("start") || !c.Has("eventType")) return absl::OkStatus();
    ASSIGN_OR_RETURN(SqliteStmt st, db_->Prepare(c.SelectAll("NVTX_EVENTS")));
    const int text = c.Index("text"), text_id = c.Index("textId"), end = c.Index("end");
    const int type_col = c.Index("eventType"), tid_col = c.Index("globalTid"),
              start_col = c.Index("start");
    while (true) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      int64_t type = st.Int(type_col);
      if (type != kNvtxPushPop && type != kNvtxStartEnd) continue;
      std::string name;
      if (text >= 0 && !st.IsNull(text)) {
        name = Utf8Clean(st.Text(text));
      } else if (const std::string* s = StringById(st, text_id)) {
        name = *s;
      }
      int64_t gtid = st.Int(tid_col);
      int64_t start = st.Int(start_col);
      int64_t stop = (end < 0 || st.IsNull(end)) ? RangeNester::kOpenEnd : st.Int(end);
      if (type == kNvtxPushPop) {
        contexts_.AddFrame({PidOf(gtid), TidOf(gtid)}, start, stop, name, "nvtx");
        nester_.AddRange({PidOf(gtid), TidOf(gtid)}, start, stop, std::move(name));
      } else {
        // Start/end ranges may end on another thread: kept as ranges, not in paths.
        proto::NvtxRange* r = trace_.add_ranges();
        r->set_path(name);
        r->set_name(name);
        r->set_start_ns(start);
        r->set_end_ns(stop == RangeNester::kOpenEnd ? start : stop);
        r->set_pid(PidOf(gtid));
        r->set_tid(TidOf(gtid));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadDevices() {
    std::vector<uint32_t> seen;
    for (const proto::Activity& a : trace_.activities()) seen.push_back(a.device_id());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    ASSIGN_OR_RETURN(bool has_gpu, db_->HasTable("TARGET_INFO_GPU"));
    std::unordered_set<uint32_t> described;
    if (has_gpu) {
      ASSIGN_OR_RETURN(Columns c, db_->TableColumns("TARGET_INFO_GPU"));
      ASSIGN_OR_RETURN(SqliteStmt st, db_->Prepare(c.SelectAll("TARGET_INFO_GPU")));
      const int name = c.Index("name");
      while (true) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        auto col = [&st, &c](const char* n) { return st.Int(c.Index(n)); };
        uint32_t id = static_cast<uint32_t>(col("id"));
        if (!described.insert(id).second) continue;
        proto::DeviceInfo* d = trace_.mutable_header()->add_devices();
        d->set_id(id);
        d->set_kind("gpu");
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
    } else {
      trace_.mutable_header()->mutable_collector()->add_warnings(
          "no TARGET_INFO_GPU table: device names unknown");
    }
    for (uint32_t id : seen) {
      if (described.count(id)) continue;
      proto::DeviceInfo* d = trace_.mutable_header()->add_devices();
      d->set_id(id);
      d->set_kind("gpu");
      d->set_name("unknown");
    }
    return absl::OkStatus();
  }

  SqliteDb* db_;
  const std::string& path_;
  const ImportOptions& options_;
  Progress progress_{options_.progress, "reading " + path_};
  proto::Trace trace_;
  std::unordered_map<int64_t, std::string> strings_;
  std::vector<Launch> launches_;
  RangeNester nester_;
  LaunchContextBuilder contexts_;
  uint64_t invalid_ = 0;
  uint64_t unlaunched_ = 0;
};

}  // namespace

absl::StatusOr<proto::Trace> ImportNsysDb(SqliteDb* db, const std::string& path,
                                          const ImportOptions& options) {
  NsysReader reader(db, path, options);
  return reader.Run();
}

absl::StatusOr<proto::Trace> ImportNsysSqlite(const std::string& path,
                                              const ImportOptions& options) {
  ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::OpenReadOnly(path));
  return ImportNsysDb(&db, path, options);
}

}  // namespace qprof::importers
