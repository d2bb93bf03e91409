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

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "analysis/devices/device_specs.h"
#include "analysis/devices/identify.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/kineto/byte_source.h"
#include "analysis/importers/kineto/json_stream.h"
#include "analysis/importers/kineto/kineto_batch.h"
#include "analysis/importers/kineto/kineto_event.h"
#include "analysis/importers/kineto/kineto_pending.h"
#include "base/status_macros.h"
#include "simdjson.h"

namespace qprof::importers {
namespace {

namespace od = simdjson::ondemand;

// Inputs at least this large are decoded on worker threads (smaller ones finish before
// threads would pay off).
constexpr uint64_t kParallelBytes = 32 << 20;

// No single kernel, copy or memset runs for an hour: a longer "dur" is a unit or writer
// error (e.g. 9e12 us), and summing it would swamp every total. Such events are counted,
// named in a warning and left out.
constexpr int64_t kImplausibleDurationNs = int64_t{3600} * 1000 * 1000 * 1000;

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
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

// Reads one Kineto document (TraceJsonHandler): decodes batches (on worker threads for large
// inputs), commits each event to the PendingTrace, and at the end hands the trace to a sink.
class KinetoReader : public TraceJsonHandler {
 public:
  // `captures`: read a graph-capture trace into it (Finish builds the captures and hands
  // the sink nothing); `join`: captures a replay's graph kernels are joined to.
  KinetoReader(const std::string& label, int workers, GraphCaptureSet* captures,
               const GraphCaptureSet* join, const LayerModel* layer_model)
      : label_(label), workers_(workers), captures_(captures), join_(join),
        layer_model_(layer_model) {
    FillImportedHeader(&trace_, label, "kineto-json");
    if (workers > 0) pool_ = std::make_unique<ParallelBatches>(workers);
    if (captures_ != nullptr) pending_.KeepCalls();
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

  const std::string& label_;
  const int workers_;
  GraphCaptureSet* const captures_;
  const GraphCaptureSet* const join_;
  const LayerModel* const layer_model_;
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
  PendingTrace pending_;
  int64_t base_ns_ = 0;
  uint64_t skipped_ = 0;
  uint64_t first_skipped_offset_ = 0;
  uint64_t invalid_times_ = 0;
  uint64_t implausible_ = 0;
  std::string first_implausible_;  // "name: dur us" of the first one
  uint64_t repaired_bytes_ = 0;
};

// JSON text without the whitespace between tokens (strings kept as they are).
std::string CompactJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      out += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
      out += c;
    }
  }
  return out;
}

// distributedInfo.pg_config lists every process group ({"pg_name": "0", "pg_desc":
// "default_pg", "pg_size": 8, "ranks": [...]}, ...): each group's size goes to run.extra as
// "distributed.pg_size.<pg_name>", where the collectives of that group find their n.
void RecordGroupSizes(const std::string& pg_config,
                      google::protobuf::Map<std::string, std::string>* extra) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(pg_config).get(doc)) return;
  simdjson::dom::array groups;
  if (doc.get_array().get(groups)) return;
  for (simdjson::dom::element g : groups) {
    std::string_view name;
    int64_t size = 0;
    if (g["pg_name"].get_string().get(name) || g["pg_size"].get_int64().get(size)) continue;
    if (size < 1 || size > (int64_t{1} << 20)) continue;
    (*extra)[Utf8Clean(absl::StrCat("distributed.pg_size.", std::string(name)))] = absl::StrCat(size);
  }
}

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
      od::value val;
      if (field.unescaped_key().get(k) || field.value().get(val)) break;
      // Arrays and objects (pg_config: every process group) whole, as compact JSON; a
      // scalar's token as it is.
      od::json_type type;
      if (val.type().get(type)) break;
      if (type == od::json_type::array) {
        od::array arr;
        if (val.get_array().get(arr) || arr.raw_json().get(tok)) break;
      } else if (type == od::json_type::object) {
        od::object o;
        if (val.get_object().get(o) || o.raw_json().get(tok)) break;
      } else {
        tok = val.raw_json_token();
      }
      std::string v = CompactJson(tok);
      if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
      if (k == "pg_config") RecordGroupSizes(v, extra);
      (*extra)[Utf8Clean(absl::StrCat("distributed.", std::string(k)))] = Utf8Clean(v);
    }
  } else {
    ReadDeviceProperties(doc);
  }
  return absl::OkStatus();
}

