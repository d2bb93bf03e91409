#include "analysis/aggregate/aggregate.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <unordered_map>

#include "analysis/aggregate/kernel_name.h"
#include "analysis/aggregate/launch_stats.h"
#include "proto/vocabulary.h"

namespace qprof::aggregate {
namespace {

int64_t Dur(const proto::Activity& a) { return a.end_ns() - a.start_ns(); }

double Share(uint64_t t, uint64_t total) {
  return total == 0 ? 0.0 : static_cast<double>(t) / static_cast<double>(total);
}

// Percentile by nearest rank on a sorted vector.
int64_t Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(p * static_cast<double>(sorted.size()) + 0.999999);
  if (rank == 0) rank = 1;
  if (rank > sorted.size()) rank = sorted.size();
  return sorted[rank - 1];
}

}  // namespace

uint64_t UnionLength(std::vector<std::pair<int64_t, int64_t>>& iv) {
  if (iv.empty()) return 0;
  std::sort(iv.begin(), iv.end());
  uint64_t total = 0;
  int64_t cs = iv[0].first, ce = iv[0].second;
  for (size_t i = 1; i < iv.size(); ++i) {
    if (iv[i].first > ce) {
      total += static_cast<uint64_t>(ce - cs);
      cs = iv[i].first;
      ce = iv[i].second;
    } else {
      ce = std::max(ce, iv[i].second);
    }
  }
  total += static_cast<uint64_t>(ce - cs);
  return total;
}

int64_t StepOfPath(const std::string& path) {
  size_t pos = 0;
  while ((pos = path.find("step ", pos)) != std::string::npos) {
    bool starts_component = pos == 0 || path[pos - 1] == '/';
    size_t i = pos + 5, j = i;
    while (j < path.size() && std::isdigit(static_cast<unsigned char>(path[j]))) ++j;
    if (starts_component && j > i && j - i < 10 && (j == path.size() || path[j] == '/')) {
      return std::stoll(path.substr(i, j - i));
    }
    pos += 5;
  }
  return -1;
}

