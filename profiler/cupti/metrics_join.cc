#include "profiler/cupti/metrics_join.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace qprof::profiler::cupti {
namespace {

// Mean of every numeric field and raw entry over `list`.
proto::KernelMetrics Mean(const std::vector<const proto::KernelMetrics*>& list) {
  proto::KernelMetrics out;
  if (list.empty()) return out;
  std::map<std::string, std::pair<double, int>> raw;
  double t = 0, f = 0, d = 0, s = 0;
  int nt = 0, nf = 0, nd = 0, ns = 0;
  for (const proto::KernelMetrics* m : list) {
    if (m->has_tensor_pipe_pct()) t += m->tensor_pipe_pct(), ++nt;
    if (m->has_fma_pipe_pct()) f += m->fma_pipe_pct(), ++nf;
    if (m->has_dram_throughput_pct()) d += m->dram_throughput_pct(), ++nd;
    if (m->has_sm_throughput_pct()) s += m->sm_throughput_pct(), ++ns;
    for (const auto& [k, v] : m->raw()) {
      raw[k].first += v;
      raw[k].second += 1;
    }
  }
  if (nt) out.set_tensor_pipe_pct(t / nt);
  if (nf) out.set_fma_pipe_pct(f / nf);
  if (nd) out.set_dram_throughput_pct(d / nd);
  if (ns) out.set_sm_throughput_pct(s / ns);
  for (const auto& [k, sum_n] : raw) (*out.mutable_raw())[k] = sum_n.first / sum_n.second;
  out.set_source(list.front()->source() + ", mean of " + std::to_string(list.size()) +
                 " launches of this name (launch counts differed between passes)");
  return out;
}

}  // namespace

JoinStats JoinKernelMetrics(const proto::Trace& metrics_pass, proto::Trace* trace) {
  JoinStats stats;
  // Metrics per kernel name, in launch order. A record is filed under both its name and
  // its mangled name so either spelling on the trace side finds it.
  std::unordered_map<std::string, std::vector<const proto::KernelMetrics*>> by_name;
  for (const proto::Activity& a : metrics_pass.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL || !a.has_metrics()) continue;
    by_name[a.name()].push_back(&a.metrics());
    if (!a.mangled_name().empty() && a.mangled_name() != a.name()) {
      by_name[a.mangled_name()].push_back(&a.metrics());
    }
  }
  // Trace kernels per name, in start order.
  std::vector<proto::Activity*> kernels;
  for (proto::Activity& a : *trace->mutable_activities()) {
    if (a.kind() == proto::ACTIVITY_KIND_KERNEL) kernels.push_back(&a);
  }
  std::stable_sort(kernels.begin(), kernels.end(), [](const proto::Activity* a, const proto::Activity* b) {
    return a->start_ns() < b->start_ns();
  });
  std::unordered_map<std::string, std::vector<proto::Activity*>> trace_by_name;
  for (proto::Activity* k : kernels) trace_by_name[k->name()].push_back(k);

  for (auto& [name, launches] : trace_by_name) {
    auto it = by_name.find(name);
    if (it == by_name.end() && !launches.front()->mangled_name().empty()) {
      it = by_name.find(launches.front()->mangled_name());
    }
    if (it == by_name.end()) {
      stats.unmatched += launches.size();
      continue;
    }
    const auto& measured = it->second;
    if (measured.size() == launches.size()) {
      for (size_t i = 0; i < launches.size(); ++i) *launches[i]->mutable_metrics() = *measured[i];
      stats.matched_by_occurrence += launches.size();
    } else {
      const proto::KernelMetrics mean = Mean(measured);
      for (proto::Activity* k : launches) *k->mutable_metrics() = mean;
      stats.matched_by_name_mean += launches.size();
    }
  }
  const proto::CollectorStats& m = metrics_pass.header().collector();
  proto::CollectorStats* s = trace->mutable_header()->mutable_collector();
  s->set_metrics_requested(true);
  s->set_metrics_available(m.metrics_available());
  s->set_metrics_unavailable_reason(m.metrics_unavailable_reason());
  for (const std::string& w : m.warnings()) s->add_warnings("metrics pass: " + w);
  s->set_metrics_kernels_matched(stats.matched_by_occurrence + stats.matched_by_name_mean);
  s->set_metrics_kernels_unmatched(stats.unmatched);
  for (const std::string& missing : m.metrics_missing()) s->add_metrics_missing(missing);
  if (m.has_cupti_detail()) {
    // What the metrics pass cost and what it refused belong with the metrics it gave.
    const proto::CuptiCollectionDetail& from = m.cupti_detail();
    proto::CuptiCollectionDetail* d = s->mutable_cupti_detail();
    d->set_metric_set(from.metric_set());
    d->set_metric_passes(std::max(d->metric_passes(), from.metric_passes()));
    d->set_metric_ranges(d->metric_ranges() + from.metric_ranges());
    d->set_metric_ranges_refused(d->metric_ranges_refused() + from.metric_ranges_refused());
    d->set_metric_launches_past_limit(d->metric_launches_past_limit() +
                                      from.metric_launches_past_limit());
    for (const std::string& c : from.contexts_not_profiled()) {
      d->add_contexts_not_profiled("metrics pass: " + c);
    }
  }
  // When the pass measured nothing, the reason above says it all; no per-name warning.
  if (stats.unmatched > 0 && m.metrics_available()) {
    s->add_warnings(std::to_string(stats.unmatched) +
                    " kernels of the trace pass have no metrics (name not seen in the metrics pass)");
  }
  return stats;
}

}  // namespace qprof::profiler::cupti
