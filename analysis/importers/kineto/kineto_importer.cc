#include "analysis/importers/kineto/kineto_importer.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "analysis/importers/common/import_util.h"
#include "analysis/importers/common/launch_context.h"
#include "analysis/importers/kineto/byte_source.h"
#include "analysis/importers/kineto/json_stream.h"
#include "analysis/importers/kineto/kineto_event.h"
#include "base/status_macros.h"
#include "simdjson.h"

namespace qprof::importers {
namespace {

namespace od = simdjson::ondemand;

// Copy kind from a Kineto memcpy name: "Memcpy HtoD (Pageable -> Device)" -> "HtoD".
std::string CopyKindFromName(std::string_view name) {
  for (const char* k : {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA", "AtoH", "AtoD", "DtoA"}) {
    if (name.find(k) != std::string_view::npos) return k;
  }
  return "unknown";
}

class KinetoBuilder : public TraceJsonHandler {
 public:
  explicit KinetoBuilder(const std::string& label) : label_(label) {
    FillImportedHeader(&trace_, label, "kineto-json");
  }

  absl::Status OnMember(std::string_view key, std::string_view json) override {
    if (key != "deviceProperties" && key != "distributedInfo" && key != "baseTimeNanoseconds") {
      return absl::OkStatus();
    }
    simdjson::padded_string padded(json.data(), json.size());
    std::string clean;
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

  absl::Status OnEvents(EventBatch* batch_ptr) override {
    const EventBatch& batch = *batch_ptr;
    const char* data = batch.data;
    size_t capacity = batch.capacity;
    size_t done = 0;
    od::document doc;
    auto err = parser_.iterate(data, batch.size, capacity).get(doc);
    if (err == simdjson::UTF8_ERROR) {
      // Invalid UTF-8 inside strings: replace the bad bytes (same length) and go on.
      // (simdjson validated everything else, so names need no second check.)
      repaired_.assign(data, data + capacity);
      repaired_bytes_ += RepairUtf8(repaired_.data(), batch.size);
      data = repaired_.data();
      err = parser_.iterate(data, batch.size, capacity).get(doc);
    }
    if (!err) {
      od::array arr;
      err = doc.get_array().get(arr);
      if (!err) {
        for (auto elem : arr) {
          od::object obj;
          err = elem.get_object().get(obj);
          if (!err) err = decoder_.Decode(obj, &ev_);
          if (err) break;
          Commit();
          ++done;
        }
      }
    }
    if (!err) return absl::OkStatus();
    if (batch.events.empty()) {
      // Fast-path batch: let the streamer find the exact boundaries from event `done` on.
      batch_ptr->consumed = done;
      return absl::AbortedError("exact boundaries needed");
    }
    // Something in this batch did not parse: redo the rest event by event, so one bad
    // event is skipped (or named as the syntax error it is) without losing the others.
    for (size_t k = done; k < batch.events.size(); ++k) {
      auto [b, e] = batch.events[k];
      uint64_t offset = batch.stream_offset + b - 1;
      simdjson::padded_string one(data + b, e - b);
      od::document d1;
      od::object obj;
      auto err1 = event_parser_.iterate(one).get(d1);
      if (!err1) err1 = d1.get_object().get(obj);
      if (!err1) err1 = decoder_.Decode(obj, &ev_);
      if (!err1) {
        Commit();
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
                                                       offset, ": ",
                                                       simdjson::error_message(err1)));
      }
      if (skipped_ == 0) first_skipped_offset_ = offset;
      ++skipped_;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<proto::Trace> Finish() {
    AttachLaunches();
    AttachProfilerRanges();
    AddDevices();
    if (base_ns_ != 0) {
      for (proto::Activity& a : *trace_.mutable_activities()) {
        a.set_start_ns(a.start_ns() + base_ns_);
        a.set_end_ns(a.end_ns() + base_ns_);
      }
      for (proto::NvtxRange& r : *trace_.mutable_ranges()) {
        r.set_start_ns(r.start_ns() + base_ns_);
        r.set_end_ns(r.end_ns() + base_ns_);
      }
    }
    SortActivities(&trace_);
    proto::CollectorStats* c = trace_.mutable_header()->mutable_collector();
    c->set_records_total(static_cast<uint64_t>(trace_.activities_size()));
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
    return std::move(trace_);
  }

 private:
  static bool IsSyntaxError(simdjson::error_code e) {
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

  void ReadDeviceProperties(od::document& doc) {
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
        else if (k == "maxThreadsPerBlock") d.set_max_threads_per_block(static_cast<uint32_t>(n));
        else if (k == "maxThreadsPerMultiprocessor") d.set_max_threads_per_sm(static_cast<uint32_t>(n));
        else if (k == "regsPerBlock") d.set_regs_per_block(static_cast<uint32_t>(n));
        else if (k == "regsPerMultiprocessor") d.set_regs_per_sm(static_cast<uint32_t>(n));
        else if (k == "warpSize") d.set_warp_size(static_cast<uint32_t>(n));
        else if (k == "sharedMemPerBlock") d.set_shared_mem_per_block(n);
        else if (k == "sharedMemPerMultiprocessor") d.set_shared_mem_per_sm(n);
        else if (k == "sharedMemPerBlockOptin") d.set_shared_mem_per_block_optin(n);
      }
      if (d.max_threads_per_sm() > 0 || d.regs_per_sm() > 0 || d.shared_mem_per_sm() > 0) {
        d.set_limits_source("Kineto deviceProperties");
      }
      if (d.cc_major() > 0) d.set_arch(absl::StrCat("sm_", d.cc_major(), d.cc_minor()));
      if (d.name().empty()) d.set_name("unknown");
      bool dup = false;
      for (const auto& have : trace_.header().devices()) dup |= have.id() == d.id();
      if (!dup) *trace_.mutable_header()->add_devices() = std::move(d);
    }
  }

  // Moves the decoded event ev_ into the trace or the side tables.
  void Commit() {
    const KinetoEvent& e = ev_;
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
        proto::Activity* a = trace_.add_activities();
        a->set_kind(e.kind == KinetoEventKind::kKernel   ? proto::ACTIVITY_KIND_KERNEL
                    : e.kind == KinetoEventKind::kMemcpy ? proto::ACTIVITY_KIND_MEMCPY
                                                         : proto::ACTIVITY_KIND_MEMSET);
        a->set_name(e.name);
        a->set_start_ns(e.ts_ns);
        a->set_end_ns(e.ts_ns + e.dur_ns);
        a->set_device_id(static_cast<uint32_t>(e.has_device ? e.device : e.pid_num));
        a->set_stream_id(e.has_stream ? e.stream : e.tid_num);
        a->set_correlation_id(e.correlation);
        if (e.kind == KinetoEventKind::kKernel) {
          a->mutable_grid()->set_x(e.grid[0]);
          a->mutable_grid()->set_y(e.grid[1]);
          a->mutable_grid()->set_z(e.grid[2]);
          a->mutable_block()->set_x(e.block[0]);
          a->mutable_block()->set_y(e.block[1]);
          a->mutable_block()->set_z(e.block[2]);
          a->set_registers_per_thread(e.registers);
          // Kineto reports static + dynamic shared memory as one number.
          a->set_static_shared_bytes(e.shared_memory);
        } else {
          a->set_bytes(e.bytes);
          if (e.kind == KinetoEventKind::kMemcpy) a->set_copy_kind(CopyKindFromName(e.name));
        }
        for (const auto& [k, v] : e.extra_args) (*a->mutable_args())[k] = v;
        if (e.has_reported_occupancy) {
          a->mutable_occupancy()->set_reported_est_occupancy_pct(e.reported_occupancy_pct);
        }
        if (e.has_correlation) {
          gpu_launches_.push_back({e.correlation, trace_.activities_size() - 1});
        } else if (e.kind == KinetoEventKind::kKernel) {
          ++no_correlation_;
        }
        return;
      }
      case KinetoEventKind::kRuntime:
        if (e.has_correlation && e.has_ts) {
          runtime_.push_back({e.correlation, {e.pid_num, e.tid_num}, e.ts_ns, ApiId(e.name)});
        }
        return;
      case KinetoEventKind::kUserAnnotation:
        if (e.has_ts) {
          int64_t end = e.has_dur && e.dur_ns >= 0 ? e.ts_ns + e.dur_ns : RangeNester::kOpenEnd;
          cpu_ranges_.AddRange({e.pid_num, e.tid_num}, e.ts_ns, end, e.name);
          contexts_.AddFrame({e.pid_num, e.tid_num}, e.ts_ns, end, e.name, "user_annotation");
        }
        return;
      case KinetoEventKind::kCpuOp:
      case KinetoEventKind::kPythonFunction:
        if (e.has_ts) {
          int64_t end = e.has_dur && e.dur_ns >= 0 ? e.ts_ns + e.dur_ns
                                                   : LaunchContextBuilder::kOpenEnd;
          contexts_.AddFrame({e.pid_num, e.tid_num}, e.ts_ns, end, e.name,
                             e.kind == KinetoEventKind::kCpuOp ? "cpu_op" : "python_function");
        }
        return;
      case KinetoEventKind::kGpuUserAnnotation:
        if (e.has_ts && e.has_dur) {
          ThreadKey key{static_cast<uint32_t>(e.has_device ? e.device : e.pid_num),
                        e.has_stream ? e.stream : e.tid_num};
          gpu_ranges_.AddRange(key, e.ts_ns, e.ts_ns + std::max<int64_t>(e.dur_ns, 0), e.name);
          gpu_contexts_.AddFrame(key, e.ts_ns, e.ts_ns + std::max<int64_t>(e.dur_ns, 0), e.name,
                                 "gpu_user_annotation");
          ++gpu_range_count_;
        }
        return;
      case KinetoEventKind::kProfilerRange:
        profiler_ranges_.push_back({e.name, e.ts_ns, e.metrics});
        return;
    }
  }

