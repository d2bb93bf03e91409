#include "analysis/occupancy/annotate.h"

#include <map>
#include <set>

#include "analysis/occupancy/device_limits.h"

namespace qprof::occupancy {

bool LaunchConfigOf(const proto::Activity& a, LaunchConfig* out) {
  if (a.kind() != proto::ACTIVITY_KIND_KERNEL) return false;
  const int64_t threads = int64_t{a.block().x()} * a.block().y() * a.block().z();
  const int64_t blocks = int64_t{a.grid().x()} * a.grid().y() * a.grid().z();
  if (threads <= 0 || blocks <= 0) return false;
  out->threads_per_block = threads;
  out->blocks = blocks;
  out->registers_per_thread = static_cast<int>(a.registers_per_thread());
  out->static_smem = a.static_shared_bytes();
  out->dynamic_smem = a.dynamic_shared_bytes();
  return true;
}

bool FillLaunchOccupancy(const DeviceLimits& limits, const proto::Activity& a,
                         proto::LaunchOccupancy* out) {
  LaunchConfig c;
  if (!LaunchConfigOf(a, &c)) {
    out->set_error("no launch configuration (grid and block) in the record");
    return false;
  }
  return FillLaunchOccupancy(limits, c, out);
}

bool FillLaunchOccupancy(const DeviceLimits& limits, const LaunchConfig& c,
                         proto::LaunchOccupancy* out) {
  out->set_sm_count(static_cast<uint32_t>(limits.sm_count));
  out->set_limits_source(limits.source);
  absl::StatusOr<Occupancy> o = ComputeOccupancy(limits, c);
  if (!o.ok()) {
    out->set_error(std::string(o.status().message()));
    return false;
  }
  const LaunchFill f = ComputeFill(limits, c, *o);
  out->set_active_blocks_per_sm(static_cast<uint32_t>(o->active_blocks_per_sm));
  out->set_limited_by(o->limited_by);
  out->set_theoretical_occupancy_pct(o->theoretical_pct);
  out->set_est_occupancy_pct(f.est_occupancy_pct);
  out->set_waves(f.waves);
  out->set_last_wave_sm_fill(f.last_wave_sm_fill);
  out->set_shared_mem_optin(o->shared_optin);
  out->clear_error();
  return true;
}

AnnotateStats AnnotateOccupancy(proto::Trace* trace, const DeviceLimits* fallback) {
  AnnotateStats st;
  std::map<uint32_t, absl::StatusOr<DeviceLimits>> by_device;
  std::set<uint32_t> amd;  // never the fallback's (NVIDIA) rules on an AMD launch
  for (const proto::DeviceInfo& d : trace->header().devices()) {
    by_device.emplace(d.id(), DeviceLimitsFor(d));
    if (d.vendor() == "AMD") amd.insert(d.id());
  }
  for (proto::Activity& a : *trace->mutable_activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++st.kernels;
    LaunchConfig c;
    if (!LaunchConfigOf(a, &c)) continue;
    ++st.with_config;
    const DeviceLimits* limits = nullptr;
    std::string why;
    auto it = by_device.find(a.device_id());
    if (it != by_device.end() && it->second.ok()) {
      limits = &*it->second;
    } else if (fallback != nullptr && amd.count(a.device_id()) == 0) {
      limits = fallback;
    } else {
      why = it == by_device.end() ? "device not described in the trace header"
                                  : std::string(it->second.status().message());
    }
    proto::LaunchOccupancy* out = a.mutable_occupancy();
    if (limits == nullptr) {
      out->set_error(why);
      if (st.first_error.empty()) st.first_error = why;
      continue;
    }
    if (FillLaunchOccupancy(*limits, a, out)) {
      ++st.annotated;
    } else if (st.first_error.empty()) {
      st.first_error = out->error();
    }
  }
  return st;
}

}  // namespace qprof::occupancy
