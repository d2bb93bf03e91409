#include "analysis/aggregate/launch_stats.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "analysis/occupancy/annotate.h"
#include "analysis/occupancy/device_limits.h"
#include "fmt/format.h"

namespace qprof::aggregate {

LaunchOccupancies::LaunchOccupancies(const ProfileState& state,
                                     const occupancy::DeviceLimits* fallback)
    : state_(state), fallback_(fallback) {}

const proto::LaunchOccupancy& LaunchOccupancies::Of(const LaunchConfigKey& key) {
  auto [it, inserted] = cache_.try_emplace(key);
  if (!inserted) return it->second;
  auto lim = limits_.find({key.trace, key.device});
  if (lim == limits_.end()) {
    std::optional<occupancy::DeviceLimits> limits;
    std::string why = "device not described in the trace header";
    bool amd = false;  // never NVIDIA's rules (--device's limits) on an AMD launch
    if (key.trace < state_.traces.size()) {
      for (const proto::DeviceInfo& d : state_.traces[key.trace].header.devices()) {
        if (d.id() != key.device) continue;
        amd = d.vendor() == "AMD";
        absl::StatusOr<occupancy::DeviceLimits> l = occupancy::DeviceLimitsFor(d);
        if (l.ok()) {
          limits = *std::move(l);
        } else {
          why = std::string(l.status().message());
        }
        break;
      }
    }
    if (!limits && fallback_ != nullptr && !amd) limits = *fallback_;
    lim = limits_.emplace(std::make_pair(key.trace, key.device),
                          std::make_pair(std::move(limits), std::move(why))).first;
  }
  proto::LaunchOccupancy& out = it->second;
  if (!lim->second.first) {
    out.set_error(lim->second.second);
    return out;
  }
  occupancy::LaunchConfig c;
  c.threads_per_block = int64_t{key.block[0]} * key.block[1] * key.block[2];
  c.blocks = int64_t{key.grid[0]} * key.grid[1] * key.grid[2];
  c.registers_per_thread = static_cast<int>(key.registers);
  // Activities split static and dynamic shared memory; only their sum matters here.
  c.static_smem = static_cast<int64_t>(key.shared_bytes);
  c.dynamic_smem = 0;
  occupancy::FillLaunchOccupancy(*lim->second.first, c, &out);
  return out;
}

namespace {

// A configuration over traces and devices, as the row shows it.
using ShownKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                            uint64_t>;  // grid xyz, block xyz, registers, shared memory

struct Shown {
  uint64_t count = 0;
  double time = 0;
  LaunchKey first;
  const proto::LaunchOccupancy* occ = nullptr;  // of the earliest launch with it
};

void SetLaunchContext(const ProfileState& state, const std::vector<const KernelGroup*>& groups,
                      proto::KernelRow* row) {
  std::map<std::string, double> contexts;  // display frame -> time
  for (const KernelGroup* g : groups) {
    if (g->context == 0 || g->context > state.contexts.size()) continue;
    const std::string& frame = state.contexts[g->context - 1].innermost;
    if (!frame.empty() && g->context_time > 0) contexts[frame] += g->context_time;
  }
  if (contexts.empty()) return;
  auto best = std::max_element(contexts.begin(), contexts.end(),
                               [](const auto& x, const auto& y) { return x.second < y.second; });
  row->set_launch_context(best->first);
}

}  // namespace

void FillKernelLaunch(const ProfileState& state, const std::vector<const KernelGroup*>& groups,
                      LaunchOccupancies* occupancies, proto::KernelRow* row) {
  SetLaunchContext(state, groups, row);
  std::map<ShownKey, Shown> shown;
  uint64_t launches = 0, with_occ = 0, reported_zero_optin = 0;
  double w = 0, theo = 0, est = 0, waves = 0, fill = 0, rep_w = 0, rep = 0;
  const proto::LaunchOccupancy* first_computed = nullptr;
  LaunchKey first_computed_key;
  for (const KernelGroup* g : groups) {
    for (const auto& [k, c] : g->configs) {
      const proto::LaunchOccupancy& o = occupancies->Of(k);
      Shown& s = shown[ShownKey{k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1],
                                k.block[2], k.registers, k.shared_bytes}];
      if (s.count == 0 || c.first < s.first) {
        s.first = c.first;
        s.occ = &o;
      }
      s.count += c.count;
      s.time += c.time;
      launches += c.count;
      rep_w += c.reported_weight;
      rep += c.reported_sum;
      if (!LaunchOccupancies::Computed(o)) continue;
      with_occ += c.count;
      w += c.time;
      theo += o.theoretical_occupancy_pct() * c.time;
      est += o.est_occupancy_pct() * c.time;
      waves += o.waves() * c.time;
      fill += o.last_wave_sm_fill() * c.time;
      if (first_computed == nullptr || c.first < first_computed_key) {
        first_computed = &o;
        first_computed_key = c.first;
      }
      if (o.shared_mem_optin()) reported_zero_optin += c.reported_zero;
    }
  }
  if (shown.empty()) return;
  // The configuration that takes most of the row's time (ties: more launches), so that the
  // grid shown and the time-weighted figures describe the same launches.
  auto top = std::max_element(shown.begin(), shown.end(), [](const auto& x, const auto& y) {
    return x.second.time != y.second.time ? x.second.time < y.second.time
                                          : x.second.count < y.second.count;
  });
  const auto& [gx, gy, gz, bx, by, bz, regs, smem] = top->first;
  proto::KernelLaunch* l = row->mutable_launch();
  l->mutable_grid()->set_x(gx);
  l->mutable_grid()->set_y(gy);
  l->mutable_grid()->set_z(gz);
  l->mutable_block()->set_x(bx);
  l->mutable_block()->set_y(by);
  l->mutable_block()->set_z(bz);
  l->set_blocks(uint64_t{gx} * gy * gz);
  l->set_threads_per_block(bx * by * bz);
  l->set_registers_per_thread(regs);
  l->set_shared_mem_bytes(smem);
  const proto::LaunchOccupancy& o = *top->second.occ;
  l->set_shared_mem_optin(o.shared_mem_optin());
  l->set_active_blocks_per_sm(o.active_blocks_per_sm());
  l->set_limited_by(o.limited_by());
  l->set_sm_count(o.sm_count());
  l->set_launches(launches);
  l->set_launches_with_occupancy(with_occ);
  if (w > 0) {
    l->set_theoretical_occupancy_pct(theo / w);
    l->set_est_occupancy_pct(est / w);
    l->set_waves(waves / w);
    l->set_last_wave_sm_fill(fill / w);
    l->set_limits_source(first_computed->limits_source());
    l->set_provenance("computed by the CUDA occupancy rules from the launch configuration");
  } else {
    l->set_note(o.error().empty() ? "occupancy not computed: device limits unknown"
                                  : "occupancy not computed: " + o.error());
  }
  if (rep_w > 0) {
    l->set_reported_est_occupancy_pct(rep / rep_w);
    if (reported_zero_optin > 0) {
      l->set_note(fmt::format(
          "the source reports 0% estimated occupancy for {} launches: Kineto calls the "
          "occupancy calculator without the kernel's shared-memory opt-in, so {} bytes per "
          "block exceed the default 48 KiB limit and no block fits; with the opt-in {} "
          "block(s) per SM fit",
          reported_zero_optin, smem, o.active_blocks_per_sm()));
    }
  }
}