  // Kernel -> its launch call (same correlation) -> thread and time -> annotation path.
  void AttachLaunches() {
    std::sort(runtime_.begin(), runtime_.end(),
              [](const Runtime& a, const Runtime& b) { return a.correlation < b.correlation; });
    std::vector<char> has_cpu_path(static_cast<size_t>(trace_.activities_size()), 0);
    for (const auto& [corr, index] : gpu_launches_) {
      auto it = std::lower_bound(runtime_.begin(), runtime_.end(), corr,
                                 [](const Runtime& r, uint64_t c) { return r.correlation < c; });
      const bool is_kernel = trace_.activities(index).kind() == proto::ACTIVITY_KIND_KERNEL;
      if (it == runtime_.end() || it->correlation != corr) {
        if (is_kernel) ++no_launch_record_;
        continue;
      }
      proto::Activity* a = trace_.mutable_activities(index);
      a->set_pid(it->thread.pid);
      a->set_tid(it->thread.tid);
      cpu_ranges_.AddLaunch(it->thread, it->ts_ns, index);
      contexts_.AddLaunch(it->thread, it->ts_ns, index, api_names_[it->api]);
      has_cpu_path[static_cast<size_t>(index)] = 1;
    }
    cpu_ranges_.Resolve(&trace_);
    contexts_.Resolve(&trace_, &context_stats_);
    if (gpu_range_count_ > 0) {
      for (int i = 0; i < trace_.activities_size(); ++i) {
        const proto::Activity& a = trace_.activities(i);
        if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
        // GPU-side annotations stand in where the CPU side gave no frame.
        if (a.launch_context().stack() == 0) {
          gpu_contexts_.AddLaunch({a.device_id(), a.stream_id()}, a.start_ns(), i, "");
        }
        if (!a.nvtx_path().empty()) continue;
        gpu_ranges_.AddLaunch({a.device_id(), a.stream_id()}, a.start_ns(), i);
      }
      gpu_ranges_.Resolve(&trace_);
      gpu_contexts_.Resolve(&trace_, &context_stats_, /*only_if_empty=*/true);
    }
    proto::LaunchContextStats* cs = trace_.mutable_header()->mutable_launch_context_stats();
    *cs = context_stats_;
    cs->set_no_correlation(no_correlation_);
    cs->set_no_launch_record(no_launch_record_);
    cs->set_method("Kineto: cpu_op / python_function / user_annotation events enclosing the "
                   "cuda_runtime or cuda_driver launch with the kernel's correlation id, on its "
                   "thread; gpu_user_annotation where the CPU side is missing");
    for (const proto::Activity& a : trace_.activities()) {
      if (a.kind() == proto::ACTIVITY_KIND_KERNEL) cs->set_kernels(cs->kernels() + 1);
    }
    runtime_.clear();
    runtime_.shrink_to_fit();
  }

