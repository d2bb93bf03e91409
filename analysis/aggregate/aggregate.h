// Aggregation: from attributed kernel launches to the tables of a Profile.
//
// Input is every kernel launch of every trace, grouped by normalised name (analysis/
// aggregate/kernel_name.h) with one attribution per group. Output fills, in `profile`:
//   totals      kernel_time_ns = plain sum of kernel durations; busy_time_ns = union of
//               kernel intervals per device (overlapping streams counted once), summed
//               over devices; idle_ns = per-device span minus busy; span_ns = per trace
//               first start to last end, summed over traces (traces have their own clocks);
//   classes, roles, kernels (sorted by time, descending), ranges (NVTX path with numbers
//   folded), streams, steps (when "step N" ranges exist), timeline (kernels of the median
//   step, relative to its start), devices (busy and kernel time per device).
// Shares are of totals.kernel_time_ns. Durations are end - start; launches with
// end < start are dropped and counted (the caller turns the count into a warning).
#ifndef QPROF_ANALYSIS_AGGREGATE_AGGREGATE_H_
#define QPROF_ANALYSIS_AGGREGATE_AGGREGATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof::aggregate {

struct Launch {
  int trace = 0;                       // index into the traces given to Aggregate
  const proto::Activity* activity = nullptr;
  // Launch context shown for this launch ("vllm::moe_forward (cpu_op)"); owned elsewhere.
  const std::string* context = nullptr;
  // Occupancy computed by the analyzer when the activity has none (--device); else null
  // and activity->occupancy() is used.
  const proto::LaunchOccupancy* occupancy = nullptr;
};

// All launches of one normalised kernel name.
struct KernelGroup {
  std::string name;                    // normalised
  std::vector<Launch> launches;
  proto::Attribution attribution;      // decided once per group (analysis/classify)
  std::string kernel_id;               // registry id when known
  // Roofline time of all launches on the profiled device, when work models are known.
  double roofline_ns = 0;
  bool has_roofline = false;
};

struct AggregateStats {
  uint64_t dropped_negative = 0;       // launches with end < start
};

// Fills the tables listed above. `traces` are the inputs (for ranges and devices).
AggregateStats Aggregate(const std::vector<const proto::Trace*>& traces,
                         const std::vector<KernelGroup>& groups, proto::Profile* profile);

// Union length of [start, end) intervals (sorted in place).
uint64_t UnionLength(std::vector<std::pair<int64_t, int64_t>>& intervals);

// Step number from an NVTX path containing a component "step N" (e.g.
// "decode/step 12/layer 3"); -1 when there is none.
int64_t StepOfPath(const std::string& path);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_AGGREGATE_H_
