#include "analysis/importers/nsys/nsys_importer.h"

#include <map>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <memory>
#include <set>
#include <thread>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/common/launch_context.h"
#include "analysis/importers/nsys/graph_nodes.h"
#include "analysis/importers/nsys/launch_join.h"
#include "analysis/importers/nsys/nsys_columns.h"
#include "analysis/importers/nsys/nsys_tables.h"
#include "analysis/importers/nsys/row_reader.h"
#include "analysis/importers/nsys/sqlite_db.h"
#include "base/status_macros.h"

namespace qprof::importers {
namespace {

constexpr int kNvtxPushPop = 59;
constexpr int kNvtxStartEnd = 60;
constexpr char kKernelTable[] = "CUPTI_ACTIVITY_KIND_KERNEL";
constexpr char kRuntimeTable[] = "CUPTI_ACTIVITY_KIND_RUNTIME";
// Tables from this many rows on are read on threads of their own (RowReader, host calls).
constexpr int64_t kReadAheadRows = 2000;

uint32_t PidOf(int64_t global) { return static_cast<uint32_t>((global >> 24) & 0xFFFFFF); }
uint64_t TidOf(int64_t global) { return static_cast<uint64_t>(global & 0xFFFFFF); }

struct ActivityTable {
  const char* name;
  proto::ActivityKind kind;
};
// Copies before kernels: the analysis keeps a device's kernels and copies in one interval union
// (exposed copy time, aggregate/overlap.h), which stays exact while whatever arrives second
// lands after its folded part. Kernels arrive in time order and fill the union; copies, usually
// far fewer, read first leave it exact unless they alone make thousands of disjoint pieces.
constexpr ActivityTable kActivityTables[] = {
    {"CUPTI_ACTIVITY_KIND_MEMCPY", proto::ACTIVITY_KIND_MEMCPY},
    {"CUPTI_ACTIVITY_KIND_MEMSET", proto::ACTIVITY_KIND_MEMSET},
    {kKernelTable, proto::ACTIVITY_KIND_KERNEL},
};

// Streams one nsys export into a sink. Steps, each a function: strings, devices, NVTX
// ranges (indexed per thread), then each activity table, every row joined to its runtime
// launch (RuntimeJoin, or the exact SQL join when that reports the tables out of order)
// and given the NVTX path open on the launching thread; last the header with what was seen.
class NsysReader {
 public:
  // `begin`: call sink->Begin (false on the second try, after a Reset).
  NsysReader(SqliteDb* db, const std::string& path, const ImportOptions& options,
             TraceSink* sink, bool exact_join, bool begin)
      : db_(db), path_(path), options_(options), sink_(sink), exact_join_(exact_join),
        begin_(begin) {}
  ~NsysReader() {
    if (host_thread_.joinable()) host_thread_.join();
  }

  // Aborted when the streaming join finds the tables out of order (try again exactly).
  absl::Status Run() {
    FillImportedHeader(&trace_header_, path_, "nsys-sqlite");
    ASSIGN_OR_RETURN(has_kernels_, db_->HasTable(kKernelTable));
    ASSIGN_OR_RETURN(bool has_strings, db_->HasTable("StringIds"));
    if (has_strings) RETURN_IF_ERROR(Guard("StringIds", ReadStrings()));
    StartHostCalls();
    RETURN_IF_ERROR(ReadDevices());
    RETURN_IF_ERROR(Guard("ENUM_CUDA_MEM_KIND", ReadMemoryKinds()));
    if (begin_) sink_->Begin(trace_header_);
    RETURN_IF_ERROR(PrepareJoin());
    // Graph nodes first: whether they exist decides the activity tables' columns.
    RETURN_IF_ERROR(Guard(GraphNodeIndex::kTable, graph_nodes_.Read(db_)));
    // The activity tables are opened before the NVTX ranges are read, so that their rows
    // (and their launch joins') are decoded on worker threads meanwhile.
    std::vector<TableRead> tables;
    for (const ActivityTable& t : kActivityTables) {
      ASSIGN_OR_RETURN(bool has, db_->HasTable(t.name));
      if (has) tables.push_back(OpenActivities(t));
    }
    ASSIGN_OR_RETURN(bool has_nvtx, db_->HasTable("NVTX_EVENTS"));
    if (has_nvtx) RETURN_IF_ERROR(Guard("NVTX_EVENTS", ReadRanges()));
    for (TableRead& t : tables) {
      RETURN_IF_ERROR(Guard(t.table->name, ReadActivities(t)));
      t = TableRead();  // its reader threads are done: let them go now
    }
    RETURN_IF_ERROR(Guard(kRuntimeTable, ReadHostCalls()));
    FinishHeader();
    sink_->End(trace_header_, truncated_, truncation_detail_);
    progress_.Finish();
    return absl::OkStatus();
  }

