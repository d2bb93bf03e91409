// Folding the launches of one kernel row into KernelRow.launch and KernelRow.launch_context:
// the dominant launch configuration (grid, block, registers, shared memory: the one that
// takes most of the row's time, ties to more launches), time-weighted means of the per-launch occupancy figures
// (Activity.occupancy, analysis/occupancy), the source's own estimate beside ours, and
// the launch-context frame that covers most of the row's time.
//
// Aggregation calls Add() once per launch and Fill() once per row; nothing else.
#ifndef QPROF_ANALYSIS_AGGREGATE_LAUNCH_STATS_H_
#define QPROF_ANALYSIS_AGGREGATE_LAUNCH_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::aggregate {

class LaunchStats {
 public:
  // One launch of `dur_ns` with its occupancy (usually &a.occupancy()) and the display
  // string of its launch context (may be null).
  void Add(const proto::Activity& a, const proto::LaunchOccupancy& occ, int64_t dur_ns,
           const std::string* context);
  void Fill(proto::KernelRow* row) const;

 private:
  using ConfigKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                               uint32_t, uint64_t>;  // grid xyz, block xyz, regs, smem
  struct ConfigAcc {
    uint64_t count = 0;
    double time = 0;
    proto::LaunchOccupancy occ;  // of the first launch with this configuration
  };
  std::map<ConfigKey, ConfigAcc> configs_;
  std::map<std::string, double> contexts_;  // display frame -> time
  uint64_t launches_ = 0, with_occ_ = 0;
  double w_ = 0, theo_ = 0, est_ = 0, waves_ = 0, fill_ = 0;
  double rep_w_ = 0, rep_ = 0;       // source's estimate, time-weighted
  uint64_t reported_zero_optin_ = 0; // launches the source reports 0 while ours is above
  std::string limits_source_;
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_LAUNCH_STATS_H_
