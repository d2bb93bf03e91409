#include "analysis/aggregate/tables.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "analysis/aggregate/group_work.h"
#include "analysis/aggregate/interval_union.h"
#include "analysis/aggregate/launch_stats.h"
#include "analysis/aggregate/overlap.h"
#include "analysis/work/roofs.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {
namespace {

double Share(uint64_t t, uint64_t total) {
  return total == 0 ? 0.0 : static_cast<double>(t) / static_cast<double>(total);
}

std::string RowProvenance(const proto::TraceHeader& h) {
  return ProvenanceWithSource(h.provenance(), h.source_path());
}

// Adds `o`'s launches to `g` (same trace numbering): the row's figures over every group
// folded into it.
void FoldGroup(KernelGroup& g, const KernelGroup& o) {
  if (o.launches > 0 && (g.launches == 0 || o.rep_key < g.rep_key)) {
    // The representative launch and its key move together (the row's raw name is its).
    g.rep_key = o.rep_key;
    g.rep = o.rep;
  }
  AddLaunchFigures(g, o);
}

proto::KernelRow KernelRowOf(const ProfileState& state, const KernelGroup& g,
                             const GroupVerdict& v, const work::ModelShape* model) {
  proto::KernelRow row;
  row.set_name(g.name);
  row.set_raw_name(g.rep.name().empty() ? g.rep.mangled_name() : g.rep.name());
  row.set_class_(v.attribution.pipe_class());
  row.set_role(v.attribution.role());
  row.set_format(v.attribution.format());
  row.set_evidence(v.attribution.evidence());
  row.set_evidence_detail(v.attribution.evidence_detail());
  row.set_kernel_id(v.kernel_id);
  // Time figures come from the first launch's trace (all launches of a kernel normally
  // share one provenance; mixed inputs are listed in Profile.sources).
  row.set_provenance(RowProvenance(state.traces[g.rep_key.trace].header));
  row.set_calls(g.calls);
  row.set_time_ns(g.time_ns);
  row.set_mean_ns(g.time_ns / g.calls);
  row.set_median_ns(static_cast<uint64_t>(g.durations.Quantile(0.5)));
  row.set_p90_ns(static_cast<uint64_t>(g.durations.Quantile(0.9)));
  row.set_min_ns(static_cast<uint64_t>(g.durations.min()));
  row.set_max_ns(static_cast<uint64_t>(g.durations.max()));
  row.set_quantile_error(g.durations.relative_error());
  if (g.tp_weight > 0) row.set_tensor_pipe_pct(g.tp_sum / g.tp_weight);
  if (g.fma_weight > 0) row.set_fma_pipe_pct(g.fma_sum / g.fma_weight);
  if (g.dram_weight > 0) row.set_dram_throughput_pct(g.dram_sum / g.dram_weight);
  const GroupWork w = WorkOfGroup(g, model);
  FillRowWork(w, g.calls, &row);
  row.set_roof_pipe(!w.registry_pipe.empty() && w.registry_pipe != "none"
                        ? w.registry_pipe
                        : work::RoofPipe(row.class_(), w.precision, w.flops));
  for (uint32_t d : g.devices) row.add_devices(d);
  return row;
}

// Kernels by time (and the kernel totals they sum to).
void EmitKernels(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                 LaunchOccupancies* occupancies, const work::ModelShape* model,
                 proto::Profile* profile) {
  std::map<uint32_t, std::vector<size_t>> by_row;
  for (size_t i = 0; i < state.groups.size(); ++i) by_row[verdicts[i].row].push_back(i);
  std::vector<proto::KernelRow> rows;
  uint64_t kernel_time = 0, kernel_count = 0;
  for (const auto& [row, members] : by_row) {
    std::vector<const KernelGroup*> groups;
    for (size_t i : members) groups.push_back(&state.groups[i]);
    const KernelGroup* g = groups.front();
    KernelGroup folded;  // only when the row has several groups
    if (groups.size() > 1) {
      folded.name = g->name;
      for (const KernelGroup* m : groups) FoldGroup(folded, *m);
      g = &folded;
    }
    if (g->calls == 0) continue;
    rows.push_back(KernelRowOf(state, *g, verdicts[members.front()], model));
    FillKernelLaunch(state, groups, occupancies, &rows.back());
    kernel_time += g->time_ns;
    kernel_count += g->calls;
  }
  proto::Totals* t = profile->mutable_totals();
  t->set_kernel_time_ns(kernel_time);
  t->set_kernel_count(kernel_count);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.time_ns() != b.time_ns() ? a.time_ns() > b.time_ns() : a.name() < b.name();
  });
  for (auto& r : rows) {
    r.set_share(Share(r.time_ns(), kernel_time));
    *profile->add_kernels() = std::move(r);
  }
}