 private:
  // A file cut short reads as a corrupt database from some page on: keep what came before
  // and say where reading stopped.
  absl::Status Guard(const char* table, absl::Status s) {
    if (!absl::IsDataLoss(s)) return s;
    if (!truncated_) {
      truncated_ = true;
      truncation_detail_ = absl::StrCat("stopped in ", table, ": ", s.message());
    }
    return absl::OkStatus();
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

  template <typename Row>  // SqliteStmt or RowReader
  const std::string* StringById(const Row& st, int col) const {
    if (col < 0 || st.IsNull(col)) return nullptr;
    auto it = strings_.find(st.Int(col));
    return it == strings_.end() ? nullptr : &it->second;
  }

  absl::Status ReadDevices();
  absl::Status ReadMemoryKinds();
  const std::string& MemoryKind(const RowReader& st, int col);
  absl::Status PrepareJoin();
  absl::Status ReadRanges();
  // One activity table's reading: its rows and its launch join's runtime rows.
  struct TableRead {
    const ActivityTable* table = nullptr;
    absl::Status opened;  // an error opening it, reported in table order (Guard)
    bool join = false;
    bool is_kernel = false;
    bool host_sums = false;  // its launch join also sums the host calls (column 4: end)
    int64_t total = 0;  // estimated rows, for progress lines
    RowColumns rc;
    std::unique_ptr<RowReader> rows;
    std::unique_ptr<RowReader> runtime;  // the streaming join's (absent for the exact one)
  };
  TableRead OpenActivities(const ActivityTable& table);
  absl::Status OpenActivitiesOrError(TableRead* t);
  absl::Status ReadActivities(TableRead& t);
  void StartHostCalls();
  bool FoldHostCalls();
  absl::Status ReadHostCalls();
  void FillActivity(const RowReader& st, const RowColumns& c, proto::ActivityKind kind,
                    proto::Activity* a);
  void SetLaunch(int64_t global_tid, int64_t start, int64_t api_name_id, proto::Activity* a);
  void SetCaptureContext(proto::Activity* a);
  const std::string& ApiName(int64_t id);
  void FinishHeader();

  SqliteDb* db_;
  const std::string& path_;
  const ImportOptions& options_;
  TraceSink* sink_;
  const bool exact_join_;
  const bool begin_;
  bool has_kernels_ = false;
  Progress progress_{options_.progress, "reading " + path_};
  proto::TraceHeader trace_header_;
  std::unordered_map<int64_t, std::string> strings_;
  std::unordered_map<int64_t, std::string> api_names_;
  std::unordered_map<int64_t, std::string> memory_kinds_;  // ENUM_CUDA_MEM_KIND, lower case
  std::unordered_set<uint32_t> described_;
  std::set<uint32_t> seen_devices_;
  RangeIndex ranges_;
  // Launch contexts: the NVTX push/pop frames per thread and the trace's stack tables.
  LaunchContextBuilder contexts_;
  LaunchStackTable stack_table_{trace_header_.mutable_launch_context_stats()};
  GraphNodeIndex graph_nodes_;
  uint64_t node_kernels_ = 0, node_no_creation_ = 0, node_no_frames_ = 0;
  uint64_t context_kernels_ = 0;
  bool can_join_ = false;       // the runtime table has what the join needs
  bool runtime_has_name_ = false;
  std::vector<std::string> join_warnings_, device_warnings_;
  uint64_t activities_ = 0;
  uint64_t invalid_ = 0;
  uint64_t unlaunched_ = 0;
  bool truncated_ = false;
  std::string truncation_detail_;
  // Host-call sums read on their own thread and connection (StartHostCalls).
  std::thread host_thread_;
  proto::TraceHeader host_header_;
  absl::Status host_status_;
  // Or summed by the kernel table's launch join (FoldHostCalls): folded once it read all.
  bool fold_host_ = false;
  bool host_folded_ = false;
  HostCallSums host_sums_;
};

absl::Status NsysReader::ReadDevices() {
  absl::Status st = ReadNsysDevices(db_, &trace_header_, &described_, &device_warnings_);
  return Guard("TARGET_INFO_GPU", st);
}

// The export's own labels for memory kinds, when it has the table ("Pageable" -> "pageable").
absl::Status NsysReader::ReadMemoryKinds() {
  for (int64_t k = 0; k <= 7; ++k) memory_kinds_[k] = MemoryKindName(k);
  ASSIGN_OR_RETURN(bool has, db_->HasTable("ENUM_CUDA_MEM_KIND"));
  if (!has) return absl::OkStatus();
  ASSIGN_OR_RETURN(Columns c, db_->TableColumns("ENUM_CUDA_MEM_KIND"));
  if (!c.Has("id") || !c.Has("label")) return absl::OkStatus();
  ASSIGN_OR_RETURN(SqliteStmt st, db_->Prepare("SELECT id, label FROM ENUM_CUDA_MEM_KIND"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (st.IsNull(1)) continue;
    memory_kinds_[st.Int(0)] = absl::AsciiStrToLower(Utf8Clean(st.Text(1)));
  }
  return absl::OkStatus();
}

const std::string& NsysReader::MemoryKind(const RowReader& st, int col) {
  static const std::string kNone;
  if (col < 0 || st.IsNull(col)) return kNone;
  auto [it, inserted] = memory_kinds_.try_emplace(st.Int(col), "unknown");
  return it->second;
}

absl::Status NsysReader::PrepareJoin() {
  ASSIGN_OR_RETURN(bool has_runtime, db_->HasTable(kRuntimeTable));
  if (!has_runtime) return absl::OkStatus();
  ASSIGN_OR_RETURN(Columns c, db_->TableColumns(kRuntimeTable));
  can_join_ = c.Has("correlationId") && c.Has("globalTid") && c.Has("start");
  runtime_has_name_ = c.Has("nameId");
  if (!can_join_) {
    join_warnings_.push_back(
        "CUPTI_ACTIVITY_KIND_RUNTIME lacks correlationId/globalTid/start: no NVTX paths");
  }
  return absl::OkStatus();
}

// The host-call sums scan the whole runtime table, which nothing else needs in full: on a
// large file they are read on a thread with a connection of their own while the activities
// are read, instead of after them.
void NsysReader::StartHostCalls() {
  fold_host_ = FoldHostCalls();
  if (fold_host_ || options_.threads == 1 || !db_->is_file()) return;
  absl::StatusOr<bool> has = db_->HasTable(kRuntimeTable);
  if (!has.ok() || !*has) return;
  absl::StatusOr<int64_t> rows = db_->EstimateRows(kRuntimeTable);
  if (!rows.ok() || *rows < kReadAheadRows) return;
  absl::StatusOr<SqliteDb> again = SqliteDb::OpenReadOnly(db_->path());
  if (!again.ok()) return;  // then read after the activities, on this connection
  again->LimitCache(RowReader::kCacheKib);
  host_thread_ = std::thread([this, db = std::make_shared<SqliteDb>(*std::move(again))] {
    host_status_ = ReadNsysHostCalls(db.get(), strings_, &host_header_);
  });
}

// The kernel table's launch join reads every runtime row anyway (the rows it needs, then
// the rest, RuntimeJoin::Drain): the host-call sums ride along when it has what both need.
bool NsysReader::FoldHostCalls() {
  if (exact_join_) return false;
  absl::StatusOr<bool> has = NsysHasHostCalls(db_);
  if (!has.ok() || !*has) return false;
  absl::StatusOr<bool> kernels = db_->HasTable(kKernelTable);
  if (!kernels.ok() || !*kernels) return false;
  absl::StatusOr<Columns> k = db_->TableColumns(kKernelTable);
  absl::StatusOr<Columns> r = db_->TableColumns(kRuntimeTable);
  return k.ok() && r.ok() && k->Has("correlationId") && r->Has("correlationId") &&
         r->Has("globalTid");
}

absl::Status NsysReader::ReadHostCalls() {
  if (host_folded_) {
    host_sums_.WriteTo(strings_, &trace_header_);
    return absl::OkStatus();
  }
  // Also when folding was meant but the kernel table stopped early: the scan then says why.
  if (!host_thread_.joinable()) return ReadNsysHostCalls(db_, strings_, &trace_header_);
  host_thread_.join();
  if (host_header_.has_host_calls()) {
    *trace_header_.mutable_host_calls() = std::move(*host_header_.mutable_host_calls());
  }
  return host_status_;
}

// Push/pop ranges go into the per-thread index that gives launches their paths; start/end
// ranges (which may end on another thread) are kept as ranges only.
absl::Status NsysReader::ReadRanges() {
  ASSIGN_OR_RETURN(Columns c, db_->TableColumns("NVTX_EVENTS"));
  if (!c.Has("start") || !c.Has("eventType")) return absl::OkStatus();
  // Only the columns read, and only push/pop and start/end ranges (marks, domains and
  // categories are other event types): NVTX_EVENTS also holds payloads and JSON text.
  std::vector<std::string> cols;
  auto pick = [&](const char* name) {
    if (!c.Has(name)) return -1;
    cols.push_back(absl::StrCat("\"", name, "\""));
    return static_cast<int>(cols.size() - 1);
  };
  const int start_col = pick("start"), type_col = pick("eventType"), end = pick("end");
  const int text = pick("text"), text_id = pick("textId"), tid_col = pick("globalTid");
  // Decoded on a worker thread (RowReader) while this one indexes the rows before.
  ASSIGN_OR_RETURN(int64_t rows_estimate, db_->EstimateRows("NVTX_EVENTS"));
  // Room for the ranges of a small export at once (no rehashing of the names as they come);
  // a large one grows as it goes, holding no more than its ranges need.
  ranges_.Reserve(static_cast<size_t>(std::clamp<int64_t>(rows_estimate, 0, 1 << 16)));
  ASSIGN_OR_RETURN(std::unique_ptr<RowReader> rows,
                   RowReader::Open(db_,
                                   absl::StrCat("SELECT ", absl::StrJoin(cols, ", "),
                                                " FROM NVTX_EVENTS WHERE eventType IN (",
                                                kNvtxPushPop, ", ", kNvtxStartEnd, ")"),
                                   {text}, options_.threads != 1 && rows_estimate >= kReadAheadRows));
  const RowReader& st = *rows;
  absl::Status status;
  proto::NvtxRange r;
  std::string repaired;  // a name that was not valid UTF-8, repaired
  std::string stripped;  // a name without its per-call numbers (StripNvtxCallNumbers)
  while (true) {
    absl::StatusOr<bool> row = rows->Next();
    if (!row.ok()) {
      status = row.status();  // the ranges read so far still give paths
      break;
    }
    if (!*row) break;
    int64_t type = st.Int(type_col);
    if (type != kNvtxPushPop && type != kNvtxStartEnd) continue;
    // The row's own text as it is when it is valid UTF-8 (nearly always): no copy per range.
    std::string_view name;
    if (text >= 0 && !st.IsNull(text)) {
      name = st.Text(text);
      if (!IsValidUtf8(name)) {
        repaired = Utf8Clean(name);
        name = repaired;
      }
    } else if (const std::string* s = StringById(st, text_id)) {
      name = *s;
    }
    int64_t gtid = st.Int(tid_col);
    int64_t start = st.Int(start_col);
    int64_t stop = (end < 0 || st.IsNull(end)) ? RangeIndex::kOpenEnd : st.Int(end);
    if (type == kNvtxPushPop) {
      // Per-call numbers out of emit_nvtx names: frames stay as many as the distinct ops and
      // shapes (their sizes are kept: analysis/work reads them).
      contexts_.AddFrame({PidOf(gtid), TidOf(gtid)}, start,
                         stop == RangeIndex::kOpenEnd ? LaunchContextBuilder::kOpenEnd : stop,
                         StripNvtxCallNumbers(name, &stripped), "nvtx");
      ranges_.AddRange({PidOf(gtid), TidOf(gtid)}, start, stop, name);
    } else {
      r.set_path(name.data(), name.size());
      r.set_name(name.data(), name.size());
      r.set_start_ns(start);
      r.set_end_ns(stop == RangeIndex::kOpenEnd ? start : stop);
      r.set_pid(PidOf(gtid));
      r.set_tid(TidOf(gtid));
      sink_->Range(r);
    }
  }
  ranges_.Build([this](const proto::NvtxRange& nr) { sink_->Range(nr); });
  contexts_.Build();
  return status;
}

void NsysReader::FillActivity(const RowReader& st, const RowColumns& c,
                              proto::ActivityKind kind, proto::Activity* a) {
  a->set_kind(kind);
  int64_t start = st.Int(c[kStart]), end = st.Int(c[kEnd]);
  if (end < start) {
    ++invalid_;
    end = start;
  }
  a->set_start_ns(start);
  a->set_end_ns(end);
  a->set_device_id(static_cast<uint32_t>(st.Int(c[kDevice])));
  a->set_stream_id(static_cast<uint64_t>(st.Int(c[kStream])));
  a->set_correlation_id(static_cast<uint64_t>(st.Int(c[kCorr])));
  a->set_pid(PidOf(st.Int(c[kGpid])));
  if (c[kGraphNode] >= 0) a->set_graph_node_id(static_cast<uint64_t>(st.Int(c[kGraphNode])));
  if (c[kGraph] >= 0) a->set_graph_id(static_cast<uint64_t>(st.Int(c[kGraph])));
  seen_devices_.insert(a->device_id());
  if (kind == proto::ACTIVITY_KIND_MEMCPY) {
    a->set_bytes(static_cast<uint64_t>(st.Int(c[kBytes])));
    const char* copy = CopyKindName(st.Int(c[kCopyKind]));
    a->set_copy_kind(copy);
    a->set_name(absl::StrCat("Memcpy ", copy));
    a->set_src_memory(MemoryKind(st, c[kSrcKind]));
    a->set_dst_memory(MemoryKind(st, c[kDstKind]));
    return;
  }
  if (kind == proto::ACTIVITY_KIND_MEMSET) {
    a->set_bytes(static_cast<uint64_t>(st.Int(c[kBytes])));
    a->set_name("Memset");
    a->set_dst_memory(MemoryKind(st, c[kMemKind]));
    return;
  }
  const std::string* name = StringById(st, c[kDemangled]);
  if (name == nullptr && !st.IsNull(c[kTextName])) {
    a->set_name(Utf8Clean(st.Text(c[kTextName])));
  } else {
    if (name == nullptr) name = StringById(st, c[kShortName]);
    if (name == nullptr) name = StringById(st, c[kMangled]);
    a->set_name(name != nullptr ? *name : "unknown kernel");
  }
  if (const std::string* m = StringById(st, c[kMangled])) a->set_mangled_name(*m);
  if (c[kGridX] < 0 && c[kBlockX] < 0 && c[kRegs] < 0) return;  // not read (or absent)
  auto u32 = [&st, &c](Col col) { return static_cast<uint32_t>(st.Int(c[col])); };
  a->mutable_grid()->set_x(u32(kGridX));
  a->mutable_grid()->set_y(u32(kGridY));
  a->mutable_grid()->set_z(u32(kGridZ));
  a->mutable_block()->set_x(u32(kBlockX));
  a->mutable_block()->set_y(u32(kBlockY));
  a->mutable_block()->set_z(u32(kBlockZ));
  a->set_registers_per_thread(u32(kRegs));
  a->set_static_shared_bytes(u32(kStaticSmem));
  a->set_dynamic_shared_bytes(u32(kDynamicSmem));
}

// The runtime call's name without the API version nsys appends ("cudaLaunchKernel_v7000");
// a few distinct ids, each trimmed once.
const std::string& NsysReader::ApiName(int64_t id) {
  auto [cached, inserted] = api_names_.try_emplace(id);
  if (!inserted) return cached->second;
  auto it = strings_.find(id);
  if (it == strings_.end()) return cached->second;
  std::string name = it->second;
  size_t v = name.rfind("_v");
  if (v != std::string::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
    name.resize(v);
  }
  cached->second = std::move(name);
  return cached->second;
}

// Launch context: the launching thread, the NVTX path open on it at the launch call, and the
// stack of NVTX push/pop frames open there (a new stack goes to the sink before the record).
void NsysReader::SetLaunch(int64_t global_tid, int64_t start, int64_t api_name_id,
                           proto::Activity* a) {
  const ThreadKey thread{PidOf(global_tid), TidOf(global_tid)};
  a->set_pid(thread.pid);
  a->set_tid(thread.tid);
  a->set_launch_ns(start);
  if (const std::string* path = ranges_.PathAt(thread, start)) a->set_nvtx_path(*path);
  const bool kernel = a->kind() == proto::ACTIVITY_KIND_KERNEL;
  if (contexts_.ContextAt(thread, start,
                          api_name_id >= 0 ? std::string_view(ApiName(api_name_id)) : "", kernel,
                          &stack_table_, a->mutable_launch_context())) {
    sink_->LaunchContexts(trace_header_.launch_context_stats());
  }
}

// A replayed kernel's node, followed back to the launch that created it during capture
// (graph_nodes.h): the NVTX frames open on that thread then are its context, in place of
// the graph launch's. Its nvtx_path stays the replay's (the step it ran in).
void NsysReader::SetCaptureContext(proto::Activity* a) {
  ++node_kernels_;
  const auto created = graph_nodes_.CaptureOf(a->pid(), a->graph_node_id());
  if (!created) {
    ++node_no_creation_;
    return;
  }
  proto::LaunchContext ctx;
  const ThreadKey thread{PidOf(created->global_tid), TidOf(created->global_tid)};
  if (contexts_.ContextAt(thread, created->start, "", false, &stack_table_, &ctx)) {
    sink_->LaunchContexts(trace_header_.launch_context_stats());
  }
  if (ctx.stack() == 0) {
    ++node_no_frames_;
    return;
  }
  proto::LaunchContextStats* cs = trace_header_.mutable_launch_context_stats();
  if (a->launch_context().stack() == 0) cs->set_with_context(cs->with_context() + 1);
  a->mutable_launch_context()->set_stack(ctx.stack());
  a->mutable_launch_context()->set_graph_capture(true);
}

NsysReader::TableRead NsysReader::OpenActivities(const ActivityTable& table) {
  TableRead t;
  t.table = &table;
  t.opened = OpenActivitiesOrError(&t);
  return t;
}

absl::Status NsysReader::OpenActivitiesOrError(TableRead* t) {
  const ActivityTable& table = *t->table;
  ASSIGN_OR_RETURN(Columns c, db_->TableColumns(table.name));
  t->join = can_join_ && c.Has("correlationId");
  t->is_kernel = table.kind == proto::ACTIVITY_KIND_KERNEL;
  ASSIGN_OR_RETURN(t->total, db_->EstimateRows(table.name));
  RowColumns& rc = t->rc;
  const std::string cols =
      SelectList(c, "t.", sink_->WantsLaunchConfig(), !graph_nodes_.empty(), &rc);
  std::string sql = absl::StrCat("SELECT ", cols, " FROM \"", table.name, "\" t");
  if (t->join && exact_join_) {
    const std::string pid = c.Has("globalPid") ? "((t.globalPid >> 24) & 16777215)" : "0";
    const int n = static_cast<int>(std::count(rc.at, rc.at + kColCount, -1));
    rc.rowid = kColCount - n;
    rc.launch_tid = rc.rowid + 1;
    rc.launch_start = rc.rowid + 2;
    if (runtime_has_name_) rc.launch_name = rc.rowid + 3;
    sql = absl::StrCat("SELECT ", cols, ", t.rowid, r.globalTid, r.start",
                       runtime_has_name_ ? ", r.nameId" : "", " FROM \"",
                       table.name, "\" t LEFT JOIN ", kRuntimeTable,
                       " r ON r.correlationId = t.correlationId AND ((r.globalTid >> 24) & "
                       "16777215) = ", pid, " ORDER BY t.rowid, r.start, r.rowid");
  }
  // Tables of some size are decoded on worker threads (row_reader.h) while this thread
  // reads the NVTX ranges and then joins and hands out the rows before; tiny ones are not
  // worth a thread and a connection.
  const bool ahead = options_.threads != 1 && t->total >= kReadAheadRows;
  ASSIGN_OR_RETURN(t->rows, RowReader::Open(db_, sql, {rc[kTextName]}, ahead));
  if (t->join && !exact_join_) {
    t->host_sums = fold_host_ && t->is_kernel;  // nameId is there then (FoldHostCalls)
    ASSIGN_OR_RETURN(t->runtime,
                     RowReader::Open(db_, absl::StrCat("SELECT globalTid, correlationId, start",
                                                       runtime_has_name_ ? ", nameId" : "",
                                                       t->host_sums ? ", \"end\"" : "",
                                                       " FROM ", kRuntimeTable),
                                     {}, ahead));
  }
  return absl::OkStatus();
}

absl::Status NsysReader::ReadActivities(TableRead& t) {
  RETURN_IF_ERROR(t.opened);
  const bool exact_join = exact_join_;
  const ActivityTable& table = *t.table;
  const bool join = t.join;
  const bool is_kernel = t.is_kernel;
  const int64_t total = options_.progress ? t.total : 0;
  const RowColumns& rc = t.rc;
  RowReader& st = *t.rows;
  std::optional<RuntimeJoin> fast;
  if (join && !exact_join) {
    fast.emplace(std::move(t.runtime), RuntimeJoin::kWindow, RuntimeJoin::kRecent,
                 runtime_has_name_);
    if (t.host_sums) {
      // As ReadNsysHostCalls' SQL: rows with a NULL time are left out, a NULL name is -1.
      fast->OnEachRow([this](const RowReader& r) {
        if (r.IsNull(2) || r.IsNull(4)) return;
        host_sums_.Add(r.IsNull(3) ? -1 : r.Int(3), r.Int(2), r.Int(4));
      });
    }
  }
  proto::Activity a;
  int64_t n = 0, last_rowid = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Next());
    if (!row) break;
    if (exact_join && join) {  // one row per runtime match: the first is the earliest
      if (n > 0 && st.Int(rc.rowid) == last_rowid) continue;
      last_rowid = st.Int(rc.rowid);
    }
    if (is_kernel) progress_.Update(static_cast<uint64_t>(++n), static_cast<uint64_t>(total), "kernel rows");
    else ++n;
    // FillActivity sets every field it knows; only those set for some rows need clearing
    // (Clear() would free and reallocate the grid and block messages on every row).
    a.clear_nvtx_path();
    a.clear_tid();
    a.clear_mangled_name();
    a.clear_launch_context();
    a.clear_launch_ns();
    FillActivity(st, rc, table.kind, &a);
    bool launched = false;
    if (join && exact_join) {
      if (!st.IsNull(rc.launch_tid)) {
        SetLaunch(st.Int(rc.launch_tid), st.Int(rc.launch_start),
                  rc.launch_name >= 0 && !st.IsNull(rc.launch_name) ? st.Int(rc.launch_name) : -1,
                  &a);
        launched = true;
      }
    } else if (join) {
      ASSIGN_OR_RETURN(auto launch, fast->Find(PidOf(st.Int(rc[kGpid])), st.Int(rc[kCorr])));
      if (fast->failed()) return absl::AbortedError("runtime rows too far out of order");
      if (launch) {
        SetLaunch(launch->global_tid, launch->start, launch->name_id, &a);
        launched = true;
      }
    }
    if (join && !launched && is_kernel) ++unlaunched_;
    if (is_kernel) {
      ++context_kernels_;
      // Kernels of a graph launch carry the graph's ids; the runtime call may be missing.
      if (a.graph_id() != 0 && !a.launch_context().graph_launch()) {
        a.mutable_launch_context()->set_graph_launch(true);
        proto::LaunchContextStats* cs = trace_header_.mutable_launch_context_stats();
        cs->set_graph_launches(cs->graph_launches() + 1);
      }
      if (a.graph_node_id() != 0 && !graph_nodes_.empty()) SetCaptureContext(&a);
    }
    ++activities_;
    sink_->TakeActivity(&a);
  }
  if (t.host_sums) {
    RETURN_IF_ERROR(fast->Drain());
    host_folded_ = !fast->failed();
  }
  return absl::OkStatus();
}

void NsysReader::FinishHeader() {
  for (uint32_t id : seen_devices_) {
    if (described_.count(id)) continue;
    proto::DeviceInfo* d = trace_header_.add_devices();
    d->set_id(id);
    d->set_kind("gpu");
    d->set_name("unknown");
  }
  proto::LaunchContextStats* cs = trace_header_.mutable_launch_context_stats();
  cs->set_method("nsys: NVTX push/pop ranges open on the thread of the CUDA runtime call "
                 "with the kernel's correlation id");
  cs->set_kernels(context_kernels_);
  cs->set_no_launch_record(unlaunched_);
  if (node_kernels_ > 0) {
    proto::GraphCaptureJoin* j = cs->mutable_graph_capture();
    j->set_method("nsys graph nodes (--cuda-graph-trace=node): each replayed kernel's "
                  "graphNodeId followed through CUDA_GRAPH_NODE_EVENTS.originalGraphNodeId to the "
                  "node created during capture; the NVTX ranges open on its thread then");
    j->set_kernels(node_kernels_);
    j->set_unmatched(node_no_creation_ + node_no_frames_);
    j->set_matched(node_kernels_ - j->unmatched());
    if (node_no_creation_ > 0) {
      j->add_notes(absl::StrCat(node_no_creation_, " kernels: no CUDA_GRAPH_NODE_EVENTS row leads "
                                                   "from their node to its creation during capture"));
    }
    if (node_no_frames_ > 0) {
      j->add_notes(absl::StrCat(node_no_frames_, " kernels: no NVTX range was open on the "
                                                 "capturing thread when their node was created"));
    }
  }
  proto::CollectorStats* c = trace_header_.mutable_collector();
  c->set_records_total(activities_);
  c->set_records_invalid(invalid_);
  for (const std::string& w : join_warnings_) c->add_warnings(w);
  for (const std::string& w : device_warnings_) c->add_warnings(w);
  if (invalid_ > 0) {
    c->add_warnings(absl::StrCat(invalid_, " activity rows with end < start were kept with "
                                           "zero duration"));
  }
  if (!has_kernels_) c->add_warnings("no CUPTI_ACTIVITY_KIND_KERNEL table: no kernels");
  if (unlaunched_ > 0) {
    c->add_warnings(absl::StrCat(unlaunched_, " kernels have no runtime launch record with "
                                              "their correlation id: no NVTX path"));
  }
  if (truncated_) {
    c->add_warnings(absl::StrCat("the database ends early (", truncation_detail_,
                                 "); kept the rows read before"));
  }
}

}  // namespace

absl::Status StreamNsysDb(SqliteDb* db, const std::string& path, const ImportOptions& options,
                          TraceSink* sink) {
  ASSIGN_OR_RETURN(bool has_kernels, db->HasTable(kKernelTable));
  ASSIGN_OR_RETURN(bool has_strings, db->HasTable("StringIds"));
  ASSIGN_OR_RETURN(bool has_memcpy, db->HasTable("CUPTI_ACTIVITY_KIND_MEMCPY"));
  ASSIGN_OR_RETURN(bool has_nvtx, db->HasTable("NVTX_EVENTS"));
  ASSIGN_OR_RETURN(bool has_runtime, db->HasTable(kRuntimeTable));
  if (!has_kernels && !has_strings && !has_memcpy && !has_nvtx && !has_runtime) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": SQLite database but not an Nsight Systems export (no StringIds or "
              "CUPTI_ACTIVITY_KIND_* tables)"));
  }
  absl::Status s = NsysReader(db, path, options, sink, /*exact_join=*/false, true).Run();
  if (!absl::IsAborted(s)) return s;
  // The tables are too far out of correlation order for the streaming join: again, with
  // SQLite joining them (slower, same result).
  sink->Reset();
  return NsysReader(db, path, options, sink, /*exact_join=*/true, false).Run();
}

absl::Status StreamNsysSqlite(const std::string& path, const ImportOptions& options,
                              TraceSink* sink) {
  ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::OpenReadOnly(path));
  return StreamNsysDb(&db, path, options, sink);
}

absl::StatusOr<proto::Trace> ImportNsysDb(SqliteDb* db, const std::string& path,
                                          const ImportOptions& options) {
  TraceBuilder builder;
  RETURN_IF_ERROR(StreamNsysDb(db, path, options, &builder));
  return builder.Take();
}

absl::StatusOr<proto::Trace> ImportNsysSqlite(const std::string& path,
                                              const ImportOptions& options) {
  TraceBuilder builder;
  RETURN_IF_ERROR(StreamNsysSqlite(path, options, &builder));
  return builder.Take();
}

}  // namespace qprof::importers
