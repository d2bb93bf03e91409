#include "analysis/importers/kineto/kineto_importer.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/kineto/byte_source.h"
#include "analysis/importers/kineto/json_stream.h"
#include "analysis/importers/kineto/kineto_batch.h"
#include "analysis/importers/kineto/kineto_event.h"
#include "base/status_macros.h"
#include "simdjson.h"

namespace qprof::importers {
namespace {

namespace od = simdjson::ondemand;

// Inputs at least this large are decoded on worker threads (smaller ones finish before
// threads would pay off).
constexpr uint64_t kParallelBytes = 32 << 20;

// Copy kind from a Kineto memcpy name: "Memcpy HtoD (Pageable -> Device)" -> "HtoD".
std::string CopyKindFromName(std::string_view name) {
  for (const char* k : {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA", "AtoH", "AtoD", "DtoA"}) {
    if (name.find(k) != std::string_view::npos) return k;
  }
  return "unknown";
}

bool IsSyntaxError(simdjson::error_code e) {
  switch (e) {
    case simdjson::TAPE_ERROR:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    case simdjson::UNCLOSED_STRING:
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
    case simdjson::DEPTH_ERROR:
    case simdjson::EMPTY:
    case simdjson::TRAILING_CONTENT:
      return true;
    default:
      return false;
  }
}

// A GPU event, compact, until the end of the file: its launch call, the annotations that
// give its path and the base time may all come later in the document.
struct PendingGpu {
  int64_t start = 0, end = 0;  // ns, before baseTimeNanoseconds
  uint64_t stream = 0, correlation = 0, bytes = 0;
  uint32_t device = 0;
  uint32_t name = 0;           // index into names_
  proto::ActivityKind kind = proto::ACTIVITY_KIND_UNSPECIFIED;
  bool has_correlation = false;
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint32_t registers = 0, shared_memory = 0;
  int32_t args = -1;           // index into args_ (kernels with extra args)
  int32_t metrics = -1;        // index into profiler_ranges_ (counters joined onto it)
  int32_t launch = -1;         // index into runtime_ (after the join)
  const std::string* path = nullptr;
};

struct Runtime {
  uint64_t correlation;
  ThreadKey thread;
  int64_t ts_ns;
};

struct ProfilerRange {
  std::string name;
  int64_t ts_ns;
  std::vector<std::pair<std::string, double>> metrics;
};

// Reads one Kineto document (TraceJsonHandler) and, at the end, hands the trace to a sink:
// steps Commit (per event), then JoinLaunches, AttachProfilerRanges, DescribeDevices, Emit.
class KinetoReader : public TraceJsonHandler {
 public:
  KinetoReader(const std::string& label, int workers) : label_(label), workers_(workers) {
    FillImportedHeader(&trace_, label, "kineto-json");
    if (workers > 0) pool_ = std::make_unique<ParallelBatches>(workers);
  }

  absl::Status OnMember(std::string_view key, std::string_view json) override;
  void OnEventsBegin() override { saw_events_ = true; }
  bool KeepsBatchBytes() const override { return pool_ != nullptr && !pool_failed_; }
  absl::Status OnEvents(EventBatch* batch) override;
  bool saw_events() const { return saw_events_; }
  // Parallel decoding: waits for the batches in flight. Aborted when one failed (read the
  // file again on one thread).
  absl::Status Drain();
  void Finish(bool truncated, const std::string& truncation_detail, TraceSink* sink);

 private:
  absl::Status OnEventsSequential(EventBatch* batch);
  absl::Status TakeDecoded(bool wait);
  absl::Status RecoverEvents(EventBatch* batch, const char* data, size_t from);
  void ReadDeviceProperties(od::document& doc);
  void Commit(KinetoEvent& e);
  uint32_t NameIndex(const std::string& name);
  void JoinLaunches();
  void AttachProfilerRanges();
  void DescribeDevices();
  void Emit(TraceSink* sink);
  void FillActivity(const PendingGpu& p, proto::Activity* a) const;

  const std::string& label_;
  const int workers_;
  proto::Trace trace_;  // header only; activities and ranges go to the sink
  std::unique_ptr<ParallelBatches> pool_;
  bool pool_failed_ = false;
  bool saw_events_ = false;
  BatchDecoder batch_decoder_;
  DecodedBatch decoded_;
  IdNumbering ids_;
  od::parser member_parser_;
  od::parser event_parser_;
  simdjson::dom::parser dom_parser_;
  KinetoEvent ev_;
  std::deque<PendingGpu> gpu_;  // a deque: growing it never copies what it holds
  std::unordered_map<std::string, uint32_t> name_index_;
  std::vector<const std::string*> names_;
  std::vector<std::vector<std::pair<std::string, std::string>>> args_;
  std::vector<Runtime> runtime_;
  RangeIndex cpu_ranges_;
  RangeIndex gpu_ranges_;
  size_t gpu_range_count_ = 0;
  std::vector<ProfilerRange> profiler_ranges_;
  int64_t base_ns_ = 0;
  uint64_t skipped_ = 0;
  uint64_t first_skipped_offset_ = 0;
  uint64_t invalid_times_ = 0;
  uint64_t repaired_bytes_ = 0;
};

absl::Status KinetoReader::OnMember(std::string_view key, std::string_view json) {
  if (key != "deviceProperties" && key != "distributedInfo" && key != "baseTimeNanoseconds") {
    return absl::OkStatus();
  }
  simdjson::padded_string padded(json.data(), json.size());
  if (!simdjson::validate_utf8(padded.data(), padded.size())) {
    RepairUtf8(padded.data(), padded.size());
  }
  od::document doc;
  if (member_parser_.iterate(padded).get(doc) != simdjson::SUCCESS) return absl::OkStatus();
  if (key == "baseTimeNanoseconds") {
    std::string_view tok;
    if (doc.raw_json_token().get(tok) == simdjson::SUCCESS) {
      if (auto v = ParseUint(tok); v && *v < (uint64_t{1} << 62)) {
        base_ns_ = static_cast<int64_t>(*v);
      }
    }
  } else if (key == "distributedInfo") {
    od::object obj;
    if (doc.get_object().get(obj) != simdjson::SUCCESS) return absl::OkStatus();
    auto* extra = trace_.mutable_header()->mutable_run()->mutable_extra();
    for (auto field : obj) {
      std::string_view k, tok;
      if (field.unescaped_key().get(k) || field.value().raw_json_token().get(tok)) break;
      std::string v(tok);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\n')) v.pop_back();
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      (*extra)[Utf8Clean(absl::StrCat("distributed.", std::string(k)))] = Utf8Clean(v);
    }
  } else {
    ReadDeviceProperties(doc);
  }
  return absl::OkStatus();
}

void KinetoReader::ReadDeviceProperties(od::document& doc) {
  od::array arr;
  if (doc.get_array().get(arr)) return;
  for (auto elem : arr) {
    od::object obj;
    if (elem.get_object().get(obj)) return;
    proto::DeviceInfo d;
    d.set_kind("gpu");
    for (auto field : obj) {
      std::string_view k, tok;
      if (field.unescaped_key().get(k)) return;
      od::value v;
      if (field.value().get(v)) return;
      if (k == "name") {
        std::string_view s;
        if (!v.get_string().get(s)) d.set_name(Utf8Clean(s));
        continue;
      }
      tok = v.raw_json_token();
      uint64_t n = ParseUint(tok).value_or(0);
      if (k == "id") d.set_id(static_cast<uint32_t>(n));
      else if (k == "computeMajor") d.set_cc_major(static_cast<uint32_t>(n));
      else if (k == "computeMinor") d.set_cc_minor(static_cast<uint32_t>(n));
      else if (k == "numSms") d.set_sm_count(static_cast<uint32_t>(n));
      else if (k == "totalGlobalMem") d.set_memory_bytes(n);
    }
    if (d.cc_major() > 0) d.set_arch(absl::StrCat("sm_", d.cc_major(), d.cc_minor()));
    if (d.name().empty()) d.set_name("unknown");
    bool dup = false;
    for (const auto& have : trace_.header().devices()) dup |= have.id() == d.id();
    if (!dup) *trace_.mutable_header()->add_devices() = std::move(d);
  }
}

absl::Status KinetoReader::OnEvents(EventBatch* batch) {
  if (!pool_ || pool_failed_) return OnEventsSequential(batch);
  // Decoded on a worker; events are committed in document order as batches come back. One
  // batch per worker plus one waits at most, so memory stays a few batches.
  pool_->Submit(batch->buffer, batch->size, batch->capacity);
  batch->data = nullptr;
  while (pool_->in_flight() > static_cast<size_t>(workers_) + 1) {
    RETURN_IF_ERROR(TakeDecoded(true));
  }
  return TakeDecoded(false);
}

absl::Status KinetoReader::TakeDecoded(bool wait) {
  while (std::optional<DecodedBatch> d = pool_->Next(wait)) {
    if (d->error != simdjson::SUCCESS) {
      // Not kAborted, which asks the streamer for exact boundaries: this stops the stream.
      pool_failed_ = true;
      return absl::CancelledError("a batch did not decode: read again on one thread");
    }
    repaired_bytes_ += d->repaired_bytes;
    for (KinetoEvent& e : d->events) Commit(e);
    wait = false;
  }
  return absl::OkStatus();
}

absl::Status KinetoReader::Drain() {
  if (!pool_) return absl::OkStatus();
  while (pool_->in_flight() > 0 && !pool_failed_) (void)TakeDecoded(true);
  while (pool_->in_flight() > 0) pool_->Next(true);  // drop what comes after a failure
  return pool_failed_ ? absl::CancelledError("a batch did not decode") : absl::OkStatus();
}

absl::Status KinetoReader::OnEventsSequential(EventBatch* batch) {
  char* data = const_cast<char*>(batch->data);
  batch_decoder_.Decode(data, batch->size, batch->capacity, &decoded_,
                        [this](KinetoEvent& e) { Commit(e); });
  repaired_bytes_ += decoded_.repaired_bytes;
  if (decoded_.error == simdjson::SUCCESS) return absl::OkStatus();
  if (batch->events.empty()) {
    // Fast-path batch: let the streamer find the exact boundaries from event `done` on.
    batch->consumed = decoded_.done;
    return absl::AbortedError("exact boundaries needed");
  }
  return RecoverEvents(batch, data, decoded_.done);
}

// Something in this batch did not parse: redo the rest event by event, so one bad event is
// skipped (or named as the syntax error it is) without losing the others.
absl::Status KinetoReader::RecoverEvents(EventBatch* batch, const char* data, size_t from) {
  KinetoEventDecoder& decoder = batch_decoder_.decoder();
  for (size_t k = from; k < batch->events.size(); ++k) {
    auto [b, e] = batch->events[k];
    uint64_t offset = batch->stream_offset + b - 1;
    simdjson::padded_string one(data + b, e - b);
    od::document d1;
    od::object obj;
    auto err1 = event_parser_.iterate(one).get(d1);
    if (!err1) err1 = d1.get_object().get(obj);
    if (!err1) err1 = decoder.Decode(obj, &ev_);
    if (!err1) {
      Commit(ev_);
      continue;
    }
    // On-Demand checks atoms lazily: a full DOM parse of this one event tells malformed
    // JSON (an error for the file) from a well-formed event of unexpected shape (skipped).
    if (!IsSyntaxError(err1)) {
      simdjson::dom::element unused;
      simdjson::error_code dom_err = dom_parser_.parse(one).get(unused);
      if (dom_err) err1 = dom_err;
    }
    if (IsSyntaxError(err1)) {
      return absl::InvalidArgumentError(absl::StrCat(label_, ": malformed JSON in the event at byte ",
                                                     offset, ": ", simdjson::error_message(err1)));
    }
    if (skipped_ == 0) first_skipped_offset_ = offset;
    ++skipped_;
  }
  return absl::OkStatus();
}

uint32_t KinetoReader::NameIndex(const std::string& name) {
  auto [it, inserted] = name_index_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(&it->first);
  return it->second;
}

// Keeps what the event contributes: a GPU activity (compact), a launch call, a range.
void KinetoReader::Commit(KinetoEvent& e) {
  ids_.Resolve(&e);
  switch (e.kind) {
    case KinetoEventKind::kIgnored:
      return;
    case KinetoEventKind::kKernel:
    case KinetoEventKind::kMemcpy:
    case KinetoEventKind::kMemset: {
      if (!e.has_ts || !e.has_dur || e.dur_ns < 0) {
        ++invalid_times_;
        return;
      }
      PendingGpu p;
      p.kind = e.kind == KinetoEventKind::kKernel   ? proto::ACTIVITY_KIND_KERNEL
               : e.kind == KinetoEventKind::kMemcpy ? proto::ACTIVITY_KIND_MEMCPY
                                                    : proto::ACTIVITY_KIND_MEMSET;
      p.name = NameIndex(e.name);
      p.start = e.ts_ns;
      p.end = e.ts_ns + e.dur_ns;
      p.device = static_cast<uint32_t>(e.has_device ? e.device : e.pid_num);
      p.stream = e.has_stream ? e.stream : e.tid_num;
      p.correlation = e.correlation;
      p.has_correlation = e.has_correlation;
      std::copy(e.grid, e.grid + 3, p.grid);
      std::copy(e.block, e.block + 3, p.block);
      p.registers = e.registers;
      p.shared_memory = e.shared_memory;
      p.bytes = e.bytes;
      if (!e.extra_args.empty()) {
        p.args = static_cast<int32_t>(args_.size());
        args_.push_back(std::move(e.extra_args));
      }
      gpu_.push_back(p);
      return;
    }
    case KinetoEventKind::kRuntime:
      if (e.has_correlation && e.has_ts) {
        runtime_.push_back({e.correlation, {e.pid_num, e.tid_num}, e.ts_ns});
      }
      return;
    case KinetoEventKind::kUserAnnotation:
      if (e.has_ts) {
        int64_t end = e.has_dur && e.dur_ns >= 0 ? e.ts_ns + e.dur_ns : RangeIndex::kOpenEnd;
        cpu_ranges_.AddRange({e.pid_num, e.tid_num}, e.ts_ns, end, e.name);
      }
      return;
    case KinetoEventKind::kGpuUserAnnotation:
      if (e.has_ts && e.has_dur) {
        ThreadKey key{static_cast<uint32_t>(e.has_device ? e.device : e.pid_num),
                      e.has_stream ? e.stream : e.tid_num};
        gpu_ranges_.AddRange(key, e.ts_ns, e.ts_ns + std::max<int64_t>(e.dur_ns, 0), e.name);
        ++gpu_range_count_;
      }
      return;
    case KinetoEventKind::kProfilerRange:
      profiler_ranges_.push_back({e.name, e.ts_ns, std::move(e.metrics)});
      return;
  }
}

// Launch context: GPU event -> its launch call (same correlation) -> thread and time -> the
// annotation path open there; kernels with no such path take the GPU annotation open on
// their stream.
void KinetoReader::JoinLaunches() {
  std::sort(runtime_.begin(), runtime_.end(),
            [](const Runtime& a, const Runtime& b) { return a.correlation < b.correlation; });
  for (PendingGpu& p : gpu_) {
    if (!p.has_correlation) continue;
    auto it = std::lower_bound(runtime_.begin(), runtime_.end(), p.correlation,
                               [](const Runtime& r, uint64_t c) { return r.correlation < c; });
    if (it == runtime_.end() || it->correlation != p.correlation) continue;
    p.launch = static_cast<int32_t>(it - runtime_.begin());
    p.path = cpu_ranges_.PathAt(it->thread, it->ts_ns);
  }
  if (gpu_range_count_ == 0) return;
  for (PendingGpu& p : gpu_) {
    if (p.kind != proto::ACTIVITY_KIND_KERNEL || p.path != nullptr) continue;
    p.path = gpu_ranges_.PathAt({p.device, p.stream}, p.start);
  }
}

// cuda_profiler_range events carry the counters of one kernel launch each; the i-th range
// named N belongs to the i-th kernel named N in time order. Ranges with no such kernel
// (range-profiler traces often hold no kernel events at all) become activities of
// unspecified kind, so their metrics are kept without adding fake kernel time.
void KinetoReader::AttachProfilerRanges() {
  if (profiler_ranges_.empty()) return;
  std::vector<uint32_t> order(gpu_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [this](uint32_t a, uint32_t b) { return gpu_[a].start < gpu_[b].start; });
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_name;
  for (uint32_t i : order) {
    if (gpu_[i].kind == proto::ACTIVITY_KIND_KERNEL) by_name[gpu_[i].name].push_back(i);
  }
  std::stable_sort(profiler_ranges_.begin(), profiler_ranges_.end(),
                   [](const ProfilerRange& a, const ProfilerRange& b) { return a.ts_ns < b.ts_ns; });
  std::unordered_map<uint32_t, size_t> used;
  int matched = 0, unmatched = 0;
  for (size_t r = 0; r < profiler_ranges_.size(); ++r) {
    const uint32_t name = NameIndex(profiler_ranges_[r].name);
    PendingGpu* target = nullptr;
    auto it = by_name.find(name);
    if (it != by_name.end()) {
      size_t& u = used[name];
      if (u < it->second.size()) target = &gpu_[it->second[u++]];
    }
    if (target != nullptr) {
      ++matched;
    } else {
      ++unmatched;
      PendingGpu p;  // kind unspecified, device 0, zero duration at the range's time
      p.name = name;
      p.start = p.end = profiler_ranges_[r].ts_ns;
      gpu_.push_back(p);
      target = &gpu_.back();
    }
    target->metrics = static_cast<int32_t>(r);
  }
  proto::CollectorStats* c = trace_.mutable_header()->mutable_collector();
  c->set_metrics_available(true);
  if (unmatched > 0) {
    c->add_warnings(absl::StrCat(
        unmatched, " of ", matched + unmatched,
        " cuda_profiler_range counter records match no kernel event by name and order; kept as "
        "activities of unspecified kind (their durations are range times, not kernel times)"));
  }
}

// deviceProperties lists every GPU of the machine; keep those the trace used, and name the
// ones it used but does not describe "unknown".
void KinetoReader::DescribeDevices() {
  std::vector<uint32_t> seen;
  for (const PendingGpu& p : gpu_) seen.push_back(p.device);
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  auto* devs = trace_.mutable_header()->mutable_devices();
  if (!seen.empty()) {
    for (int i = devs->size() - 1; i >= 0; --i) {
      if (!std::binary_search(seen.begin(), seen.end(), devs->Get(i).id())) devs->DeleteSubrange(i, 1);
    }
  }
  for (uint32_t id : seen) {
    bool have = false;
    for (const auto& d : trace_.header().devices()) have |= d.id() == id;
    if (have) continue;
    proto::DeviceInfo* d = trace_.mutable_header()->add_devices();
    d->set_id(id);
    d->set_kind("gpu");
    d->set_name("unknown");
  }
}

void KinetoReader::FillActivity(const PendingGpu& p, proto::Activity* a) const {
  a->set_kind(p.kind);
  a->set_name(*names_[p.name]);
  a->set_start_ns(p.start + base_ns_);
  a->set_end_ns(p.end + base_ns_);
  if (p.kind == proto::ACTIVITY_KIND_UNSPECIFIED) {
    (*a->mutable_args())["kineto_category"] = "cuda_profiler_range";
  } else {
    a->set_device_id(p.device);
    a->set_stream_id(p.stream);
    a->set_correlation_id(p.correlation);
  }
  if (p.kind == proto::ACTIVITY_KIND_KERNEL) {
    a->mutable_grid()->set_x(p.grid[0]);
    a->mutable_grid()->set_y(p.grid[1]);
    a->mutable_grid()->set_z(p.grid[2]);
    a->mutable_block()->set_x(p.block[0]);
    a->mutable_block()->set_y(p.block[1]);
    a->mutable_block()->set_z(p.block[2]);
    a->set_registers_per_thread(p.registers);
    // Kineto reports static + dynamic shared memory as one number.
    a->set_static_shared_bytes(p.shared_memory);
  } else if (p.kind != proto::ACTIVITY_KIND_UNSPECIFIED) {
    a->set_bytes(p.bytes);
    if (p.kind == proto::ACTIVITY_KIND_MEMCPY) a->set_copy_kind(CopyKindFromName(*names_[p.name]));
  }
  if (p.args >= 0) {
    for (const auto& [k, v] : args_[static_cast<size_t>(p.args)]) (*a->mutable_args())[k] = v;
  }
  if (p.launch >= 0) {
    const Runtime& r = runtime_[static_cast<size_t>(p.launch)];
    a->set_pid(r.thread.pid);
    a->set_tid(r.thread.tid);
  }
  if (p.path != nullptr) a->set_nvtx_path(*p.path);
  if (p.metrics >= 0) {
    proto::KernelMetrics* m = a->mutable_metrics();
    m->set_source("kineto counters: cuda_profiler_range");
    for (const auto& [k, v] : profiler_ranges_[static_cast<size_t>(p.metrics)].metrics) {
      (*m->mutable_raw())[k] = v;
    }
  }
}

// Ranges, then the activities in (start, device, stream) order, as ImportFile documents.
void KinetoReader::Emit(TraceSink* sink) {
  auto shifted = [this, sink](const proto::NvtxRange& r) {
    if (base_ns_ == 0) return sink->Range(r);
    proto::NvtxRange s = r;
    s.set_start_ns(r.start_ns() + base_ns_);
    s.set_end_ns(r.end_ns() + base_ns_);
    sink->Range(s);
  };
  cpu_ranges_.Build(shifted);
  gpu_ranges_.Build(shifted);
  JoinLaunches();
  AttachProfilerRanges();
  DescribeDevices();
  std::vector<uint32_t> order(gpu_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [this](uint32_t x, uint32_t y) {
    const PendingGpu& a = gpu_[x];
    const PendingGpu& b = gpu_[y];
    if (a.start != b.start) return a.start < b.start;
    if (a.device != b.device) return a.device < b.device;
    return a.stream < b.stream;
  });
  proto::Activity a;
  for (uint32_t i : order) {
    a.Clear();
    FillActivity(gpu_[i], &a);
    sink->TakeActivity(&a);
  }
}

void KinetoReader::Finish(bool truncated, const std::string& truncation_detail, TraceSink* sink) {
  sink->Begin(trace_.header());
  Emit(sink);
  proto::CollectorStats* c = trace_.mutable_header()->mutable_collector();
  c->set_records_total(gpu_.size());
  c->set_records_invalid(skipped_ + invalid_times_);
  if (skipped_ > 0) {
    c->add_warnings(absl::StrCat(skipped_, " events could not be read and were skipped (first at "
                                           "byte ", first_skipped_offset_, ")"));
  }
  if (invalid_times_ > 0) {
    c->add_warnings(absl::StrCat(invalid_times_, " GPU events had a missing or out-of-range ts/dur "
                                                 "and were skipped"));
  }
  if (repaired_bytes_ > 0) {
    c->add_warnings(absl::StrCat(repaired_bytes_, " bytes of invalid UTF-8 were replaced by '?'"));
  }
  if (truncated) {
    c->add_warnings(absl::StrCat("the file ends early (", truncation_detail,
                                 "); kept the events read before"));
  }
  sink->End(trace_.header(), truncated, truncation_detail);
}

// Batches of 1 MiB: each decoder's simdjson buffers grow with the batch (several bytes per
// input byte), and a few batches are in flight per worker; 1 MiB keeps that to a few tens of
// MiB while a batch still holds thousands of events.
JsonStreamLimits Limits(const ImportOptions& options) {
  JsonStreamLimits l;
  l.batch_bytes = options.batch_bytes > 0 ? options.batch_bytes : size_t{1} << 20;
  l.read_bytes = std::max(l.batch_bytes, size_t{4} << 20);
  return l;
}

using SourceFactory = std::function<absl::StatusOr<std::unique_ptr<ByteSource>>()>;

// One read of the document; Aborted when parallel decoding must give way to one thread.
absl::Status ReadOnce(const SourceFactory& open, const std::string& label,
                      const ImportOptions& options, int workers, TraceSink* sink) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, open());
  auto reader = std::make_unique<KinetoReader>(label, workers);
  Progress progress(options.progress, "reading " + label);
  absl::Status s = StreamTraceJson(source.get(), label, reader.get(), &progress, Limits(options));
  absl::Status drained = reader->Drain();
  if (absl::IsCancelled(s) || absl::IsCancelled(drained)) {
    return absl::AbortedError("parallel decoding gave way: read again on one thread");
  }
  // A document cut inside or after its events keeps what came before the cut.
  bool truncated = absl::IsDataLoss(s) && reader->saw_events();
  if (!s.ok() && !truncated) return s;
  reader->Finish(truncated, truncated ? std::string(s.message()) : "", sink);
  progress.Finish();
  return absl::OkStatus();
}

absl::Status Stream(const SourceFactory& open, const std::string& label,
                    const ImportOptions& options, TraceSink* sink) {
  int workers = 0;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> probe, open());
    unsigned cores = std::thread::hardware_concurrency();
    if (options.threads > 1) {
      workers = options.threads;
    } else if (options.threads == 0 && probe->total() >= kParallelBytes && cores >= 2) {
      workers = static_cast<int>(cores);
    }
  }
  absl::Status s = ReadOnce(open, label, options, workers, sink);
  if (workers > 0 && absl::IsAborted(s)) s = ReadOnce(open, label, options, 0, sink);
  return s;
}

}  // namespace

absl::Status StreamKinetoJson(const std::string& path, const ImportOptions& options,
                              TraceSink* sink) {
  return Stream([&path] { return OpenByteSource(path); }, path, options, sink);
}

absl::Status StreamKinetoJsonBytes(std::string_view bytes, const std::string& label,
                                   const ImportOptions& options, TraceSink* sink) {
  return Stream(
      [bytes, &label]() -> absl::StatusOr<std::unique_ptr<ByteSource>> {
        return MemoryByteSource(bytes, label);
      },
      label, options, sink);
}

absl::StatusOr<proto::Trace> ImportKinetoJson(const std::string& path,
                                              const ImportOptions& options) {
  TraceBuilder builder;
  RETURN_IF_ERROR(StreamKinetoJson(path, options, &builder));
  return builder.Take();
}

absl::StatusOr<proto::Trace> ImportKinetoJsonBytes(std::string_view bytes,
                                                   const std::string& label,
                                                   const ImportOptions& options) {
  TraceBuilder builder;
  RETURN_IF_ERROR(StreamKinetoJsonBytes(bytes, label, options, &builder));
  return builder.Take();
}

}  // namespace qprof::importers