// Classes in vocabulary order, then anything else; from the kernel rows.
void EmitClasses(proto::Profile* profile) {
  std::map<std::string, std::pair<uint64_t, uint64_t>> acc;  // time, calls
  for (const proto::KernelRow& k : profile->kernels()) {
    acc[k.class_()].first += k.time_ns();
    acc[k.class_()].second += k.calls();
  }
  const uint64_t kernel_time = profile->totals().kernel_time_ns();
  auto add = [&](const std::string& c) {
    proto::ClassRow* row = profile->add_classes();
    row->set_class_(c);
    if (auto it = acc.find(c); it != acc.end()) {
      row->set_time_ns(it->second.first);
      row->set_calls(it->second.second);
    }
    row->set_share(Share(row->time_ns(), kernel_time));
  };
  for (std::string_view c : pipe::kAll) add(std::string(c));
  for (const auto& [c, unused] : acc) {
    if (!IsKnownPipeClass(c)) add(c);
  }
}

// Roles by time, each with its dominant class; from the kernel rows.
void EmitRoles(proto::Profile* profile) {
  std::map<std::string, proto::RoleRow> acc;
  std::map<std::string, bool> bytes_unknown;
  for (const proto::KernelRow& k : profile->kernels()) {
    proto::RoleRow& rr = acc[k.role()];
    rr.set_role(k.role());
    rr.set_time_ns(rr.time_ns() + k.time_ns());
    rr.set_calls(rr.calls() + k.calls());
    (*rr.mutable_class_time_ns())[k.class_()] += k.time_ns();
    (*rr.mutable_evidence_time_ns())[k.evidence()] += k.time_ns();
    rr.set_kernel_rows(rr.kernel_rows() + 1);
    rr.set_flops(rr.flops() + k.flops());
    rr.set_bytes(rr.bytes() + k.bytes());
    rr.set_work_launches(rr.work_launches() + k.work_launches());
    rr.set_work_time_ns(rr.work_time_ns() + k.work_time_ns());
    // A row with FLOPs but unknown bytes makes the role's bytes a partial sum: no rate.
    if (k.work_launches() > 0 && k.flops() > 0 && k.bytes() <= 0) bytes_unknown[k.role()] = true;
  }
  std::vector<proto::RoleRow> roles;
  for (auto& [name, rr] : acc) {
    rr.set_share(Share(rr.time_ns(), profile->totals().kernel_time_ns()));
    if (rr.work_time_ns() > 0) {
      const double t = static_cast<double>(rr.work_time_ns());
      if (rr.flops() > 0) rr.set_achieved_tflops(rr.flops() / t / 1e3);
      if (rr.bytes() > 0 && !bytes_unknown[name]) rr.set_achieved_gbps(rr.bytes() / t);
    }
    uint64_t best = 0;
    // Ties go to the first class by name: a protobuf map's order is not stable between
    // two equal states (a partial profile read back analyses the same).
    for (const auto& [cls, ns] : rr.class_time_ns()) {
      if (ns > best || (ns == best && ns > 0 && cls < rr.class_())) {
        best = ns;
        rr.set_class_(cls);
      }
    }
    roles.push_back(std::move(rr));
  }
  std::sort(roles.begin(), roles.end(), [](const auto& a, const auto& b) {
    return a.time_ns() != b.time_ns() ? a.time_ns() > b.time_ns() : a.role() < b.role();
  });
  for (auto& r : roles) *profile->add_roles() = std::move(r);
}

struct BusyFigures {
  uint64_t busy = 0, idle = 0, late = 0;
};

BusyFigures BusyOf(const TraceState& t) {
  BusyFigures f;
  for (const auto& [id, u] : t.devices) {
    if (u.busy.count() == 0) continue;  // copies only
    uint64_t b = u.busy.length();
    f.busy += b;
    const uint64_t span = SpanNs(u.busy.first(), u.busy.last());
    f.idle += span - std::min(b, span);
    f.late += u.busy.late_bound_ns();
  }
  return f;
}

uint64_t SpanOf(const TraceState& t) {
  return SpanNs(t.first_ns, t.last_ns);
}

void EmitTotals(const ProfileState& state, proto::Profile* profile) {
  proto::Totals* t = profile->mutable_totals();
  uint64_t busy = 0, idle = 0, late = 0, span = 0, memcpy_ns = 0, memset_ns = 0;
  for (const TraceState& tr : state.traces) {
    BusyFigures f = BusyOf(tr);
    busy += f.busy;
    idle += f.idle;
    late += f.late;
    span += SpanOf(tr);
    memcpy_ns += tr.memcpy_ns;
    memset_ns += tr.memset_ns;
  }
  t->set_busy_time_ns(busy);
  t->set_idle_ns(idle);
  t->set_busy_time_error_ns(late);
  t->set_span_ns(span);
  t->set_memcpy_time_ns(memcpy_ns);
  t->set_memset_time_ns(memset_ns);
}