  // cuda_profiler_range events carry the counters of one kernel launch each; the i-th range
  // named N belongs to the i-th kernel named N in time order. Ranges with no such kernel
  // (range-profiler traces often hold no kernel events at all) become activities of
  // unspecified kind, so their metrics are kept without adding fake kernel time.
  void AttachProfilerRanges() {
    if (profiler_ranges_.empty()) return;
    std::unordered_map<std::string, std::vector<int>> by_name;
    std::vector<int> order(static_cast<size_t>(trace_.activities_size()));
    for (int i = 0; i < trace_.activities_size(); ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [this](int a, int b) {
      return trace_.activities(a).start_ns() < trace_.activities(b).start_ns();
    });
    for (int i : order) {
      const proto::Activity& a = trace_.activities(i);
      if (a.kind() == proto::ACTIVITY_KIND_KERNEL) by_name[a.name()].push_back(i);
    }
    std::stable_sort(profiler_ranges_.begin(), profiler_ranges_.end(),
                     [](const ProfilerRange& a, const ProfilerRange& b) { return a.ts_ns < b.ts_ns; });
    std::unordered_map<std::string, size_t> used;
    int matched = 0, unmatched = 0;
    for (ProfilerRange& r : profiler_ranges_) {
      proto::Activity* target = nullptr;
      auto it = by_name.find(r.name);
      if (it != by_name.end()) {
        size_t& u = used[r.name];
        if (u < it->second.size()) target = trace_.mutable_activities(it->second[u++]);
      }
      if (target != nullptr) {
        ++matched;
      } else {
        ++unmatched;
        target = trace_.add_activities();
        target->set_kind(proto::ACTIVITY_KIND_UNSPECIFIED);
        target->set_name(r.name);
        target->set_start_ns(r.ts_ns);
        target->set_end_ns(r.ts_ns);
        (*target->mutable_args())["kineto_category"] = "cuda_profiler_range";
      }
      proto::KernelMetrics* m = target->mutable_metrics();
      m->set_source("kineto counters: cuda_profiler_range");
      for (auto& [k, v] : r.metrics) (*m->mutable_raw())[k] = v;
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

  void AddDevices() {
    std::vector<uint32_t> seen;  // counter ranges (unspecified kind) name their device too
    for (const proto::Activity& a : trace_.activities()) seen.push_back(a.device_id());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    // deviceProperties lists every GPU of the machine; keep those the trace used.
    if (!seen.empty()) {
      auto* devs = trace_.mutable_header()->mutable_devices();
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

  struct Runtime {
    uint64_t correlation;
    ThreadKey thread;
    int64_t ts_ns;
    uint32_t api;  // index into api_names_
  };
  // The launch calls' names ("cudaLaunchKernel", "cudaGraphLaunch"): few distinct values.
  uint32_t ApiId(const std::string& name) {
    auto [it, inserted] = api_ids_.try_emplace(name, static_cast<uint32_t>(api_names_.size()));
    if (inserted) api_names_.push_back(name);
    return it->second;
  }

  struct ProfilerRange {
    std::string name;
    int64_t ts_ns;
    std::vector<std::pair<std::string, double>> metrics;
  };

  const std::string& label_;
  proto::Trace trace_;
  od::parser parser_;
  od::parser member_parser_;
  od::parser event_parser_;
  simdjson::dom::parser dom_parser_;
  KinetoEventDecoder decoder_;
  KinetoEvent ev_;
  std::vector<char> repaired_;
  std::vector<std::pair<uint64_t, int>> gpu_launches_;
  std::vector<Runtime> runtime_;
  RangeNester cpu_ranges_;
  RangeNester gpu_ranges_;
  LaunchContextBuilder contexts_;
  LaunchContextBuilder gpu_contexts_;
  proto::LaunchContextStats context_stats_;
  uint64_t no_correlation_ = 0;    // kernels without a correlation id
  uint64_t no_launch_record_ = 0;  // kernels whose correlation id has no launch event
  std::vector<std::string> api_names_;
  std::unordered_map<std::string, uint32_t> api_ids_;
  size_t gpu_range_count_ = 0;
  std::vector<ProfilerRange> profiler_ranges_;
  int64_t base_ns_ = 0;
  uint64_t skipped_ = 0;
  uint64_t first_skipped_offset_ = 0;
  uint64_t invalid_times_ = 0;
  uint64_t repaired_bytes_ = 0;
};

absl::StatusOr<proto::Trace> Import(ByteSource* source, const std::string& label,
                                    const ImportOptions& options) {
  auto builder = std::make_unique<KinetoBuilder>(label);
  Progress progress(options.progress, "reading " + label);
  RETURN_IF_ERROR(StreamTraceJson(source, label, builder.get(), &progress));
  absl::StatusOr<proto::Trace> trace = builder->Finish();
  progress.Finish();
  return trace;
}

}  // namespace

absl::StatusOr<proto::Trace> ImportKinetoJson(const std::string& path,
                                              const ImportOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  return Import(source.get(), path, options);
}

absl::StatusOr<proto::Trace> ImportKinetoJsonBytes(std::string_view bytes,
                                                   const std::string& label,
                                                   const ImportOptions& options) {
  std::unique_ptr<ByteSource> source = MemoryByteSource(bytes, label);
  return Import(source.get(), label, options);
}

}  // namespace qprof::importers
