// Profile.comm (exposed and hidden communication and copies per device, the collectives)
// and Profile.copies, from a finished ProfileState. Link peaks are the analysis's to add
// (analysis/ceilings/comm_diagnosis.h): they need the device spec table.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/aggregate/overlap.h"
#include "analysis/aggregate/tables.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {
namespace {

uint64_t Span(int64_t first, int64_t last, uint64_t count) {
  return count > 0 && last > first ? static_cast<uint64_t>(last - first) : 0;
}

uint64_t Minus(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void AddDeviceRow(const DeviceTimeline& tl, uint32_t device, uint32_t trace,
                  proto::CommSummary* s) {
  proto::CommDeviceRow* r = s->add_per_device();
  r->set_device(device);
  r->set_trace(trace);
  r->set_total_ns(tl.comm_ns);
  r->set_exposed_ns(tl.comm_exposed_ns);
  r->set_hidden_ns(tl.comm_hidden_ns);
  r->set_copy_total_ns(tl.copy_ns);
  r->set_copy_exposed_ns(tl.copy_exposed_ns);
  r->set_copy_hidden_ns(tl.copy_hidden_ns);
  s->set_total_ns(s->total_ns() + tl.comm_ns);
  s->set_exposed_ns(s->exposed_ns() + tl.comm_exposed_ns);
  s->set_hidden_ns(s->hidden_ns() + tl.comm_hidden_ns);
  s->set_copy_total_ns(s->copy_total_ns() + tl.copy_ns);
  s->set_copy_exposed_ns(s->copy_exposed_ns() + tl.copy_exposed_ns);
  s->set_copy_hidden_ns(s->copy_hidden_ns() + tl.copy_hidden_ns);
  s->set_error_ns(s->error_ns() + tl.error_ns);
  s->set_devices(s->devices() + 1);
}

proto::CollectiveRow CollectiveRowOf(const CollectiveKey& k, const CollectiveAcc& c) {
  proto::CollectiveRow r;
  r.set_name(k.name);
  r.set_library(k.library);
  r.set_process_group(k.process_group);
  r.set_group_size(k.group_size);
  r.set_group_size_source(k.group_size_source);
  r.set_calls(c.calls);
  r.set_devices(static_cast<uint32_t>(c.devices.size()));
  r.set_time_ns(c.time_ns);
  r.set_graph_calls(c.graph_calls);
  r.set_graph_time_ns(c.graph_time_ns);
  r.set_bytes(c.bytes);
  r.set_calls_with_bytes(c.calls_with_bytes);
  r.set_time_with_bytes_ns(c.time_with_bytes_ns);
  r.set_bytes_source(c.bytes_source);
  if (c.calls_with_bytes > 0) {
    r.set_bytes_per_call(static_cast<double>(c.bytes) / static_cast<double>(c.calls_with_bytes));
  }
  std::string formula;
  const std::optional<double> factor = BusBandwidthFactor(k.name, k.library, k.group_size, &formula);
  r.set_busbw_formula(absl::StrCat("busbw = algbw x ", formula,
                                   " (nccl-tests doc/PERFORMANCE.md); algbw = S / t, t the "
                                   "kernel time"));
  if (c.time_with_bytes_ns > 0 && c.calls_with_bytes > 0) {
    // bytes / ns = GB/s.
    const double algbw = static_cast<double>(c.bytes) / static_cast<double>(c.time_with_bytes_ns);
    r.set_algbw_gbps(algbw);
    if (factor) {
      r.set_busbw_factor(*factor);
      r.set_busbw_gbps(algbw * *factor);
    }
  }
  return r;
}

proto::CopyRow CopyRowOf(const CopyKey& k, const CopyAcc& c) {
  proto::CopyRow r;
  r.set_kind(k.kind);
  r.set_memory(k.memory);
  r.set_calls(c.calls);
  r.set_bytes(c.bytes);
  r.set_time_ns(c.time_ns);
  if (c.time_ns > 0 && c.bytes > 0) {
    r.set_gbps(static_cast<double>(c.bytes) / static_cast<double>(c.time_ns));  // B/ns = GB/s
  }
  r.set_devices(static_cast<uint32_t>(c.devices.size()));
  r.set_graph_calls(c.graph_calls);
  return r;
}

std::string CommNote(const proto::CommSummary& s) {
  if (s.total_ns() == 0) {
    return "no communication kernels";
  }
  const double exposed = static_cast<double>(s.exposed_ns()) / static_cast<double>(s.total_ns());
  return absl::StrFormat(
      "communication kernels ran %.3g ms (union per device, summed over %d device timelines); "
      "%.0f%% of it exposed (no compute kernel on the same device ran meanwhile), %.0f%% hidden "
      "under compute; only the exposed part costs wall time",
      static_cast<double>(s.total_ns()) / 1e6, s.devices(), 100 * exposed, 100 * (1 - exposed));
}

}  // namespace

DeviceTimeline TimelineOf(const DeviceAcc& d) {
  DeviceTimeline t;
  t.span_ns = Span(d.busy.first(), d.busy.last(), d.busy.count());
  t.busy_ns = std::min(t.span_ns, d.busy.length());
  t.idle_ns = t.span_ns - t.busy_ns;
  t.compute_ns = d.compute.length();
  t.comm_ns = d.comm.length();
  // K = C u M, so |K| - |C| = |M| - |M n C|: the comm time no compute kernel overlaps.
  t.comm_exposed_ns = std::min(t.comm_ns, Minus(d.busy.length(), t.compute_ns));
  t.comm_hidden_ns = t.comm_ns - t.comm_exposed_ns;
  t.copy_ns = d.copy.length();
  t.copy_exposed_ns = std::min(t.copy_ns, Minus(d.all.length(), d.busy.length()));
  t.copy_hidden_ns = t.copy_ns - t.copy_exposed_ns;
  t.band_span_ns = Span(d.all.first(), d.all.last(), d.all.count());
  t.error_ns = d.busy.late_bound_ns() + d.compute.late_bound_ns() + d.comm.late_bound_ns() +
               d.copy.late_bound_ns() + d.all.late_bound_ns();
  return t;
}

void EmitComm(const ProfileState& state, proto::Profile* profile) {
  proto::CommSummary* s = profile->mutable_comm();
  for (size_t i = 0; i < state.traces.size(); ++i) {
    for (const auto& [id, d] : state.traces[i].devices) {
      AddDeviceRow(TimelineOf(d), id, static_cast<uint32_t>(i), s);
    }
  }
  std::vector<proto::CollectiveRow> rows;
  for (const auto& [k, c] : state.collectives) rows.push_back(CollectiveRowOf(k, c));
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.time_ns() > b.time_ns();
  });
  for (auto& r : rows) {
    r.set_provenance(profile->totals().provenance());
    *s->add_collectives() = std::move(r);
  }
  std::vector<proto::CopyRow> copies;
  for (const auto& [k, c] : state.copies) copies.push_back(CopyRowOf(k, c));
  std::stable_sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) {
    return a.time_ns() > b.time_ns();
  });
  for (auto& r : copies) {
    r.set_provenance(profile->totals().provenance());
    *profile->add_copies() = std::move(r);
  }
  s->set_rule(
      "comm = kernels of class comm by the registry attribution or the name rules (NCCL, custom "
      "all-reduce, multimem, all-gather, ...), decided per kernel at ingest; compute = every "
      "other kernel; copies = memcpy and memset activities. Exposed comm = union of all kernels "
      "minus union of compute kernels, per device; exposed copies = union of kernels and copies "
      "minus union of kernels (TraceLens gpu_timeline, memsets counted as copies)");
  s->set_provenance(profile->totals().provenance());
  s->set_note(CommNote(*s));
}

}  // namespace qprof::aggregate