// NVTX ranges by time.
void EmitRanges(const ProfileState& state, proto::Profile* profile) {
  std::vector<std::pair<std::string, RangeAcc>> rv(state.ranges.begin(), state.ranges.end());
  std::sort(rv.begin(), rv.end(), [](const auto& a, const auto& b) {
    return a.second.time_ns != b.second.time_ns ? a.second.time_ns > b.second.time_ns
                                                : a.first < b.first;
  });
  const uint64_t kernel_time = profile->totals().kernel_time_ns();
  for (const auto& [path, r] : rv) {
    if (r.calls == 0) continue;
    proto::RangeRow* row = profile->add_ranges();
    row->set_path(path);
    row->set_time_ns(r.time_ns);
    row->set_calls(r.calls);
    row->set_share(Share(r.time_ns, kernel_time));
  }
}

void EmitStreams(const ProfileState& state, proto::Profile* profile) {
  for (const TraceState& t : state.traces) {
    for (const auto& [key, u] : t.streams) {
      proto::StreamRow* s = profile->add_streams();
      s->set_device_id(key.first);
      s->set_stream_id(key.second);
      s->set_kernel_time_ns(u.kernel_time_ns);
      s->set_kernel_count(u.busy.count());
      s->set_busy_time_ns(u.busy.length());
    }
  }
}

// Devices: those the traces declare, plus any seen only in records; each with its timeline
// cut into compute, comm, copies and idle (overlap.h).
void EmitDevices(const ProfileState& state, proto::Profile* profile) {
  for (size_t trace = 0; trace < state.traces.size(); ++trace) {
    const TraceState& t = state.traces[trace];
    std::map<uint32_t, const proto::DeviceInfo*> declared;
    for (const auto& d : t.header.devices()) declared[d.id()] = &d;
    std::map<uint32_t, bool> ids;
    for (const auto& [id, d] : declared) ids[id] = true;
    for (const auto& [id, u] : t.devices) ids[id] = true;
    for (const auto& [id, unused] : ids) {
      proto::ProfileDevice* pd = profile->add_devices();
      pd->set_id(id);
      pd->set_trace(static_cast<uint32_t>(trace));
      if (auto it = declared.find(id); it != declared.end()) {
        pd->set_name(it->second->name());
        pd->set_arch(it->second->arch());
        pd->set_kind(it->second->kind());
        pd->set_vendor(it->second->vendor());
      }
      if (auto it = t.devices.find(id); it != t.devices.end()) {
        pd->set_busy_time_ns(it->second.busy.length());
        pd->set_kernel_time_ns(it->second.kernel_time_ns);
        const DeviceTimeline tl = TimelineOf(it->second);
        pd->set_span_ns(tl.span_ns);
        pd->set_idle_ns(tl.idle_ns);
        pd->set_compute_ns(tl.compute_ns);
        pd->set_comm_ns(tl.comm_ns);
        pd->set_comm_exposed_ns(tl.comm_exposed_ns);
        pd->set_copy_ns(tl.copy_ns);
        pd->set_copy_exposed_ns(tl.copy_exposed_ns);
        pd->set_band_span_ns(tl.band_span_ns);
        pd->set_overlap_error_ns(tl.error_ns);
      }
    }
  }
}

// Step spans: from the "step N" NVTX ranges when present (first trace that has them),
// else from the first kernel start to the last kernel end of the step.
std::map<int64_t, StepRangeSpan> StepRanges(const ProfileState& state) {
  std::map<int64_t, StepRangeSpan> out;
  for (const TraceState& t : state.traces) {
    for (const auto& [s, r] : t.step_ranges) out.emplace(s, r);
  }
  return out;
}

uint64_t StepSpan(const std::map<int64_t, StepRangeSpan>& ranges, int64_t step,
                  const StepAcc& s) {
  auto it = ranges.find(step);
  return it != ranges.end() ? SpanNs(it->second.start_ns, it->second.end_ns)
                            : SpanNs(s.first_ns, s.last_ns);
}

