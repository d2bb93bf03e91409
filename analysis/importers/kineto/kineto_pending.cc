#include "analysis/importers/kineto/kineto_pending.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace qprof::importers {
namespace {

// Copy kind from a Kineto memcpy name: "Memcpy HtoD (Pageable -> Device)" -> "HtoD".
std::string CopyKindFromName(std::string_view name) {
  for (const char* k : {"HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA", "AtoH", "AtoD", "DtoA"}) {
    if (name.find(k) != std::string_view::npos) return k;
  }
  return "unknown";
}

// Memory kinds from a Kineto copy or memset name, as libkineto writes them
// (CuptiActivity.cpp: "Memcpy {kind} ({src} -> {dst})", "Memset ({dst})", the kinds spelled
// "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static",
// "Unknown"), lower-cased; empty when the name has no parentheses.
void MemoryKindsFromName(std::string_view name, std::string* src, std::string* dst) {
  const size_t open = name.rfind('(');
  const size_t close = name.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
  const std::string_view in = name.substr(open + 1, close - open - 1);
  const absl::string_view inner(in.data(), in.size());
  const size_t arrow = inner.find(" -> ");
  if (arrow == absl::string_view::npos) {
    *dst = absl::AsciiStrToLower(inner);
    return;
  }
  *src = absl::AsciiStrToLower(inner.substr(0, arrow));
  *dst = absl::AsciiStrToLower(inner.substr(arrow + 4));
}

}  // namespace

uint32_t PendingTrace::NameIndex(std::string_view name, size_t hash) {
  return names_.Intern(name, hash);
}

void PendingTrace::AddGpu(KinetoEvent& e) {
  PendingGpu p;
  p.kind = e.kind == KinetoEventKind::kKernel   ? proto::ACTIVITY_KIND_KERNEL
           : e.kind == KinetoEventKind::kMemcpy ? proto::ACTIVITY_KIND_MEMCPY
                                                : proto::ACTIVITY_KIND_MEMSET;
  p.name = NameIndex(e.name, e.name_hash);
  p.start = e.ts_ns;
  p.end = e.ts_ns + e.dur_ns;
  const KinetoEvent::GpuArgs& g = e.gpu;
  p.device = static_cast<uint32_t>(g.has_device ? g.device : e.pid_num);
  p.stream = g.has_stream ? g.stream : e.tid_num;
  p.correlation = e.correlation;
  p.has_correlation = e.has_correlation;
  std::copy(g.grid, g.grid + 3, p.grid);
  std::copy(g.block, g.block + 3, p.block);
  p.registers = g.registers;
  p.shared_memory = g.shared_memory;
  p.bytes = g.bytes;
  p.has_reported_occupancy = g.has_reported_occupancy;
  p.reported_occupancy_pct = g.reported_occupancy_pct;
  if (!e.extra_args.empty()) {
    p.args = static_cast<int32_t>(args_.size());
    args_.push_back(std::move(e.extra_args));
  }
  gpu_.push_back(p);
}

uint32_t PendingTrace::LaunchThreadIndex(ThreadKey thread) {
  auto [it, inserted] =
      launch_thread_ids_.try_emplace(thread, static_cast<uint32_t>(launch_threads_.size()));
  if (inserted) launch_threads_.push_back(thread);
  return it->second;
}

void PendingTrace::AddLaunch(const KinetoEvent& e) {
  runtime_.push_back({e.correlation, e.ts_ns, LaunchThreadIndex({e.pid_num, e.tid_num}),
                      ApiIndex(e.name, e.name_hash)});
}

void PendingTrace::AddCpuRange(ThreadKey thread, int64_t start, int64_t end,
                               const std::string& name) {
  cpu_ranges_.AddRange(thread, start, end, name);
  cpu_contexts_.AddFrame(thread, start, end == RangeIndex::kOpenEnd ? LaunchContextBuilder::kOpenEnd : end,
                         name, "user_annotation");
}

