#include "analysis/aggregate/partial.h"

#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/file_util.h"
#include "base/status_macros.h"

namespace qprof::aggregate {
namespace {

void KeyToProto(const LaunchKey& k, proto::LaunchOrder* out) {
  out->set_trace(k.trace);
  out->set_start_ns(k.start_ns);
  out->set_device_id(k.device);
  out->set_stream_id(k.stream);
  out->set_seq(k.seq);
}

LaunchKey KeyFromProto(const proto::LaunchOrder& in) {
  return LaunchKey{in.trace(), in.start_ns(), in.device_id(), in.stream_id(), in.seq()};
}

template <typename Union>
void UnionFiguresToProto(const Union& u, uint64_t kernel_time_ns, uint32_t device,
                         uint64_t stream, proto::PartialUnion* out) {
  out->set_device_id(device);
  out->set_stream_id(stream);
  out->set_busy_ns(u.length());
  out->set_late_bound_ns(u.late_bound_ns());
  out->set_kernel_time_ns(kernel_time_ns);
  out->set_count(u.count());
  out->set_first_ns(u.first());
  out->set_last_ns(u.last());
  const GapStats g = u.gaps();
  proto::PartialGaps* pg = out->mutable_gaps();
  pg->set_count(g.count);
  pg->set_total_ns(g.total_ns);
  pg->set_max_ns(g.max_ns);
  for (int i = 0; i < GapStats::kBuckets; ++i) {
    pg->add_bucket_count(g.bucket_count[i]);
    pg->add_bucket_ns(g.bucket_ns[i]);
  }
  for (int i = 0; i < GapStats::kCauses; ++i) {
    pg->add_cause_count(g.cause_count[i]);
    pg->add_cause_ns(g.cause_ns[i]);
  }
}

void UnionToProto(const UnionAcc& u, uint32_t device, uint64_t stream, proto::PartialUnion* out) {
  UnionFiguresToProto(u.busy, u.kernel_time_ns, device, stream, out);
}

void FiguresToProto(const IntervalUnion& u, proto::PartialUnionFigures* out) {
  out->set_length_ns(u.length());
  out->set_late_bound_ns(u.late_bound_ns());
  out->set_count(u.count());
  out->set_first_ns(u.first());
  out->set_last_ns(u.last());
}

IntervalUnion FiguresFromProto(const proto::PartialUnionFigures& in) {
  return IntervalUnion::FromFigures(in.length_ns(), in.late_bound_ns(), in.count(), in.first_ns(),
                                    in.last_ns());
}

void DeviceToProto(const DeviceAcc& d, uint32_t device, proto::PartialUnion* out) {
  UnionFiguresToProto(d.busy, d.kernel_time_ns, device, 0, out);
  FiguresToProto(d.compute, out->mutable_compute());
  FiguresToProto(d.comm, out->mutable_comm());
  FiguresToProto(d.copy, out->mutable_copy());
  FiguresToProto(d.all, out->mutable_all());
}

GapStats GapsFromProto(const proto::PartialGaps& in) {
  GapStats g;
  g.count = in.count();
  g.total_ns = in.total_ns();
  g.max_ns = in.max_ns();
  for (int i = 0; i < GapStats::kBuckets && i < in.bucket_count_size(); ++i) {
    g.bucket_count[i] = in.bucket_count(i);
  }
  for (int i = 0; i < GapStats::kBuckets && i < in.bucket_ns_size(); ++i) {
    g.bucket_ns[i] = in.bucket_ns(i);
  }
  for (int i = 0; i < GapStats::kCauses && i < in.cause_count_size(); ++i) {
    g.cause_count[i] = in.cause_count(i);
  }
  for (int i = 0; i < GapStats::kCauses && i < in.cause_ns_size(); ++i) {
    g.cause_ns[i] = in.cause_ns(i);
  }
  return g;
}

UnionAcc UnionFromProto(const proto::PartialUnion& in) {
  UnionAcc u;
  u.busy = IntervalUnion::FromFigures(in.busy_ns(), in.late_bound_ns(), in.count(),
                                      in.first_ns(), in.last_ns(), GapsFromProto(in.gaps()));
  u.kernel_time_ns = in.kernel_time_ns();
  return u;
}

DeviceAcc DeviceFromProto(const proto::PartialUnion& in) {
  DeviceAcc d;
  d.busy = TaggedIntervalUnion::FromFigures(in.busy_ns(), in.late_bound_ns(), in.count(),
                                            in.first_ns(), in.last_ns(), GapsFromProto(in.gaps()));
  d.kernel_time_ns = in.kernel_time_ns();
  d.compute = FiguresFromProto(in.compute());
  d.comm = FiguresFromProto(in.comm());
  d.copy = FiguresFromProto(in.copy());
  d.all = FiguresFromProto(in.all());
  return d;
}

void TraceToProto(const TraceState& t, proto::PartialTrace* out) {
  *out->mutable_header() = t.header;
  out->set_truncated(t.truncated);
  out->set_truncation_detail(t.truncation_detail);
  out->set_kernel_records(t.kernel_records);
  out->set_first_ns(t.first_ns);
  out->set_last_ns(t.last_ns);
  for (const auto& [id, d] : t.devices) DeviceToProto(d, id, out->add_devices());
  for (const auto& [key, u] : t.streams) UnionToProto(u, key.first, key.second, out->add_streams());
  out->set_memcpy_ns(t.memcpy_ns);
  out->set_memset_ns(t.memset_ns);
  for (const auto& [step, r] : t.step_ranges) {
    proto::PartialStepRange* s = out->add_step_ranges();
    s->set_step(step);
    s->set_start_ns(r.start_ns);
    s->set_end_ns(r.end_ns);
  }
  out->set_seq(t.seq);
  out->set_first_replay_gemm_rows(t.first_replay_gemm_rows);
  out->set_first_replay_gemm_ns(t.first_replay_gemm_ns);
  out->set_first_replay_gemm(t.first_replay_gemm);
  for (const DecodeStepAcc& d : t.decode_steps.steps()) {
    proto::PartialDecodeStep* o = out->add_decode_steps();
    o->set_kind(d.kind);
    o->set_range_start(d.range_start);
    o->set_range_end(d.range_end);
    o->set_pid(d.pid);
    o->set_tid(d.tid);
    o->set_name(d.name);
    o->set_first_ns(d.first_ns);
    o->set_last_ns(d.last_ns);
    o->set_kernels(d.kernels);
    o->set_kernel_ns(d.kernel_ns);
  }
}

TraceState TraceFromProto(const proto::PartialTrace& in) {
  TraceState t;
  t.header = in.header();
  t.truncated = in.truncated();
  t.truncation_detail = in.truncation_detail();
  t.kernel_records = in.kernel_records();
  t.first_ns = in.first_ns();
  t.last_ns = in.last_ns();
  for (const auto& u : in.devices()) t.devices[u.device_id()] = DeviceFromProto(u);
  for (const auto& u : in.streams()) t.streams[{u.device_id(), u.stream_id()}] = UnionFromProto(u);
  t.memcpy_ns = in.memcpy_ns();
  t.memset_ns = in.memset_ns();
  for (const auto& s : in.step_ranges()) t.step_ranges[s.step()] = {s.start_ns(), s.end_ns()};
  t.seq = in.seq();
  t.first_replay_gemm_rows = in.first_replay_gemm_rows();
  t.first_replay_gemm_ns = in.first_replay_gemm_ns();
  t.first_replay_gemm = in.first_replay_gemm();
  for (const auto& o : in.decode_steps()) {
    DecodeStepAcc d;
    d.kind = static_cast<uint8_t>(o.kind());
    d.range_start = o.range_start();
    d.range_end = o.range_end();
    d.pid = o.pid();
    d.tid = o.tid();
    d.name = o.name();
    d.first_ns = o.first_ns();
    d.last_ns = o.last_ns();
    d.kernels = o.kernels();
    d.kernel_ns = o.kernel_ns();
    t.decode_steps.steps().push_back(std::move(d));
  }
  return t;
}

void ShapeWorkToProto(const ShapeWorkAcc& e, proto::PartialShapeWork* p) {
  const work::LaunchWork& w = e.work;
  p->set_flops(w.work.flops);
  p->set_bytes(w.work.bytes);
  p->set_bytes_known(w.work.bytes_known);
  p->set_weight_bytes(w.work.weight_bytes);
  p->set_weight_bits(w.work.weight_bits);
  p->set_weight_format(w.work.weight_format);
  p->set_precision(w.work.precision);
  p->set_kind(w.work.kind);
  p->set_description(w.work.description);
  p->set_share(w.share);
  p->set_workers(w.workers);
  p->set_needs_model(w.needs_model);
  p->set_moe_tokens(w.moe_tokens);
  p->set_moe_hidden(w.moe_hidden);
  p->set_activation_bytes(w.activation_bytes);
  p->set_moe_shared(w.moe_shared);
  p->set_moe_op(w.moe_op);
  p->set_from_capture(w.from_capture);
  p->set_modelled(w.modelled);
  p->set_launches(e.launches);
  p->set_timed(e.timed);
  p->set_time_ns(e.time_ns);
}

ShapeWorkAcc ShapeWorkFromProto(const proto::PartialShapeWork& p) {
  ShapeWorkAcc e;
  work::LaunchWork& w = e.work;
  w.work.flops = p.flops();
  w.work.bytes = p.bytes();
  w.work.bytes_known = p.bytes_known();
  w.work.weight_bytes = p.weight_bytes();
  w.work.weight_bits = p.weight_bits();
  w.work.weight_format = p.weight_format();
  w.work.precision = p.precision();
  w.work.kind = p.kind();
  w.work.description = p.description();
  w.share = p.share();
  w.workers = p.workers();
  w.needs_model = p.needs_model();
  w.moe_tokens = p.moe_tokens();
  w.moe_hidden = p.moe_hidden();
  w.activation_bytes = p.activation_bytes();
  w.moe_shared = p.moe_shared();
  w.moe_op = p.moe_op();
  w.from_capture = p.from_capture();
  w.modelled = p.modelled();
  e.launches = p.launches();
  e.timed = p.timed();
  e.time_ns = p.time_ns();
  return e;
}

void GroupToProto(const KernelGroup& g, proto::PartialKernel* out) {
  out->set_name(g.name);
  *out->mutable_rep() = g.rep;
  KeyToProto(g.rep_key, out->mutable_rep_order());
  out->set_metrics_rep_set(g.has_metrics_rep);
  if (g.has_metrics_rep) *out->mutable_metrics_rep() = g.metrics_rep;
  KeyToProto(g.metrics_key, out->mutable_metrics_order());
  out->set_class_tp_sum(g.class_tp_sum);
  out->set_class_tp_weight(g.class_tp_weight);
  out->set_launches(g.launches);
  out->set_calls(g.calls);
  out->set_time_ns(g.time_ns);
  g.durations.ToProto(out->mutable_durations());
  out->set_work_bytes(g.work_bytes);
  out->set_work_flops(g.work_flops);
  out->set_work_time_ns(g.work_time_ns);
  out->set_tp_sum(g.tp_sum);
  out->set_tp_weight(g.tp_weight);
  out->set_fma_sum(g.fma_sum);
  out->set_fma_weight(g.fma_weight);
  out->set_dram_sum(g.dram_sum);
  out->set_dram_weight(g.dram_weight);
  for (uint32_t d : g.devices) out->add_devices(d);
  for (const TraceTime& t : g.per_trace) {
    proto::PartialTraceTime* p = out->add_per_trace();
    p->set_trace(t.trace);
    p->set_calls(t.calls);
    p->set_time_ns(t.time_ns);
  }
  g.work.ToProto(out->mutable_work());
  out->set_without_work(g.without_work);
  out->set_context(g.context);
  out->set_own(g.own);
  out->set_context_time(g.context_time);
  out->set_work_launches(g.work_launches);
  for (const ShapeWorkAcc& e : g.shape_work) ShapeWorkToProto(e, out->add_shape_work());
  out->set_shape_invalid(g.shape_invalid);
  out->set_shape_invalid_example(g.shape_invalid_example);
  for (const auto& [k, c] : g.configs) {
    proto::PartialLaunchConfig* p = out->add_configs();
    p->set_trace(k.trace);
    p->set_device_id(k.device);
    p->mutable_grid()->set_x(k.grid[0]);
    p->mutable_grid()->set_y(k.grid[1]);
    p->mutable_grid()->set_z(k.grid[2]);
    p->mutable_block()->set_x(k.block[0]);
    p->mutable_block()->set_y(k.block[1]);
    p->mutable_block()->set_z(k.block[2]);
    p->set_registers_per_thread(k.registers);
    p->set_shared_bytes(k.shared_bytes);
    p->set_count(c.count);
    p->set_time(c.time);
    KeyToProto(c.first, p->mutable_first());
    p->set_reported_weight(c.reported_weight);
    p->set_reported_sum(c.reported_sum);
    p->set_reported_positive(c.reported_positive);
    p->set_reported_min(c.reported_min);
    p->set_reported_max(c.reported_max);
    p->set_reported_zero(c.reported_zero);
  }
  out->set_comm(g.comm);
}

// False when a configuration names a trace the profile lacks or is listed twice.
bool ConfigsFromProto(const proto::PartialKernel& in, uint32_t traces, KernelGroup* g) {
  for (const proto::PartialLaunchConfig& p : in.configs()) {
    LaunchConfigKey k;
    k.trace = p.trace();
    k.device = p.device_id();
    k.grid[0] = p.grid().x();
    k.grid[1] = p.grid().y();
    k.grid[2] = p.grid().z();
    k.block[0] = p.block().x();
    k.block[1] = p.block().y();
    k.block[2] = p.block().z();
    k.registers = p.registers_per_thread();
    k.shared_bytes = p.shared_bytes();
    if (k.trace >= traces || p.first().trace() >= traces || p.count() == 0) return false;
    LaunchConfigAcc c;
    c.count = p.count();
    c.time = p.time();
    c.first = KeyFromProto(p.first());
    c.reported_weight = p.reported_weight();
    c.reported_sum = p.reported_sum();
    c.reported_positive = p.reported_positive();
    c.reported_min = p.reported_min();
    c.reported_max = p.reported_max();
    c.reported_zero = p.reported_zero();
    if (!g->configs.emplace(k, c).second) return false;
  }
  return true;
}

// False when the message does not describe a kernel of `traces` traces.
bool GroupFromProto(const proto::PartialKernel& in, uint32_t traces, KernelGroup* g) {
  g->rep = in.rep();
  g->rep_key = KeyFromProto(in.rep_order());
  g->has_metrics_rep = in.metrics_rep_set();
  g->metrics_rep = in.metrics_rep();
  g->metrics_key = KeyFromProto(in.metrics_order());
  g->class_tp_sum = in.class_tp_sum();
  g->class_tp_weight = in.class_tp_weight();
  g->launches = in.launches();
  g->calls = in.calls();
  g->time_ns = in.time_ns();
  g->durations = DurationQuantiles::FromProto(in.durations());
  g->work_bytes = in.work_bytes();
  g->work_flops = in.work_flops();
  g->work_time_ns = in.work_time_ns();
  g->tp_sum = in.tp_sum();
  g->tp_weight = in.tp_weight();
  g->fma_sum = in.fma_sum();
  g->fma_weight = in.fma_weight();
  g->dram_sum = in.dram_sum();
  g->dram_weight = in.dram_weight();
  g->devices.assign(in.devices().begin(), in.devices().end());
  uint32_t last_trace = 0;
  for (const proto::PartialTraceTime& t : in.per_trace()) {
    if (t.trace() >= traces || (!g->per_trace.empty() && t.trace() <= last_trace)) return false;
    last_trace = t.trace();
    g->per_trace.push_back(TraceTime{t.trace(), t.calls(), t.time_ns()});
  }
  g->without_work = in.without_work();
  if (!g->work.FromProto(in.work())) return false;
  g->context_time = in.context_time();
  g->comm = in.comm();
  g->comm_known = true;
  g->work_launches = in.work_launches();
  for (const proto::PartialShapeWork& p : in.shape_work()) {
    ShapeWorkAcc e = ShapeWorkFromProto(p);
    if (e.timed > e.launches || e.launches > g->launches || e.work.share <= 0 || e.work.share > 1) {
      return false;
    }
    if (!g->shape_index.emplace(e.work.Key(), static_cast<uint32_t>(g->shape_work.size())).second ||
        g->shape_work.size() >= KernelGroup::kMaxShapeWork) {
      return false;
    }
    g->shape_work.push_back(std::move(e));
  }
  g->shape_invalid = in.shape_invalid();
  g->shape_invalid_example = in.shape_invalid_example();
  if (g->work_launches > g->calls || g->shape_invalid > g->launches) return false;
  if (!ConfigsFromProto(in, traces, g)) return false;
  return g->launches > 0 && g->rep_key.trace < traces && g->calls <= g->launches &&
         g->durations.Valid() && g->durations.count() == g->calls &&
         (!g->has_metrics_rep || g->metrics_key.trace < traces) &&
         std::is_sorted(g->devices.begin(), g->devices.end());
}

void RefsToProto(const DeviceRefs& refs,
                 google::protobuf::RepeatedPtrField<proto::PartialDeviceRef>* out) {
  for (const auto& [trace, device] : refs) {
    proto::PartialDeviceRef* r = out->Add();
    r->set_trace(trace);
    r->set_device_id(device);
  }
}

bool RefsFromProto(const google::protobuf::RepeatedPtrField<proto::PartialDeviceRef>& in,
                   uint32_t traces, DeviceRefs* out) {
  for (const proto::PartialDeviceRef& r : in) {
    if (r.trace() >= traces) return false;
    out->emplace(r.trace(), r.device_id());
  }
  return true;
}

void CollectivesToProto(const ProfileState& state, proto::PartialProfile* out) {
  for (const auto& [k, c] : state.collectives) {
    proto::PartialCollective* p = out->add_collectives();
    p->set_name(k.name);
    p->set_library(k.library);
    p->set_process_group(k.process_group);
    p->set_group_size(k.group_size);
    p->set_group_size_source(k.group_size_source);
    p->set_calls(c.calls);
    p->set_time_ns(c.time_ns);
    p->set_graph_calls(c.graph_calls);
    p->set_graph_time_ns(c.graph_time_ns);
    p->set_bytes(c.bytes);
    p->set_calls_with_bytes(c.calls_with_bytes);
    p->set_time_with_bytes_ns(c.time_with_bytes_ns);
    p->set_bytes_source(c.bytes_source);
    RefsToProto(c.devices, p->mutable_devices());
  }
  for (const auto& [k, c] : state.copies) {
    proto::PartialCopy* p = out->add_copies();
    p->set_kind(k.kind);
    p->set_memory(k.memory);
    p->set_calls(c.calls);
    p->set_bytes(c.bytes);
    p->set_time_ns(c.time_ns);
    p->set_graph_calls(c.graph_calls);
    RefsToProto(c.devices, p->mutable_devices());
  }
}

// False when a row names a trace the profile lacks or is listed twice.
bool CollectivesFromProto(const proto::PartialProfile& in, uint32_t traces, ProfileState* state) {
  for (const proto::PartialCollective& p : in.collectives()) {
    CollectiveKey k{p.name(), p.library(), p.process_group(), p.group_size(),
                    p.group_size_source()};
    CollectiveAcc c;
    c.calls = p.calls();
    c.time_ns = p.time_ns();
    c.graph_calls = p.graph_calls();
    c.graph_time_ns = p.graph_time_ns();
    c.bytes = p.bytes();
    c.calls_with_bytes = p.calls_with_bytes();
    c.time_with_bytes_ns = p.time_with_bytes_ns();
    c.bytes_source = p.bytes_source();
    if (!RefsFromProto(p.devices(), traces, &c.devices) || c.calls_with_bytes > c.calls ||
        !state->collectives.emplace(std::move(k), std::move(c)).second) {
      return false;
    }
  }
  for (const proto::PartialCopy& p : in.copies()) {
    CopyAcc c;
    c.calls = p.calls();
    c.bytes = p.bytes();
    c.time_ns = p.time_ns();
    c.graph_calls = p.graph_calls();
    if (!RefsFromProto(p.devices(), traces, &c.devices) ||
        !state->copies.emplace(CopyKey{p.kind(), p.memory()}, std::move(c)).second) {
      return false;
    }
  }
  return true;
}

}  // namespace

proto::PartialProfile ToPartial(const ProfileState& state) {
  proto::PartialProfile out;
  out.set_version(kPartialProfileVersion);
  for (const TraceState& t : state.traces) TraceToProto(t, out.add_traces());
  for (const KernelGroup& g : state.groups) GroupToProto(g, out.add_kernels());
  for (const classify::ContextVerdict& v : state.contexts) {
    proto::PartialContext* c = out.add_contexts();
    c->set_role(v.role);
    c->set_format(v.format);
    c->set_frame(v.frame);
    c->set_frame_kind(v.frame_kind);
    c->set_rule(v.rule);
    c->set_why(v.why);
    c->set_weak(v.weak);
    c->set_innermost(v.innermost);
    c->set_gemm_op(v.gemm_op);
  }
  out.set_launches(state.launch_counts.launches);
  out.set_launches_with_context(state.launch_counts.with_context);
  out.set_graph_launches(state.launch_counts.graph_launches);
  for (const auto& [path, r] : state.ranges) {
    proto::PartialRange* p = out.add_ranges();
    p->set_path(path);
    p->set_time_ns(r.time_ns);
    p->set_calls(r.calls);
  }
  for (const auto& [n, s] : state.steps) {
    proto::PartialStep* p = out.add_steps();
    p->set_step(n);
    p->set_first_ns(s.first_ns);
    p->set_last_ns(s.last_ns);
    p->set_time_ns(s.time_ns);
    p->set_count(s.count);
    p->set_comm_time_ns(s.comm_time_ns);
    p->set_comm_count(s.comm_count);
  }
  state.timeline.ToProto(out.mutable_timeline());
  proto::PartialStepWork* w = out.mutable_step_work();
  w->set_weight_bytes(state.step_work.weight_bytes);
  w->set_other_bytes(state.step_work.other_bytes);
  w->set_flops(state.step_work.flops);
  w->set_weight_launches(state.step_work.weight_launches);
  out.set_dropped_negative(state.dropped_negative);
  for (const auto& [name, r] : state.range_summary.names()) {
    proto::PartialRangeName* pr = out.add_range_names();
    pr->set_name(name);
    pr->set_count(r.count);
    pr->set_total_ns(r.total_ns);
    pr->set_min_ns(r.min_ns);
    pr->set_max_ns(r.max_ns);
  }
  CollectivesToProto(state, &out);
  return out;
}

absl::StatusOr<ProfileState> FromPartial(const proto::PartialProfile& in, const std::string& what) {
  if (in.version() != kPartialProfileVersion) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": partial profile version ", in.version(), "; this qprof reads version ",
        kPartialProfileVersion, " (write it again with the same qprof as the merge)"));
  }
  auto bad = [&what](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": inconsistent partial profile (", why, ")"));
  };
  if (in.traces_size() == 0) return bad("no traces");
  ProfileState state;
  for (const proto::PartialTrace& t : in.traces()) state.traces.push_back(TraceFromProto(t));
  const uint32_t traces = static_cast<uint32_t>(state.traces.size());
  for (const proto::PartialContext& c : in.contexts()) {
    classify::ContextVerdict v;
    v.role = c.role();
    v.format = c.format();
    v.frame = c.frame();
    v.frame_kind = c.frame_kind();
    v.rule = c.rule();
    v.why = c.why();
    v.weak = c.weak();
    v.innermost = c.innermost();
    v.gemm_op = c.gemm_op();
    if (state.ContextFor(v) != state.contexts.size()) return bad("a launch context twice");
  }
  for (const proto::PartialKernel& k : in.kernels()) {
    if (k.context() > state.contexts.size()) {
      return bad(absl::StrCat("kernel \"", k.name(), "\" names no launch context"));
    }
    uint32_t i = state.GroupFor(k.name(), k.context(), k.own());
    if (state.groups[i].launches != 0) return bad(absl::StrCat("kernel \"", k.name(), "\" twice"));
    if (!GroupFromProto(k, traces, &state.groups[i])) {
      return bad(absl::StrCat("kernel \"", k.name(), "\""));
    }
  }
  for (const proto::PartialRange& r : in.ranges()) state.ranges[r.path()] = {r.time_ns(), r.calls()};
  for (const proto::PartialStep& s : in.steps()) {
    state.steps[s.step()] = {s.first_ns(), s.last_ns(), s.time_ns(), s.count(), s.comm_time_ns(),
                             s.comm_count()};
  }
  if (!state.timeline.FromProto(in.timeline(), traces, state.names())) return bad("timeline");
  const proto::PartialStepWork& w = in.step_work();
  state.step_work = {w.weight_bytes(), w.other_bytes(), w.flops(), w.weight_launches()};
  state.dropped_negative = in.dropped_negative();
  state.launch_counts = {in.launches(), in.launches_with_context(), in.graph_launches()};
  for (const auto& pr : in.range_names()) {
    RangeNameAcc r;
    r.count = pr.count();
    r.total_ns = pr.total_ns();
    r.min_ns = pr.min_ns();
    r.max_ns = pr.max_ns();
    state.range_summary.Slot(pr.name()).Merge(r);
  }
  if (!CollectivesFromProto(in, traces, &state)) return bad("a collective or copy row");
  return state;
}