// A GPU the trace leaves unnamed (vLLM's MI300X traces write "name": "") is named after the
// one spec-table row its properties fit, and the name says so: "Instinct MI300X (identified
// by 304 CUs and 192 GiB)" (analysis/devices/identify.h). The gfx target comes with it.
bool NameFromProperties(proto::DeviceInfo* d) {
  devices::DeviceProperties p;
  p.vendor = d->vendor();
  p.arch = d->arch();
  p.sm_count = d->sm_count();
  p.memory_bytes = d->memory_bytes();
  const devices::Identification id = devices::IdentifyDevice(p);
  if (id.spec == nullptr || id.how != "properties") return false;
  d->set_name(absl::StrCat(id.spec->name, " (identified by ", id.evidence, ")"));
  if (d->arch().empty()) d->set_arch(id.spec->arch);
  return true;
}

// PyTorch on ROCm writes the same deviceProperties with HIP's values: computeMajor/Minor
// are the gfx family digits (gfx942 -> 9.4), not a CUDA compute capability, and warpSize is
// 64. An AMD device is named by its name, its gfx target (gcnArchName where the trace has
// it, else the spec table's for that name) and never as an sm_XY.
void DescribeVendor(const std::string& gcn_arch, bool rocm_key, bool cuda_key,
                    proto::DeviceInfo* d) {
  const std::string lower = absl::AsciiStrToLower(d->name());
  const bool amd = !gcn_arch.empty() || rocm_key || d->warp_size() == 64 ||
                   lower.find("amd") != std::string::npos ||
                   lower.find("instinct") != std::string::npos ||
                   lower.find("radeon") != std::string::npos;
  if (amd) {
    d->set_vendor("AMD");
    const uint32_t major = d->cc_major(), minor = d->cc_minor();
    d->set_cc_major(0);
    d->set_cc_minor(0);
    // "gfx942:sramecc+:xnack-": the target, without its feature flags.
    std::string arch = gcn_arch.substr(0, gcn_arch.find(':'));
    if (arch.empty()) {
      if (const devices::DeviceSpec* s = devices::FindDevice(d->name()); s && !s->IsNvidia()) {
        arch = s->arch;
      }
    }
    d->set_arch(arch);
    if (d->name().empty() && !NameFromProperties(d)) {
      d->set_name(!arch.empty() ? absl::StrCat("AMD GPU (", arch, ")")
                  : major > 0   ? absl::StrCat("AMD GPU (HIP ", major, ".", minor, ")")
                                : "AMD GPU");
    }
    if (!d->limits_source().empty()) d->set_limits_source("Kineto deviceProperties (ROCm)");
    return;
  }
  if (cuda_key || lower.find("nvidia") != std::string::npos) d->set_vendor("NVIDIA");
  if (d->cc_major() > 0) d->set_arch(absl::StrCat("sm_", d->cc_major(), d->cc_minor()));
  if (d->name().empty() && !NameFromProperties(d)) d->set_name("unknown");
}

void KinetoReader::ReadDeviceProperties(od::document& doc) {
  od::array arr;
  if (doc.get_array().get(arr)) return;
  for (auto elem : arr) {
    od::object obj;
    if (elem.get_object().get(obj)) return;
    proto::DeviceInfo d;
    d.set_kind("gpu");
    std::string gcn_arch;
    bool rocm_key = false, cuda_key = false;
    for (auto field : obj) {
      std::string_view k, tok;
      if (field.unescaped_key().get(k)) return;
      od::value v;
      if (field.value().get(v)) return;
      if (k == "name" || k == "gcnArchName") {
        std::string_view s;
        if (!v.get_string().get(s)) {
          if (k == "name") d.set_name(Utf8Clean(s));
          else gcn_arch = Utf8Clean(s);
        }
        continue;
      }
      // Keys only one vendor's Kineto writes (libkineto DeviceProperties.cpp): ROCm builds
      // add maxSharedMemoryPerMultiProcessor, CUDA builds the per-SM register and optin
      // shared-memory sizes.
      rocm_key |= k == "maxSharedMemoryPerMultiProcessor";
      cuda_key |= k == "regsPerMultiprocessor" || k == "sharedMemPerBlockOptin";
      tok = v.raw_json_token();
      uint64_t n = ParseUint(tok).value_or(0);
      if (k == "id") d.set_id(static_cast<uint32_t>(n));
      else if (k == "computeMajor") d.set_cc_major(static_cast<uint32_t>(n));
      else if (k == "computeMinor") d.set_cc_minor(static_cast<uint32_t>(n));
      else if (k == "numSms") d.set_sm_count(static_cast<uint32_t>(n));
      else if (k == "totalGlobalMem") d.set_memory_bytes(n);
      else if (k == "maxThreadsPerBlock") d.set_max_threads_per_block(static_cast<uint32_t>(n));
      else if (k == "maxThreadsPerMultiprocessor") d.set_max_threads_per_sm(static_cast<uint32_t>(n));
      else if (k == "regsPerBlock") d.set_regs_per_block(static_cast<uint32_t>(n));
      else if (k == "regsPerMultiprocessor") d.set_regs_per_sm(static_cast<uint32_t>(n));
      else if (k == "warpSize") d.set_warp_size(static_cast<uint32_t>(n));
      else if (k == "sharedMemPerBlock") d.set_shared_mem_per_block(n);
      else if (k == "sharedMemPerMultiprocessor") d.set_shared_mem_per_sm(n);
      else if (k == "sharedMemPerBlockOptin") d.set_shared_mem_per_block_optin(n);
      else if (k == "maxSharedMemoryPerMultiProcessor") d.set_shared_mem_per_sm(n);
    }
    if (d.max_threads_per_sm() > 0 || d.regs_per_sm() > 0 || d.shared_mem_per_sm() > 0) {
      d.set_limits_source("Kineto deviceProperties");
    }
    DescribeVendor(gcn_arch, rocm_key, cuda_key, &d);
    bool dup = false;
    for (const auto& have : trace_.header().devices()) dup |= have.id() == d.id();
    if (!dup) *trace_.mutable_header()->add_devices() = std::move(d);
  }
}