// As LaunchContextBuilder::AddFrame would add it, each distinct name and shapes looked up
// in the builder once: the many frames of a trace repeat a few thousand strings.
void PendingTrace::AddCpuFrame(const KinetoEvent& e, int64_t end) {
  bool added = false;
  const uint32_t n = frame_names_.Intern(e.name, e.name_hash, &added);
  if (added) frame_name_ids_.push_back({LaunchContextBuilder::IsPlumbingFrame(e.name), UINT32_MAX});
  FrameName& name = frame_name_ids_[n];
  if (e.kind == KinetoEventKind::kPythonFunction && name.plumbing) return;
  if (name.id == UINT32_MAX) name.id = cpu_contexts_.InternString(e.name);
  const uint32_t kind = FrameKindId(e.kind);
  cpu_contexts_.AddInternedFrame({e.pid_num, e.tid_num}, e.ts_ns, end, name.id, kind,
                                 FrameShapesId(e));
}

uint32_t PendingTrace::FrameKindId(KinetoEventKind kind) {
  if (kind == KinetoEventKind::kCpuOp) {
    if (cpu_op_kind_ == UINT32_MAX) cpu_op_kind_ = cpu_contexts_.InternString("cpu_op");
    return cpu_op_kind_;
  }
  if (python_kind_ == UINT32_MAX) python_kind_ = cpu_contexts_.InternString("python_function");
  return python_kind_;
}

uint32_t PendingTrace::FrameShapesId(const KinetoEvent& e) {
  if (e.shapes.empty()) {
    if (no_shapes_ == UINT32_MAX) no_shapes_ = cpu_contexts_.InternString("");
    return no_shapes_;
  }
  bool added = false;
  const uint32_t s = frame_shapes_.Intern(e.shapes, e.shapes_hash, &added);
  if (added) frame_shapes_ids_.push_back(cpu_contexts_.InternString(e.shapes));
  return frame_shapes_ids_[s];
}

void PendingTrace::AddGpuRange(ThreadKey stream, int64_t start, int64_t end,
                               const std::string& name) {
  gpu_ranges_.AddRange(stream, start, end, name);
  gpu_contexts_.AddFrame(stream, start, end, name, "gpu_user_annotation");
  ++gpu_range_count_;
}

void PendingTrace::AddProfilerRange(KinetoEvent& e) {
  profiler_ranges_.push_back({e.name, e.ts_ns, std::move(e.metrics)});
}

// Launch context: GPU event -> its launch call (same correlation) -> thread and time -> the
// annotation path open there and the stack of frames enclosing the call; kernels with no
// such path (stack) take the GPU annotations open on their stream.
void PendingTrace::JoinLaunches(proto::LaunchContextStats* stats) {
  SortRuns(runtime_.begin(), runtime_.end(),
           [](const Runtime& a, const Runtime& b) { return a.correlation < b.correlation; });
  LaunchStackTable table(stats);
  proto::LaunchContext ctx;
  uint64_t kernels = 0, no_correlation = 0, no_launch_record = 0;
  // Only traces whose ops carry shapes list each call's kernels: nothing else reads them.
  const bool list_calls = cpu_contexts_.has_shapes();
  std::vector<OpCallOf> calls;
  uint32_t next_index = 0;
  for (PendingGpu& p : gpu_) {
    const uint32_t index = next_index++;
    const bool kernel = p.kind == proto::ACTIVITY_KIND_KERNEL;
    kernels += kernel;
    if (!p.has_correlation) {
      no_correlation += kernel;
      continue;
    }
    auto it = std::lower_bound(runtime_.begin(), runtime_.end(), p.correlation,
                               [](const Runtime& r, uint64_t c) { return r.correlation < c; });
    if (it == runtime_.end() || it->correlation != p.correlation) {
      no_launch_record += kernel;
      continue;
    }
    p.launch = static_cast<int32_t>(it - runtime_.begin());
    const ThreadKey thread = launch_threads_[it->thread];
    p.path = cpu_ranges_.PathAt(thread, it->ts_ns);
    ctx.Clear();
    cpu_contexts_.ContextAt(thread, it->ts_ns, api_names_[it->api], kernel, &table, &ctx);
    p.stack = ctx.stack();
    p.graph_launch = ctx.graph_launch();
    if (list_calls && kernel && !p.graph_launch && cpu_contexts_.last_op_calls().inner != 0) {
      calls.push_back({index, cpu_contexts_.last_op_calls()});
    }
  }
  if (!calls.empty()) ListCallKernels(calls, stats);
  if (gpu_range_count_ > 0) {
    for (PendingGpu& p : gpu_) {
      if (p.kind != proto::ACTIVITY_KIND_KERNEL) continue;
      // GPU-side annotations stand in where the CPU side gave no frame.
      if (p.stack == 0) {
        ctx.Clear();
        gpu_contexts_.ContextAt({p.device, p.stream}, p.start, "", true, &table, &ctx);
        p.stack = ctx.stack();
      }
      if (p.path == nullptr) p.path = gpu_ranges_.PathAt({p.device, p.stream}, p.start);
    }
  }
  stats->set_kernels(kernels);
  stats->set_no_correlation(no_correlation);
  stats->set_no_launch_record(no_launch_record);
  stats->set_method("Kineto: cpu_op / python_function / user_annotation events enclosing the "
                    "cuda_runtime or cuda_driver launch with the kernel's correlation id, on its "
                    "thread; gpu_user_annotation where the CPU side is missing");
}