namespace {

std::string BaseNameOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// How many graph-replay kernels took their capture-time context, from each trace's header
// (trace.proto GraphCaptureJoin), and one line per trace that says from where.
void FillGraphCaptureSummary(const ProfileState& state, proto::LaunchSummary* s) {
  for (const TraceState& t : state.traces) {
    const proto::GraphCaptureJoin& j = t.header.launch_context_stats().graph_capture();
    if (j.modelled_replays() > 0 || j.model_notes_size() > 0) {
      std::string line = fmt::format("{}: {} graph replays without a capture modelled ({} kernels) "
                                     "from {}",
                                     BaseNameOf(t.header.source_path()), j.modelled_replays(),
                                     j.modelled_kernels(), j.model_source());
      for (const std::string& n : j.model_notes()) line += "; " + n;
      s->add_graph_capture(line);
    }
    if (j.kernels() == 0) continue;
    s->set_graph_capture_matched(s->graph_capture_matched() + j.matched());
    s->set_graph_capture_unmatched(s->graph_capture_unmatched() + j.unmatched());
    std::string line = fmt::format("{}: {} of {} graph-replay kernels took their capture-time "
                                   "context",
                                   BaseNameOf(t.header.source_path()), j.matched(), j.kernels());
    if (j.replays() > 0) line += fmt::format(" ({} replays)", j.replays());
    std::string uses;
    for (const proto::GraphCaptureUse& u : j.uses()) {
      uses += fmt::format("{}{} for {} replays by {}{}{}", uses.empty() ? "" : "; ", u.capture(),
                          u.replays(), u.method(),
                          u.equal_candidates() > 0
                              ? fmt::format(", {} other captures fit as well", u.equal_candidates())
                              : "",
                          u.chosen_by().empty() ? "" : " (chosen by " + u.chosen_by() + ")");
    }
    if (!uses.empty()) line += ": " + uses;
    if (j.sources_size() == 0) line += " (nsys graph nodes)";
    s->add_graph_capture(line);
  }
}

}  // namespace

void FillLaunchSummary(const ProfileState& state, LaunchOccupancies* occupancies,
                       proto::LaunchSummary* s) {
  s->set_launches(state.launch_counts.launches);
  s->set_launches_with_context(state.launch_counts.with_context);
  s->set_graph_launches(state.launch_counts.graph_launches);
  uint64_t with_occ = 0, compared = 0, zero_optin = 0;
  double max_diff = 0;
  const proto::LaunchOccupancy* first_error = nullptr;
  LaunchKey first_error_key;
  for (const KernelGroup& g : state.groups) {
    for (const auto& [k, c] : g.configs) {
      const proto::LaunchOccupancy& o = occupancies->Of(k);
      if (!LaunchOccupancies::Computed(o)) {
        if (!o.error().empty() && (first_error == nullptr || c.first < first_error_key)) {
          first_error = &o;
          first_error_key = c.first;
        }
        continue;
      }
      with_occ += c.count;
      if (c.reported_positive > 0) {
        compared += c.reported_positive;
        max_diff = std::max({max_diff, std::abs(o.est_occupancy_pct() - c.reported_min),
                             std::abs(o.est_occupancy_pct() - c.reported_max)});
      }
      if (o.shared_mem_optin()) zero_optin += c.reported_zero;
    }
  }
  s->set_launches_with_occupancy(with_occ);
  if (first_error != nullptr) s->set_occupancy_unavailable(first_error->error());
  s->set_reported_compared(compared);
  s->set_reported_max_abs_diff_pct(max_diff);
  s->set_reported_zero_optin(zero_optin);
  FillGraphCaptureSummary(state, s);
}

}  // namespace qprof::aggregate
