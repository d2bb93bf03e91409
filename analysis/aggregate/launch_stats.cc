#include "analysis/aggregate/launch_stats.h"

#include <algorithm>

#include "fmt/format.h"

namespace qprof::aggregate {

void LaunchStats::Add(const proto::Activity& a, const proto::LaunchOccupancy& occ,
                      int64_t dur_ns, const std::string* context) {
  const double d = static_cast<double>(std::max<int64_t>(dur_ns, 1));
  if (context != nullptr && !context->empty()) contexts_[*context] += d;
  const uint64_t blocks = uint64_t{a.grid().x()} * a.grid().y() * a.grid().z();
  const uint64_t threads = uint64_t{a.block().x()} * a.block().y() * a.block().z();
  if (blocks == 0 || threads == 0) return;
  ++launches_;
  ConfigKey key{a.grid().x(), a.grid().y(), a.grid().z(), a.block().x(), a.block().y(),
                a.block().z(), a.registers_per_thread(),
                uint64_t{a.static_shared_bytes()} + a.dynamic_shared_bytes()};
  ConfigAcc& c = configs_[key];
  if (c.count == 0) c.occ = occ;
  ++c.count;
  c.time += d;
  if (occ.error().empty() && occ.sm_count() > 0) {
    ++with_occ_;
    w_ += d;
    theo_ += occ.theoretical_occupancy_pct() * d;
    est_ += occ.est_occupancy_pct() * d;
    waves_ += occ.waves() * d;
    fill_ += occ.last_wave_sm_fill() * d;
    if (limits_source_.empty()) limits_source_ = occ.limits_source();
    if (occ.has_reported_est_occupancy_pct() && occ.reported_est_occupancy_pct() == 0 &&
        occ.shared_mem_optin()) {
      ++reported_zero_optin_;
    }
  }
  if (occ.has_reported_est_occupancy_pct()) {
    rep_w_ += d;
    rep_ += occ.reported_est_occupancy_pct() * d;
  }
}

void LaunchStats::Fill(proto::KernelRow* row) const {
  if (!contexts_.empty()) {
    auto best = std::max_element(contexts_.begin(), contexts_.end(),
                                 [](const auto& x, const auto& y) { return x.second < y.second; });
    row->set_launch_context(best->first);
  }
  if (configs_.empty()) return;
  // The configuration that takes most of the row's time (ties: more launches), so that
  // the grid shown and the time-weighted figures describe the same launches.
  auto top = std::max_element(configs_.begin(), configs_.end(), [](const auto& x, const auto& y) {
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
  const proto::LaunchOccupancy& o = top->second.occ;
  l->set_shared_mem_optin(o.shared_mem_optin());
  l->set_active_blocks_per_sm(o.active_blocks_per_sm());
  l->set_limited_by(o.limited_by());
  l->set_sm_count(o.sm_count());
  l->set_launches(launches_);
  l->set_launches_with_occupancy(with_occ_);
  if (w_ > 0) {
    l->set_theoretical_occupancy_pct(theo_ / w_);
    l->set_est_occupancy_pct(est_ / w_);
    l->set_waves(waves_ / w_);
    l->set_last_wave_sm_fill(fill_ / w_);
    l->set_limits_source(limits_source_);
    l->set_provenance("computed by the CUDA occupancy rules from the launch configuration");
  } else {
    l->set_note(o.error().empty() ? "occupancy not computed: device limits unknown"
                                  : "occupancy not computed: " + o.error());
  }
  if (rep_w_ > 0) {
    l->set_reported_est_occupancy_pct(rep_ / rep_w_);
    if (reported_zero_optin_ > 0) {
      l->set_note(fmt::format(
          "the source reports 0% estimated occupancy for {} launches: Kineto calls the "
          "occupancy calculator without the kernel's shared-memory opt-in, so {} bytes per "
          "block exceed the default 48 KiB limit and no block fits; with the opt-in {} "
          "block(s) per SM fit",
          reported_zero_optin_, smem, o.active_blocks_per_sm()));
    }
  }
}

}  // namespace qprof::aggregate