// Groups the launches by call and interns each call's kernels; every launch of the call
// points at the set. Sets are interned in the order of each call's first kernel event
// (document order), not of the call ids, which depend on how the document was cut into
// batches: one trace, read on one thread or several, gets the same table.
void PendingTrace::ListCallKernels(const std::vector<OpCallOf>& calls,
                                   proto::LaunchContextStats* stats) {
  KernelSetTable sets(stats);
  // Most calls launch a set some earlier call launched (the same op every step): a set is
  // looked up by its kernels' ids first, and the table, which sorts and hashes the names
  // (kilobytes for templated kernels), is asked only for sets not seen yet.
  std::unordered_map<std::string, uint32_t> set_of;
  std::vector<std::pair<uint32_t, uintptr_t>> ids;
  std::string key;
  std::vector<std::pair<std::string_view, std::string_view>> kernels;
  for (const bool inner : {true, false}) {
    const CallGroups groups = GroupByCall(calls, inner);
    for (size_t g = 0; g + 1 < groups.begin.size(); ++g) {
      const uint32_t* first = groups.members.data() + groups.begin[g];
      const uint32_t* last = groups.members.data() + groups.begin[g + 1];
      // The builder interns op names, so an inner op's bytes stand for its name.
      ids.clear();
      for (const uint32_t* k = first; k != last; ++k) {
        const OpCallOf& c = calls[*k];
        ids.emplace_back(gpu_[c.gpu].name, reinterpret_cast<uintptr_t>(c.calls.inner_name.data()));
      }
      std::sort(ids.begin(), ids.end());
      key.assign(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(ids[0]));
      auto [it, inserted] = set_of.try_emplace(key, 0);
      if (inserted) {
        kernels.clear();
        for (const uint32_t* k = first; k != last; ++k) {
          const OpCallOf& c = calls[*k];
          kernels.emplace_back(names_[gpu_[c.gpu].name], c.calls.inner_name);
        }
        it->second = sets.Intern(&kernels);
      }
      for (const uint32_t* k = first; k != last; ++k) {
        PendingGpu& p = gpu_[calls[*k].gpu];
        (inner ? p.op_kernels : p.outer_op_kernels) = it->second;
      }
    }
  }
}

