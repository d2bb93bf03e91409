// Launch statistics of kernel rows and of the whole profile, from the launch configurations
// the aggregation kept per kernel group (accumulator.h: one entry per distinct trace,
// device, grid, block, registers and shared memory, with its launches and time).
//
// Occupancy, waves and last-wave fill depend only on a configuration and its device's
// limits, so they are computed once per entry here (analysis/occupancy), with the limits of
// the device as its trace header describes it, else the --device fallback, and weighted by
// the entry's time: the same time-weighted means as over every launch.
//
// KernelRow.launch: the dominant launch configuration (grid, block, registers, shared
// memory: the one that takes most of the row's time, ties to more launches), time-weighted
// means of the occupancy figures, the source's own estimate beside ours;
// KernelRow.launch_context: the launch-context frame that covers most of the row's time.
// Profile.launch_summary: launch, context and occupancy counts, and how the source's
// estimate compares with ours.
#ifndef QPROF_ANALYSIS_AGGREGATE_LAUNCH_STATS_H_
#define QPROF_ANALYSIS_AGGREGATE_LAUNCH_STATS_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/aggregate/accumulator.h"
#include "analysis/occupancy/occupancy.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::aggregate {

// Occupancy of every launch configuration of a state, computed once per configuration.
class LaunchOccupancies {
 public:
  // `fallback` (may be null): limits for devices whose own are unknown (analyze --device).
  LaunchOccupancies(const ProfileState& state, const occupancy::DeviceLimits* fallback);
  // The figures of one configuration; error() set (or sm_count() 0) when none.
  const proto::LaunchOccupancy& Of(const LaunchConfigKey& key);
  static bool Computed(const proto::LaunchOccupancy& o) {
    return o.error().empty() && o.sm_count() > 0;
  }

 private:
  const ProfileState& state_;
  const occupancy::DeviceLimits* fallback_;
  // (trace, device) -> limits, or why there are none.
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::optional<occupancy::DeviceLimits>,
                                                    std::string>> limits_;
  std::map<LaunchConfigKey, proto::LaunchOccupancy> cache_;
};

// KernelRow.launch and KernelRow.launch_context of the row made of `groups`.
void FillKernelLaunch(const ProfileState& state, const std::vector<const KernelGroup*>& groups,
                      LaunchOccupancies* occupancies, proto::KernelRow* row);

// Profile.launch_summary's counts (the latency fields are occupancy/diagnosis.h's).
void FillLaunchSummary(const ProfileState& state, LaunchOccupancies* occupancies,
                       proto::LaunchSummary* summary);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_LAUNCH_STATS_H_
