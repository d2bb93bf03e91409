// Occupancy of every kernel launch of a trace, stored on the activity (Activity.occupancy):
// the one call site importers and the analyzer share. A launch needs a launch
// configuration (grid and block; registers and shared memory count when present) and a
// device whose limits are known (device_limits.h); otherwise occupancy.error says why and
// the rest stays empty. A figure the source recorded itself (reported_est_occupancy_pct)
// is kept.
#ifndef QPROF_ANALYSIS_OCCUPANCY_ANNOTATE_H_
#define QPROF_ANALYSIS_OCCUPANCY_ANNOTATE_H_

#include <cstdint>
#include <string>

#include "analysis/occupancy/occupancy.h"
#include "proto/trace.pb.h"

namespace qprof::occupancy {

// The launch configuration of a kernel activity; false when it has none (no grid/block).
bool LaunchConfigOf(const proto::Activity& a, LaunchConfig* out);

// Fills *out for one launch under `limits`; false (and out->error) when it cannot.
bool FillLaunchOccupancy(const DeviceLimits& limits, const proto::Activity& a,
                         proto::LaunchOccupancy* out);
// The same for a launch configuration (the streaming aggregation computes occupancy once
// per distinct configuration: analysis/aggregate/launch_stats.h).
bool FillLaunchOccupancy(const DeviceLimits& limits, const LaunchConfig& c,
                         proto::LaunchOccupancy* out);

struct AnnotateStats {
  uint64_t kernels = 0;
  uint64_t with_config = 0;
  uint64_t annotated = 0;
  std::string first_error;  // why the first launch without a figure has none
};

// Annotates every kernel of `trace` with a launch configuration, using the limits of its
// device from the trace header; `fallback` (may be null) is used for devices whose limits
// are unknown (analyze --device).
AnnotateStats AnnotateOccupancy(proto::Trace* trace, const DeviceLimits* fallback = nullptr);

}  // namespace qprof::occupancy

#endif  // QPROF_ANALYSIS_OCCUPANCY_ANNOTATE_H_