// `calls` is in event order, so numbering the calls as they first appear numbers them in
// the order of their first kernel event; a counting sort then lists each call's launches.
PendingTrace::CallGroups PendingTrace::GroupByCall(const std::vector<OpCallOf>& calls,
                                                   bool inner) {
  std::unordered_map<uint64_t, uint32_t> group_of;
  group_of.reserve(calls.size());
  std::vector<uint32_t> group(calls.size());
  for (size_t k = 0; k < calls.size(); ++k) {
    const uint64_t call = inner ? calls[k].calls.inner : calls[k].calls.outer;
    group[k] = group_of.try_emplace(call, static_cast<uint32_t>(group_of.size())).first->second;
  }
  CallGroups out;
  out.begin.assign(group_of.size() + 1, 0);
  for (uint32_t g : group) ++out.begin[g + 1];
  std::partial_sum(out.begin.begin(), out.begin.end(), out.begin.begin());
  std::vector<uint32_t> next(out.begin.begin(), out.begin.end() - 1);
  out.members.resize(calls.size());
  for (size_t k = 0; k < calls.size(); ++k) {
    out.members[next[group[k]]++] = static_cast<uint32_t>(k);
  }
  return out;
}

// cuda_profiler_range events carry the counters of one kernel launch each; the i-th range
// named N belongs to the i-th kernel named N in time order. Ranges with no such kernel
// (range-profiler traces often hold no kernel events at all) become activities of
// unspecified kind, so their metrics are kept without adding fake kernel time.
void PendingTrace::AttachProfilerRanges(proto::CollectorStats* c) {
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
  // A counter-only trace (range profiling: no kernel events at all) lists its kernels only
  // as ranges: they become kernels, as HTA reads them, with zero duration because the
  // range's time is the profiler's replay window, not the kernel's.
  const bool counter_only = by_name.empty();
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
      if (counter_only) {
        p.kind = proto::ACTIVITY_KIND_KERNEL;
        p.from_profiler_range = true;
      }
      gpu_.push_back(p);
      target = &gpu_.back();
    }
    target->metrics = static_cast<int32_t>(r);
  }
  c->set_metrics_available(true);
  if (counter_only && unmatched > 0) {
    c->add_warnings(absl::StrCat(
        "counter-only trace: ", unmatched, " kernels are known only by their "
        "cuda_profiler_range counter records; they are imported as kernels (as HTA reads "
        "them) with zero duration, since a range's time is the profiler's replay window, not "
        "the kernel's: kernel counts, names and counters are real, kernel times are not known"));
  } else if (unmatched > 0) {
    c->add_warnings(absl::StrCat(
        unmatched, " of ", matched + unmatched,
        " cuda_profiler_range counter records match no kernel event by name and order; kept as "
        "activities of unspecified kind (their durations are range times, not kernel times)"));
  }
}

// deviceProperties lists every GPU of the machine; keep those the trace used, and name the
// ones it used but does not describe "unknown". ROCm traces number devices apart from their
// deviceProperties (kernels on device 2 or 9 of a process that lists one GPU as id 0): a
// used device it does not list is described as the listed GPUs when they are all alike,
// with a warning that says so.
void PendingTrace::DescribeDevices(proto::TraceHeader* header) const {
  std::vector<uint32_t> seen;
  for (const PendingGpu& p : gpu_) seen.push_back(p.device);
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  bool alike = header->devices_size() > 0;
  for (const auto& d : header->devices()) {
    proto::DeviceInfo a = d, b = header->devices(0);
    a.clear_id();
    b.clear_id();
    alike &= a.SerializeAsString() == b.SerializeAsString();
  }
  if (alike) {
    const proto::DeviceInfo listed = header->devices(0);
    std::vector<uint32_t> described;
    for (uint32_t id : seen) {
      bool have = false;
      for (const auto& d : header->devices()) have |= d.id() == id;
      if (have) continue;
      proto::DeviceInfo* d = header->add_devices();
      *d = listed;
      d->set_id(id);
      described.push_back(id);
    }
    if (!described.empty()) {
      std::string ids;
      for (uint32_t id : described) absl::StrAppend(&ids, ids.empty() ? "" : ", ", id);
      header->mutable_collector()->add_warnings(absl::StrCat(
          "kernels run on device ", ids, ", which deviceProperties does not list (ROCm "
          "numbers devices apart from it); described as the ", header->devices_size() -
          described.size(), " GPU(s) it lists, all alike (", listed.name(), ")"));
    }
  }
  auto* devs = header->mutable_devices();
  if (!seen.empty()) {
    for (int i = devs->size() - 1; i >= 0; --i) {
      if (!std::binary_search(seen.begin(), seen.end(), devs->Get(i).id())) devs->DeleteSubrange(i, 1);
    }
  }
  for (uint32_t id : seen) {
    bool have = false;
    for (const auto& d : header->devices()) have |= d.id() == id;
    if (have) continue;
    proto::DeviceInfo* d = header->add_devices();
    d->set_id(id);
    d->set_kind("gpu");
    d->set_name("unknown");
  }
}