void EmitSteps(const ProfileState& state, const std::map<int64_t, StepRangeSpan>& ranges,
               proto::Profile* profile) {
  // Idle per step only when every kernel belongs to a step: kernels launched outside the
  // step ranges (another thread, e.g. autograd's backward) may run inside a step's span.
  uint64_t in_steps = 0, calls = 0;
  for (const auto& [n, s] : state.steps) in_steps += s.count;
  for (const KernelGroup& g : state.groups) calls += g.calls;
  const bool all_in_steps = in_steps == calls;
  for (const auto& [n, s] : state.steps) {
    proto::StepRow* row = profile->add_steps();
    row->set_step(static_cast<uint32_t>(n));
    row->set_span_ns(StepSpan(ranges, n, s));
    row->set_kernel_time_ns(s.time_ns);
    row->set_kernel_count(s.count);
    row->set_comm_time_ns(s.comm_time_ns);
    row->set_comm_calls(s.comm_count);
    if (all_in_steps && state.traces.size() == 1) {
      row->set_idle_at_least_ns(row->span_ns() > s.time_ns ? row->span_ns() - s.time_ns : 0);
    }
  }
}

// The step the timeline shows: the median step by span when the sample kept it, else the
// kept step whose span is nearest (then the note says so).
int64_t TimelineStep(const ProfileState& state, const std::map<int64_t, StepRangeSpan>& ranges,
                     std::string* note) {
  std::vector<std::pair<uint64_t, int64_t>> by_span;
  for (const auto& [n, s] : state.steps) by_span.push_back({StepSpan(ranges, n, s), n});
  std::sort(by_span.begin(), by_span.end());
  const auto [median_span, median] = by_span[by_span.size() / 2];
  std::vector<int64_t> kept = state.timeline.KeptSteps();
  if (std::find(kept.begin(), kept.end(), median) != kept.end() || kept.empty()) return median;
  int64_t best = kept.front();
  uint64_t best_gap = UINT64_MAX;
  for (int64_t k : kept) {
    auto it = state.steps.find(k);
    if (it == state.steps.end()) continue;
    uint64_t span = StepSpan(ranges, k, it->second);
    uint64_t gap = span > median_span ? span - median_span : median_span - span;
    if (gap < best_gap) {
      best_gap = gap;
      best = k;
    }
  }
  *note = absl::StrFormat(
      "sampled: the timeline shows step %d, the kept step nearest in span to the median step "
      "%d (%d of %d steps keep their kernels for the timeline: every %d-th, to bound memory)",
      best, median, kept.size(), state.steps.size(), state.timeline.stride());
  return best;
}

void EmitTimeline(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                  const std::map<int64_t, StepRangeSpan>& ranges, proto::Profile* profile) {
  if (state.steps.empty()) return;
  std::string note;
  const int64_t rep = TimelineStep(state, ranges, &note);
  auto launches = state.timeline.Step(rep, state.names());
  if (!launches) return;
  auto it = ranges.find(rep);
  const int64_t origin = it != ranges.end() ? it->second.start_ns : state.steps.at(rep).first_ns;
  for (const SampledLaunch& l : *launches) {
    proto::TimelineEvent* e = profile->add_timeline();
    e->set_name(state.groups[l.group].name);
    e->set_device_id(l.device);
    e->set_stream_id(l.stream);
    e->set_start_ns(l.start_ns - origin);
    e->set_dur_ns(l.dur_ns);
    e->set_class_(verdicts[l.group].attribution.pipe_class());
    e->set_role(verdicts[l.group].attribution.role());
    e->set_nvtx_path(l.nvtx_path);
  }
  profile->set_timeline_note(note);
}

}  // namespace

void EmitRanks(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
               proto::Profile* profile);
void EmitIdle(const ProfileState& state, proto::Profile* profile);  // idle.cc
void EmitNvtxSummary(const ProfileState& state, proto::Profile* profile);  // nvtx_summary.cc
void EmitComm(const ProfileState& state, proto::Profile* profile);         // comm_tables.cc

void EmitTables(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                const occupancy::DeviceLimits* fallback_limits, proto::Profile* profile,
                const work::ModelShape* model) {
  LaunchOccupancies occupancies(state, fallback_limits);
  EmitKernels(state, verdicts, &occupancies, model, profile);
  FillLaunchSummary(state, &occupancies, profile->mutable_launch_summary());
  EmitClasses(profile);
  EmitRoles(profile);
  EmitTotals(state, profile);
  EmitRanges(state, profile);
  EmitStreams(state, profile);
  EmitDevices(state, profile);
  const std::map<int64_t, StepRangeSpan> step_ranges = StepRanges(state);
  EmitSteps(state, step_ranges, profile);
  EmitTimeline(state, verdicts, step_ranges, profile);
  EmitRanks(state, verdicts, profile);
  EmitIdle(state, profile);
  EmitNvtxSummary(state, profile);
  EmitComm(state, profile);
}

}  // namespace qprof::aggregate