absl::Status KinetoReader::OnEvents(EventBatch* batch) {
  if (!pool_ || pool_failed_) return OnEventsSequential(batch);
  // Decoded on a worker; events are committed in document order as batches come back. Two
  // batches per worker at most, so memory stays a few batches and a worker that finishes
  // while this thread waits for an older batch finds another queued (with one per worker
  // plus one, workers idled: the analysis of a 261 MB trace took 2% longer).
  pool_->Submit(batch->buffer, batch->size, batch->capacity);
  batch->data = nullptr;
  while (pool_->in_flight() > 2 * static_cast<size_t>(workers_)) {
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
    while (d->Next(&ev_)) Commit(ev_);
    pool_->Recycle(std::move(*d));
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
      if (e.dur_ns > kImplausibleDurationNs) {
        if (implausible_++ == 0) {
          first_implausible_ = absl::StrCat(e.name, ": dur ", e.dur_ns / 1000, " us");
        }
        return;
      }
      pending_.AddGpu(e);
      return;
    }
    case KinetoEventKind::kRuntime:
      if (e.has_dur) CountHostCall(e.name, e.dur_ns, trace_.mutable_header());
      if (e.has_correlation && e.has_ts) pending_.AddLaunch(e);
      if (captures_ != nullptr && e.has_ts) {
        pending_.AddCall({e.pid_num, e.tid_num}, e.ts_ns, e.has_dur ? e.dur_ns : 0, e.name,
                         e.launch_kernel, e.gpu.grid, e.gpu.block);
      }
      return;
    case KinetoEventKind::kUserAnnotation:
      if (e.has_ts) {
        int64_t end = e.has_dur && e.dur_ns >= 0 ? e.ts_ns + e.dur_ns : RangeIndex::kOpenEnd;
        pending_.AddCpuRange({e.pid_num, e.tid_num}, e.ts_ns, end, e.name);
      }
      return;
    case KinetoEventKind::kCpuOp:
    case KinetoEventKind::kPythonFunction:
      if (e.has_ts) {
        int64_t end = e.has_dur && e.dur_ns >= 0 ? e.ts_ns + e.dur_ns
                                                 : LaunchContextBuilder::kOpenEnd;
        pending_.AddCpuFrame(e, end);
      }
      return;
    case KinetoEventKind::kGpuUserAnnotation:
      if (e.has_ts && e.has_dur) {
        ThreadKey key{static_cast<uint32_t>(e.gpu.has_device ? e.gpu.device : e.pid_num),
                      e.gpu.has_stream ? e.gpu.stream : e.tid_num};
        pending_.AddGpuRange(key, e.ts_ns, e.ts_ns + std::max<int64_t>(e.dur_ns, 0), e.name);
      }
      return;
    case KinetoEventKind::kProfilerRange:
      pending_.AddProfilerRange(e);
      return;
  }
}