void PendingTrace::FillActivity(const PendingGpu& p, int64_t base_ns, proto::Activity* a) const {
  a->set_kind(static_cast<proto::ActivityKind>(p.kind));
  a->set_name(names_[p.name]);
  a->set_start_ns(p.start + base_ns);
  a->set_end_ns(p.end + base_ns);
  if (p.kind == proto::ACTIVITY_KIND_UNSPECIFIED || p.from_profiler_range) {
    (*a->mutable_args())["kineto_category"] = "cuda_profiler_range";
  }
  if (p.kind != proto::ACTIVITY_KIND_UNSPECIFIED) {
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
    const std::string& name = names_[p.name];
    if (p.kind == proto::ACTIVITY_KIND_MEMCPY) a->set_copy_kind(CopyKindFromName(name));
    std::string src, dst;
    MemoryKindsFromName(name, &src, &dst);
    if (p.kind == proto::ACTIVITY_KIND_MEMCPY) a->set_src_memory(src);
    a->set_dst_memory(dst);
  }
  if (p.args >= 0) {
    for (const auto& [k, v] : args_[static_cast<size_t>(p.args)]) (*a->mutable_args())[k] = v;
  }
  if (p.launch >= 0) {
    const Runtime& r = runtime_[static_cast<size_t>(p.launch)];
    a->set_pid(launch_threads_[r.thread].pid);
    a->set_tid(launch_threads_[r.thread].tid);
    // The launch call is on the same clock as the GPU events (both before baseTimeNanoseconds).
    a->set_launch_ns(r.ts_ns + base_ns);
  }
  if (p.path != nullptr) a->set_nvtx_path(*p.path);
  if (p.launch >= 0 || p.stack != 0) {
    proto::LaunchContext* ctx = a->mutable_launch_context();
    ctx->set_stack(p.stack);
    if (p.launch >= 0) {
      const std::string& api = api_names_[runtime_[static_cast<size_t>(p.launch)].api];
      if (!api.empty()) ctx->set_launch_api(api);
    }
    ctx->set_graph_launch(p.graph_launch);
    if (p.graph_capture) ctx->set_graph_capture(true);
    ctx->set_op_kernels(p.op_kernels);
    ctx->set_outer_op_kernels(p.outer_op_kernels);
  }
  if (p.has_reported_occupancy) {
    a->mutable_occupancy()->set_reported_est_occupancy_pct(p.reported_occupancy_pct);
  }
  if (p.metrics >= 0) {
    proto::KernelMetrics* m = a->mutable_metrics();
    m->set_source("kineto counters: cuda_profiler_range");
    for (const auto& [k, v] : profiler_ranges_[static_cast<size_t>(p.metrics)].metrics) {
      (*m->mutable_raw())[k] = v;
    }
  }
}