AggregateStats Aggregate(const std::vector<const proto::Trace*>& traces,
                         const std::vector<KernelGroup>& groups, proto::Profile* profile) {
  AggregateStats stats;
  uint64_t kernel_time = 0, kernel_count = 0;
  std::map<std::pair<int, uint32_t>, std::vector<std::pair<int64_t, int64_t>>> per_device;
  std::map<std::pair<int, uint32_t>, uint64_t> device_kernel_time;
  std::map<std::tuple<int, uint32_t, uint64_t>, std::vector<std::pair<int64_t, int64_t>>>
      per_stream;
  std::map<std::tuple<int, uint32_t, uint64_t>, uint64_t> stream_time;
  std::map<std::string, std::pair<uint64_t, uint64_t>> ranges;  // folded path -> time, calls
  struct StepAcc {
    int64_t first = INT64_MAX, last = INT64_MIN;
    uint64_t time = 0, count = 0;
  };
  std::map<int64_t, StepAcc> steps;  // from trace 0's step numbers... and all traces
  std::map<std::string, std::tuple<uint64_t, uint64_t, std::string>> class_acc;  // time, calls
  std::map<std::string, proto::RoleRow> role_acc;
  struct PathInfo {
    std::pair<uint64_t, uint64_t>* range;  // stable: std::map nodes do not move
    int64_t step;
  };
  std::unordered_map<std::string, PathInfo> path_cache;
  std::vector<proto::KernelRow> rows;
  std::vector<int64_t> trace_first(traces.size(), INT64_MAX), trace_last(traces.size(), INT64_MIN);

  for (const KernelGroup& g : groups) {
    proto::KernelRow row;
    row.set_name(g.name);
    row.set_class_(g.attribution.pipe_class());
    row.set_role(g.attribution.role());
    row.set_format(g.attribution.format());
    row.set_evidence(g.attribution.evidence());
    row.set_evidence_detail(g.attribution.evidence_detail());
    row.set_kernel_id(g.kernel_id);
    if (!g.launches.empty()) {
      // Time figures come from the first launch's trace (all launches of a group normally
      // share one provenance; mixed inputs are listed in Profile.sources).
      const proto::TraceHeader& h = traces[g.launches.front().trace]->header();
      row.set_provenance(h.provenance() == proto::PROVENANCE_IMPORTED
                             ? "imported from " + h.source_path()
                             : std::string(ProvenanceLabel(h.provenance())));
    }
    std::vector<int64_t> durs;
    durs.reserve(g.launches.size());
    double bytes = 0, flops = 0, work_time = 0, tp_w = 0, tp_sum = 0, fma_w = 0, fma_sum = 0,
           dr_w = 0, dr_sum = 0;
    std::vector<uint32_t> devs;
    LaunchStats launch_stats;
    for (const Launch& l : g.launches) {
      const proto::Activity& a = *l.activity;
      int64_t d = Dur(a);
      if (d < 0) {
        ++stats.dropped_negative;
        continue;
      }
      durs.push_back(d);
      launch_stats.Add(a, l.occupancy ? *l.occupancy : a.occupancy(), d, l.context);
      per_device[{l.trace, a.device_id()}].push_back({a.start_ns(), a.end_ns()});
      device_kernel_time[{l.trace, a.device_id()}] += d;
      per_stream[{l.trace, a.device_id(), a.stream_id()}].push_back({a.start_ns(), a.end_ns()});
      stream_time[{l.trace, a.device_id(), a.stream_id()}] += d;
      trace_first[l.trace] = std::min(trace_first[l.trace], a.start_ns());
      trace_last[l.trace] = std::max(trace_last[l.trace], a.end_ns());
      if (std::find(devs.begin(), devs.end(), a.device_id()) == devs.end()) {
        devs.push_back(a.device_id());
      }
      if (!a.nvtx_path().empty()) {
        // Paths repeat across launches: fold each distinct path once.
        auto pc = path_cache.find(a.nvtx_path());
        if (pc == path_cache.end()) {
          auto& r = ranges[FoldNvtxPath(a.nvtx_path())];
          pc = path_cache.emplace(a.nvtx_path(), PathInfo{&r, StepOfPath(a.nvtx_path())}).first;
        }
        auto& r = *pc->second.range;
        r.first += d;
        r.second += 1;
        int64_t step = pc->second.step;
        if (step >= 0) {
          StepAcc& s = steps[step];
          s.first = std::min(s.first, a.start_ns());
          s.last = std::max(s.last, a.end_ns());
          s.time += d;
          s.count += 1;
        }
      }
      if (a.has_work() && (a.work().bytes() > 0 || a.work().flops() > 0)) {
        bytes += a.work().bytes();
        flops += a.work().flops();
        work_time += static_cast<double>(d);
      }
      if (a.has_metrics()) {
        const auto& m = a.metrics();
        if (m.has_tensor_pipe_pct()) { tp_sum += m.tensor_pipe_pct() * d; tp_w += d; }
        if (m.has_fma_pipe_pct()) { fma_sum += m.fma_pipe_pct() * d; fma_w += d; }
        if (m.has_dram_throughput_pct()) { dr_sum += m.dram_throughput_pct() * d; dr_w += d; }
      }
    }
    if (durs.empty()) continue;
    std::sort(durs.begin(), durs.end());
    uint64_t total = 0;
    for (int64_t d : durs) total += static_cast<uint64_t>(d);
    row.set_calls(durs.size());
    row.set_time_ns(total);
    row.set_mean_ns(total / durs.size());
    row.set_median_ns(Percentile(durs, 0.5));
    row.set_p90_ns(Percentile(durs, 0.9));
    row.set_min_ns(durs.front());
    row.set_max_ns(durs.back());
    if (tp_w > 0) row.set_tensor_pipe_pct(tp_sum / tp_w);
    if (fma_w > 0) row.set_fma_pipe_pct(fma_sum / fma_w);
    if (dr_w > 0) row.set_dram_throughput_pct(dr_sum / dr_w);
    if (work_time > 0) {
      // Achieved rates over the launches that carry a work model: sum(bytes) / sum(time).
      if (bytes > 0) row.set_achieved_gbps(bytes / work_time);          // B/ns = GB/s
      if (flops > 0) row.set_achieved_tflops(flops / work_time / 1e3);  // FLOP/ns / 1e3
      row.set_work_source("registry work model");
    }
    std::sort(devs.begin(), devs.end());
    for (uint32_t d : devs) row.add_devices(d);
    launch_stats.Fill(&row);
    kernel_time += total;
    kernel_count += durs.size();
    auto& c = class_acc[row.class_()];
    std::get<0>(c) += total;
    std::get<1>(c) += durs.size();
    proto::RoleRow& rr = role_acc[row.role()];
    rr.set_role(row.role());
    rr.set_time_ns(rr.time_ns() + total);
    rr.set_calls(rr.calls() + durs.size());
    (*rr.mutable_class_time_ns())[row.class_()] += total;
    (*rr.mutable_evidence_time_ns())[row.evidence()] += total;
    rr.set_kernel_rows(rr.kernel_rows() + 1);
    rows.push_back(std::move(row));
  }

  // Totals.
  proto::Totals* t = profile->mutable_totals();
  t->set_kernel_time_ns(kernel_time);
  t->set_kernel_count(kernel_count);
  uint64_t busy = 0, idle = 0;
  std::map<std::pair<int, uint32_t>, uint64_t> device_busy;
  for (auto& [key, iv] : per_device) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (auto& [s, e] : iv) { first = std::min(first, s); last = std::max(last, e); }
    uint64_t b = UnionLength(iv);
    device_busy[key] = b;
    busy += b;
    idle += static_cast<uint64_t>(last - first) - b;
  }
  t->set_busy_time_ns(busy);
  t->set_idle_ns(idle);
  uint64_t span = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    if (trace_last[i] > trace_first[i]) span += static_cast<uint64_t>(trace_last[i] - trace_first[i]);
  }
  t->set_span_ns(span);
  uint64_t memcpy_ns = 0, memset_ns = 0;
  for (const proto::Trace* tr : traces) {
    for (const proto::Activity& a : tr->activities()) {
      if (Dur(a) < 0) continue;
      if (a.kind() == proto::ACTIVITY_KIND_MEMCPY) memcpy_ns += Dur(a);
      if (a.kind() == proto::ACTIVITY_KIND_MEMSET) memset_ns += Dur(a);
    }
  }
  t->set_memcpy_time_ns(memcpy_ns);
  t->set_memset_time_ns(memset_ns);

  // Classes in vocabulary order, then anything else.
  for (std::string_view c : pipe::kAll) {
    auto it = class_acc.find(std::string(c));
    proto::ClassRow* row = profile->add_classes();
    row->set_class_(std::string(c));
    if (it != class_acc.end()) {
      row->set_time_ns(std::get<0>(it->second));
      row->set_calls(std::get<1>(it->second));
    }
    row->set_share(Share(row->time_ns(), kernel_time));
  }
  for (auto& [c, acc] : class_acc) {
    if (IsKnownPipeClass(c)) continue;
    proto::ClassRow* row = profile->add_classes();
    row->set_class_(c);
    row->set_time_ns(std::get<0>(acc));
    row->set_calls(std::get<1>(acc));
    row->set_share(Share(row->time_ns(), kernel_time));
  }
  // Roles by time.
  std::vector<proto::RoleRow> roles;
  for (auto& [name, rr] : role_acc) {
    rr.set_share(Share(rr.time_ns(), kernel_time));
    uint64_t best = 0;
    for (const auto& [cls, ns] : rr.class_time_ns()) {
      if (ns > best) { best = ns; rr.set_class_(cls); }
    }
    roles.push_back(rr);
  }
  std::sort(roles.begin(), roles.end(), [](const auto& a, const auto& b) {
    return a.time_ns() != b.time_ns() ? a.time_ns() > b.time_ns() : a.role() < b.role();
  });
  for (auto& r : roles) *profile->add_roles() = std::move(r);
  // Kernels by time.
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.time_ns() != b.time_ns() ? a.time_ns() > b.time_ns() : a.name() < b.name();
  });
  for (auto& r : rows) {
    r.set_share(Share(r.time_ns(), kernel_time));
    *profile->add_kernels() = std::move(r);
  }
  // NVTX ranges by time.
  std::vector<std::pair<std::string, std::pair<uint64_t, uint64_t>>> rv(ranges.begin(), ranges.end());
  std::sort(rv.begin(), rv.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first > b.second.first : a.first < b.first;
  });
  for (auto& [path, tc] : rv) {
    proto::RangeRow* r = profile->add_ranges();
    r->set_path(path);
    r->set_time_ns(tc.first);
    r->set_calls(tc.second);
    r->set_share(Share(tc.first, kernel_time));
  }
  // Streams.
  for (auto& [key, iv] : per_stream) {
    proto::StreamRow* s = profile->add_streams();
    s->set_device_id(std::get<1>(key));
    s->set_stream_id(std::get<2>(key));
    s->set_kernel_time_ns(stream_time[key]);
    s->set_kernel_count(iv.size());
    s->set_busy_time_ns(UnionLength(iv));
  }
  // Devices: those the traces declare, plus any seen only in records.
  for (size_t i = 0; i < traces.size(); ++i) {
    std::map<uint32_t, const proto::DeviceInfo*> declared;
    for (const auto& d : traces[i]->header().devices()) declared[d.id()] = &d;
    std::map<uint32_t, bool> ids;
    for (auto& [id, d] : declared) ids[id] = true;
    for (auto& [key, b] : device_busy) if (key.first == static_cast<int>(i)) ids[key.second] = true;
    for (auto& [id, unused] : ids) {
      proto::ProfileDevice* pd = profile->add_devices();
      pd->set_id(id);
      auto it = declared.find(id);
      if (it != declared.end()) {
        pd->set_name(it->second->name());
        pd->set_arch(it->second->arch());
        pd->set_kind(it->second->kind());
      }
      auto bt = device_busy.find({static_cast<int>(i), id});
      if (bt != device_busy.end()) pd->set_busy_time_ns(bt->second);
      auto kt = device_kernel_time.find({static_cast<int>(i), id});
      if (kt != device_kernel_time.end()) pd->set_kernel_time_ns(kt->second);
    }
  }
  // Steps: span from the "step N" NVTX ranges when present (first trace that has them),
  // else from the first kernel start to the last kernel end of the step.
  std::map<int64_t, std::pair<int64_t, int64_t>> step_ranges;
  for (const proto::Trace* tr : traces) {
    for (const auto& r : tr->ranges()) {
      int64_t s = StepOfPath(r.path());
      if (s >= 0 && StepOfPath(r.name().empty() ? r.path() : r.name()) == s &&
          r.end_ns() > r.start_ns() && !step_ranges.count(s)) {
        step_ranges[s] = {r.start_ns(), r.end_ns()};
      }
    }
  }
  std::vector<std::pair<uint64_t, int64_t>> by_time;
  for (auto& [n, s] : steps) {
    proto::StepRow* row = profile->add_steps();
    row->set_step(static_cast<uint32_t>(n));
    auto it = step_ranges.find(n);
    int64_t span_ns = it != step_ranges.end() ? it->second.second - it->second.first : s.last - s.first;
    row->set_span_ns(static_cast<uint64_t>(std::max<int64_t>(0, span_ns)));
    row->set_kernel_time_ns(s.time);
    row->set_kernel_count(s.count);
    by_time.push_back({row->span_ns(), n});
  }
  if (!by_time.empty()) {
    // Representative step: median span (ties broken by step number).
    std::sort(by_time.begin(), by_time.end());
    int64_t rep = by_time[by_time.size() / 2].second;
    auto it = step_ranges.find(rep);
    int64_t origin = it != step_ranges.end() ? it->second.first : steps[rep].first;
    constexpr size_t kMaxTimelineEvents = 5000;
    std::vector<proto::TimelineEvent> ev;
    for (const KernelGroup& g : groups) {
      for (const Launch& l : g.launches) {
        const proto::Activity& a = *l.activity;
        if (Dur(a) < 0 || a.nvtx_path().empty()) continue;
        auto pc = path_cache.find(a.nvtx_path());
        if (pc == path_cache.end() || pc->second.step != rep) continue;
        proto::TimelineEvent e;
        e.set_name(g.name);
        e.set_device_id(a.device_id());
        e.set_stream_id(a.stream_id());
        e.set_start_ns(a.start_ns() - origin);
        e.set_dur_ns(Dur(a));
        e.set_class_(g.attribution.pipe_class());
        e.set_role(g.attribution.role());
        e.set_nvtx_path(a.nvtx_path());
        ev.push_back(std::move(e));
      }
    }
    std::sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) {
      return a.start_ns() != b.start_ns() ? a.start_ns() < b.start_ns() : a.name() < b.name();
    });
    if (ev.size() > kMaxTimelineEvents) ev.resize(kMaxTimelineEvents);
    for (auto& e : ev) *profile->add_timeline() = std::move(e);
  }
  return stats;
}

}  // namespace qprof::aggregate