void KinetoReader::Finish(bool truncated, const std::string& truncation_detail, TraceSink* sink) {
  if (captures_ != nullptr) {
    captures_->sources.push_back(label_);
    if (truncated) {
      captures_->warnings.push_back(absl::StrCat(label_, ": the file ends early (",
                                                 truncation_detail, "); captures read before"));
    }
    pending_.BuildCaptures(BaseName(label_), captures_);
    return;
  }
  sink->Begin(trace_.header());
  pending_.Emit(base_ns_, trace_.mutable_header(), sink, join_, layer_model_);
  proto::CollectorStats* c = trace_.mutable_header()->mutable_collector();
  c->set_records_total(pending_.size());
  c->set_records_invalid(skipped_ + invalid_times_ + implausible_ + pending_.outliers());
  if (skipped_ > 0) {
    c->add_warnings(absl::StrCat(skipped_, " events could not be read and were skipped (first at "
                                           "byte ", first_skipped_offset_, ")"));
  }
  if (invalid_times_ > 0) {
    c->add_warnings(absl::StrCat(invalid_times_, " GPU events had a missing, non-numeric (e.g. "
                                                 "a string), negative or out-of-range ts/dur "
                                                 "and were skipped"));
  }
  if (implausible_ > 0) {
    c->add_warnings(absl::StrCat(implausible_, " GPU events lasted implausibly long (over 1 h; "
                                 "the first: ", first_implausible_,
                                 ") and were left out of every total"));
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

// Batches of 256 KiB: each decoder's simdjson buffers grow with the batch (several bytes
// per input byte), and a few batches, their bytes and their decoded events are in flight
// per worker, so memory grows by ~20 MiB per MiB of batch; a batch of 256 KiB still holds
// about a thousand events, and decoding it costs the same CPU as one of 1 MiB (measured on
// a 261 MB trace: 68 MiB peak RSS against 83 MiB).
JsonStreamLimits Limits(const ImportOptions& options) {
  JsonStreamLimits l;
  l.batch_bytes = options.batch_bytes > 0 ? options.batch_bytes : size_t{256} << 10;
  l.read_bytes = std::max(l.batch_bytes, size_t{4} << 20);
  return l;
}

using SourceFactory = std::function<absl::StatusOr<std::unique_ptr<ByteSource>>()>;

// One read of the document; Aborted when parallel decoding must give way to one thread.
absl::Status ReadOnce(const SourceFactory& open, const std::string& label,
                      const ImportOptions& options, int workers, TraceSink* sink,
                      GraphCaptureSet* captures) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, open());
  auto reader = std::make_unique<KinetoReader>(label, workers, captures,
                                               options.graph_captures.get(),
                                               captures == nullptr ? options.layer_model.get()
                                                                   : nullptr);
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
                    const ImportOptions& options, TraceSink* sink,
                    GraphCaptureSet* captures = nullptr) {
  int workers = 0;
  {
    ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> probe, open());
    unsigned cores = std::thread::hardware_concurrency();
    if (options.threads > 1) {
      workers = options.threads;
    } else if (options.threads == 0 && probe->total() >= kParallelBytes && cores >= 2) {
      workers = static_cast<int>(cores);
      if (options.max_threads > 0) workers = std::min(workers, options.max_threads);
      if (workers < 2) workers = 0;  // one thread: the calling one
    }
  }
  // A capture read that gives way starts over with what it had gathered dropped.
  const size_t captures_before = captures != nullptr ? captures->captures.size() : 0;
  absl::Status s = ReadOnce(open, label, options, workers, sink, captures);
  if (workers > 0 && absl::IsAborted(s)) {
    if (captures != nullptr) captures->captures.resize(captures_before);
    s = ReadOnce(open, label, options, 0, sink, captures);
  }
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

namespace {

absl::Status ReadCaptures(const SourceFactory& open, const std::string& label,
                          const ImportOptions& options, GraphCaptureSet* set) {
  const size_t before = set->captures.size();
  RETURN_IF_ERROR(Stream(open, label, options, nullptr, set));
  if (set->captures.size() == before) {
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": no kernel launches between a cudaStreamBeginCapture and cudaStreamEndCapture "
               "(or hipStream...) call: not a profile taken while CUDA graphs were captured"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadKinetoGraphCaptures(const std::string& path, const ImportOptions& options,
                                     GraphCaptureSet* set) {
  return ReadCaptures([&path] { return OpenByteSource(path); }, path, options, set);
}

absl::Status ReadKinetoGraphCapturesBytes(std::string_view bytes, const std::string& label,
                                          const ImportOptions& options, GraphCaptureSet* set) {
  return ReadCaptures(
      [bytes, &label]() -> absl::StatusOr<std::unique_ptr<ByteSource>> {
        return MemoryByteSource(bytes, label);
      },
      label, options, set);
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