bool LooksLikePartial(const std::string& head) {
  return head.size() >= 8 && std::memcmp(head.data(), kPartialMagic, 8) == 0;
}

absl::StatusOr<std::string> PartialBytes(const ProfileState& state) {
  std::string bytes(kPartialMagic, 8);
  if (!ToPartial(state).AppendToString(&bytes)) {
    return absl::InternalError("cannot serialize the partial profile");
  }
  return bytes;
}

absl::StatusOr<ProfileState> ParsePartialBytes(const std::string& bytes, const std::string& what) {
  if (!LooksLikePartial(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": not a partial profile (written by `qprof analyze --partial`; it starts with \"",
        kPartialMagic, "\")"));
  }
  proto::PartialProfile p;
  if (bytes.size() - 8 > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !p.ParseFromArray(bytes.data() + 8, static_cast<int>(bytes.size() - 8))) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": partial profile does not parse (cut short or damaged)"));
  }
  return FromPartial(p, what);
}

absl::Status WritePartialFile(const ProfileState& state, const std::string& path) {
  absl::StatusOr<std::string> bytes = PartialBytes(state);
  if (!bytes.ok()) return absl::InternalError(absl::StrCat(path, ": ", bytes.status().message()));
  return WriteFileAtomic(path, *bytes);
}

absl::StatusOr<ProfileState> ReadPartialFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParsePartialBytes(bytes, path);
}

}  // namespace qprof::aggregate