// (start, device, stream), ties in event order: the keys sort as one array of 24-byte
// entries, where comparing through indices would reach into the deque of events.
std::vector<PendingTrace::EmitKey> PendingTrace::EmitOrder() const {
  std::vector<EmitKey> order;
  order.reserve(gpu_.size());
  uint32_t index = 0;
  for (const PendingGpu& p : gpu_) order.push_back({p.start, p.stream, p.device, index++});
  SortRuns(order.begin(), order.end(), [](const EmitKey& a, const EmitKey& b) {
    return std::tie(a.start, a.device, a.stream) < std::tie(b.start, b.device, b.stream);
  });
  return order;
}

// Ranges, then the activities in (start, device, stream) order, as ImportFile documents;
// the launch-context tables before the first activity.
void PendingTrace::Emit(int64_t base_ns, proto::TraceHeader* header, TraceSink* sink,
                        const GraphCaptureSet* captures, const LayerModel* layer_model) {
  proto::NvtxRange s;  // reused: copying into it keeps its strings' storage
  auto shifted = [base_ns, sink, &s](const proto::NvtxRange& r) {
    if (base_ns == 0) return sink->Range(r);
    s = r;
    s.set_start_ns(r.start_ns() + base_ns);
    s.set_end_ns(r.end_ns() + base_ns);
    sink->Range(s);
  };
  cpu_ranges_.Build(shifted);
  gpu_ranges_.Build(shifted);
  JoinLaunches(header->mutable_launch_context_stats());
  if (captures != nullptr || layer_model != nullptr) JoinGraphCaptures(captures, layer_model, header);
  AttachProfilerRanges(header->mutable_collector());
  DescribeDevices(header);
  sink->LaunchContexts(header->launch_context_stats());
  const std::vector<EmitKey> order = EmitOrder();
  // Timestamp outliers (kOutlierGapNs): events are in start order, so the kept ones are
  // the range [lo, hi) of `order`; each cut drops the smaller side of its largest gap.
  size_t lo = 0, hi = order.size();
  std::string where;
  for (int cut = 0; cut < kMaxOutlierCuts && hi - lo > 2; ++cut) {
    size_t at = 0;  // the gap between order[at - 1] and order[at]
    int64_t gap = -1;
    for (size_t k = lo + 1; k < hi; ++k) {
      const int64_t g = order[k].start - order[k - 1].start;
      if (g > gap) {
        gap = g;
        at = k;
      }
    }
    const size_t left = at - lo, right = hi - at;
    if (gap <= kOutlierGapNs || left == right) break;
    const bool drop_left = left < right;
    const int64_t rest_extent = drop_left ? order[hi - 1].start - order[at].start
                                          : order[at - 1].start - order[lo].start;
    if (static_cast<double>(gap) <= kOutlierGapRatio * static_cast<double>(std::max<int64_t>(rest_extent, 1000))) {
      break;
    }
    const PendingGpu& first = gpu_[order[drop_left ? lo : at].index];
    if (where.empty()) {
      where = absl::StrCat(names_[first.name], " at ts ", (first.start + base_ns) / 1000,
                           " us, ", gap / 1000000000, " s ", drop_left ? "before" : "after",
                           " the other events");
    }
    outliers_ += drop_left ? left : right;
    (drop_left ? lo : hi) = at;
  }
  if (outliers_ > 0) {
    header->mutable_collector()->add_warnings(absl::StrCat(
        outliers_, " GPU events lie far outside the rest of the trace (the first: ", where,
        "; beyond a gap of more than a day and ", kOutlierGapRatio,
        " times the rest's extent: a timestamp from another clock) and were left out of "
        "the span, idle time, timeline and every total"));
  }
  proto::Activity a;
  for (size_t k = lo; k < hi; ++k) {
    a.Clear();
    FillActivity(gpu_[order[k].index], base_ns, &a);
    if (!modelled_.empty()) {
      if (auto it = modelled_.find(order[k].index); it != modelled_.end()) {
        a.mutable_launch_context()->set_modelled_stack(it->second.stack);
        a.mutable_launch_context()->set_modelled_op_kernels(it->second.op_kernels);
      }
    }
    sink->TakeActivity(&a);
  }
}

}  // namespace qprof::importers
