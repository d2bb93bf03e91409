#include "profiler/trace_data_proto.h"

#include <algorithm>

namespace qprof::profiler {

void ToProto(const ActivityData& in, proto::Activity* out) {
  out->set_kind(static_cast<proto::ActivityKind>(in.kind));
  out->set_device_id(in.device_id);
  out->set_stream_id(in.stream_id);
  out->set_start_ns(in.start_ns);
  out->set_end_ns(in.end_ns);
  out->set_correlation_id(in.correlation_id);
  out->set_name(in.name);
  out->set_mangled_name(in.mangled_name);
  if (in.grid) {
    out->mutable_grid()->set_x(in.grid->x);
    out->mutable_grid()->set_y(in.grid->y);
    out->mutable_grid()->set_z(in.grid->z);
  }
  if (in.block) {
    out->mutable_block()->set_x(in.block->x);
    out->mutable_block()->set_y(in.block->y);
    out->mutable_block()->set_z(in.block->z);
  }
  out->set_registers_per_thread(in.registers_per_thread);
  out->set_static_shared_bytes(in.static_shared_bytes);
  out->set_dynamic_shared_bytes(in.dynamic_shared_bytes);
  out->set_nvtx_path(in.nvtx_path);
  out->set_bytes(in.bytes);
  out->set_copy_kind(in.copy_kind);
  out->set_graph_id(in.graph_id);
  out->set_graph_node_id(in.graph_node_id);
  out->set_pid(in.pid);
  out->set_tid(in.tid);
  if (in.metrics) {
    proto::KernelMetrics* m = out->mutable_metrics();
    if (in.metrics->tensor_pipe_pct) m->set_tensor_pipe_pct(*in.metrics->tensor_pipe_pct);
    if (in.metrics->fma_pipe_pct) m->set_fma_pipe_pct(*in.metrics->fma_pipe_pct);
    if (in.metrics->dram_throughput_pct) m->set_dram_throughput_pct(*in.metrics->dram_throughput_pct);
    if (in.metrics->sm_throughput_pct) m->set_sm_throughput_pct(*in.metrics->sm_throughput_pct);
    for (const auto& [k, v] : in.metrics->raw) (*m->mutable_raw())[k] = v;
    m->set_source(in.metrics->source);
  }
  for (const auto& [k, v] : in.args) (*out->mutable_args())[k] = v;
  for (const auto& [k, v] : in.nvtx_domain_paths) (*out->mutable_nvtx_domain_paths())[k] = v;
  if (in.launch_ns) out->set_launch_ns(*in.launch_ns);
}

void ToProto(const RangeData& in, proto::NvtxRange* out) {
  out->set_path(in.path);
  out->set_name(in.name);
  out->set_start_ns(in.start_ns);
  out->set_end_ns(in.end_ns);
  out->set_pid(in.pid);
  out->set_tid(in.tid);
  out->set_depth(in.depth);
}

void ToProto(const DeviceData& in, proto::DeviceInfo* out) {
  out->set_id(in.id);
  out->set_name(in.name);
  out->set_arch(in.arch);
  out->set_kind(in.kind);
  out->set_sm_count(in.sm_count);
  out->set_memory_bytes(in.memory_bytes);
  out->set_memory_bandwidth_gbps(in.memory_bandwidth_gbps);
  out->set_cc_major(in.cc_major);
  out->set_cc_minor(in.cc_minor);
  out->set_clock_mhz(in.clock_mhz);
}

void ToProto(const RunData& in, proto::RunInfo* out) {
  out->set_backend(in.backend);
  out->set_command_line(in.command_line);
  out->set_hostname(in.hostname);
  out->set_start_unix_ns(in.start_unix_ns);
  out->set_qprof_version(in.qprof_version);
  for (const auto& [k, v] : in.extra) (*out->mutable_extra())[k] = v;
}

void ToProto(const ProcessData& in, proto::ProcessInfo* out) {
  out->set_pid(in.pid);
  out->set_parent_pid(in.parent_pid);
  out->set_run_token(in.run_token);
  out->set_forked_from_pid(in.forked_from_pid);
}

void ToProto(const CollectorStatsData& in, proto::CollectorStats* s) {
  if (!in.collector.empty()) s->set_collector(in.collector);
  s->set_records_dropped(s->records_dropped() + in.records_dropped);
  s->set_records_invalid(s->records_invalid() + in.records_invalid);
  s->set_buffers_allocated(s->buffers_allocated() + in.buffers_allocated);
  s->set_buffer_bytes(s->buffer_bytes() + in.buffer_bytes);
  s->set_overhead_ns(s->overhead_ns() + in.overhead_ns);
  s->set_records_total(s->records_total() + in.records_total);
  s->set_metrics_requested(s->metrics_requested() || in.metrics_requested);
  s->set_metrics_available(s->metrics_available() || in.metrics_available);
  if (!in.metrics_unavailable_reason.empty()) {
    s->set_metrics_unavailable_reason(in.metrics_unavailable_reason);
  }
  for (const std::string& w : in.warnings) s->add_warnings(w);
  s->set_buffers_requested(s->buffers_requested() + in.buffers_requested);
  s->set_buffers_refused(s->buffers_refused() + in.buffers_refused);
  s->set_buffers_completed(s->buffers_completed() + in.buffers_completed);
  s->set_buffers_late(s->buffers_late() + in.buffers_late);
  s->set_buffers_read_short(s->buffers_read_short() + in.buffers_read_short);
  s->set_records_gpu(s->records_gpu() + in.records_gpu);
  s->set_records_written(s->records_written() + in.records_written);
  s->set_records_outside_window(s->records_outside_window() + in.records_outside_window);
  s->set_records_over_cap(s->records_over_cap() + in.records_over_cap);
  s->set_records_unattributed(s->records_unattributed() + in.records_unattributed);
  s->set_records_unknown_kind(s->records_unknown_kind() + in.records_unknown_kind);
  if (in.cupti_version != 0) s->set_cupti_version(in.cupti_version);
  if (in.cupti_header_version != 0) s->set_cupti_header_version(in.cupti_header_version);
  if (!in.subscriber_conflict.empty()) s->set_subscriber_conflict(in.subscriber_conflict);
  s->set_metrics_kernels_matched(s->metrics_kernels_matched() + in.metrics_kernels_matched);
  s->set_metrics_kernels_unmatched(s->metrics_kernels_unmatched() + in.metrics_kernels_unmatched);
  for (const std::string& m : in.metrics_missing) s->add_metrics_missing(m);
  if (!in.ended_by.empty()) s->set_ended_by(in.ended_by);
  if (in.cupti_detail) {
    const CuptiDetailData& d = *in.cupti_detail;
    proto::CuptiCollectionDetail* o = s->mutable_cupti_detail();
    if (!d.metric_set.empty()) o->set_metric_set(d.metric_set);
    o->set_metric_passes(std::max(o->metric_passes(), d.metric_passes));
    o->set_metric_ranges(o->metric_ranges() + d.metric_ranges);
    o->set_metric_ranges_refused(o->metric_ranges_refused() + d.metric_ranges_refused);
    o->set_launches_captured(o->launches_captured() + d.launches_captured);
    o->set_graph_launches(o->graph_launches() + d.graph_launches);
    o->set_graph_kernels_capture_path(o->graph_kernels_capture_path() + d.graph_kernels_capture_path);
    o->set_graph_kernels_unmapped(o->graph_kernels_unmapped() + d.graph_kernels_unmapped);
    o->set_records_incomplete(o->records_incomplete() + d.records_incomplete);
    o->set_buffers_not_returned(o->buffers_not_returned() + d.buffers_not_returned);
    o->set_metric_launches_past_limit(o->metric_launches_past_limit() + d.metric_launches_past_limit);
    for (const std::string& c : d.contexts_not_profiled) o->add_contexts_not_profiled(c);
  }
}

void ToProto(const HeaderData& in, proto::TraceHeader* out) {
  out->set_schema_version(in.schema_version);
  out->set_provenance(static_cast<proto::Provenance>(in.provenance));
  if (in.run) ToProto(*in.run, out->mutable_run());
  for (const DeviceData& d : in.devices) ToProto(d, out->add_devices());
  if (in.collector) ToProto(*in.collector, out->mutable_collector());
  out->set_source_kind(in.source_kind);
  for (const std::string& n : in.notes) out->add_notes(n);
  if (in.process) ToProto(*in.process, out->mutable_process());
}

void ToProto(const FooterData& in, proto::TraceFooter* out) {
  if (in.collector) ToProto(*in.collector, out->mutable_collector());
  if (in.run) ToProto(*in.run, out->mutable_run());
  out->set_activity_count(in.activity_count);
}

absl::Status ToAbslStatus(const CoreStatus& s) {
  if (s.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(s.code()), s.message());
}

}  // namespace qprof::profiler
