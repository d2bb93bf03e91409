// The tables of a Profile, emitted from a finished ProfileState (accumulator.h), one
// function per table.
//
//   totals      kernel_time_ns = plain sum of kernel durations; busy_time_ns = union of
//               kernel intervals per device (overlapping streams counted once), summed over
//               devices; idle_ns = per-device span minus busy; span_ns = per trace first
//               start to last end, summed over traces (traces have their own clocks);
//               busy_time_error_ns = how much larger busy time may be when kernels came far
//               out of order (interval_union.h; 0 almost always);
//   kernels     one row per GroupVerdict::row: the groups of one name whose launch context
//               does not change their role are one row, each role a context gives is
//               another; with the launch statistics of launch_stats.h and the work of the
//               launches that carry one (group_work.h);
//   launch_summary (launch_stats.h);
//   classes, roles (with their rows' work totals), kernels (sorted by time, descending), ranges (NVTX path with numbers
//   folded), streams, steps (when "step N" ranges exist), timeline (kernels of the median
//   step, relative to its start; timeline_note says when another step is shown), devices
//   (busy and kernel time per device), ranks (one row per input trace, when there are
//   several: see EmitRanks in tables.cc), idle (span, busy, idle and the gaps between
//   kernels per device, host runtime calls, a launch-bound verdict: idle.cc), nvtx_summary
//   (ranges by name with call suffixes stripped: nvtx_summary.cc).
// Shares are of totals.kernel_time_ns. Durations are end - start; launches with
// end < start are left out (ProfileState::dropped_negative counts them for a warning).
#ifndef QPROF_ANALYSIS_AGGREGATE_TABLES_H_
#define QPROF_ANALYSIS_AGGREGATE_TABLES_H_

#include <string>
#include <vector>

#include "analysis/aggregate/accumulator.h"
#include "analysis/occupancy/occupancy.h"
#include "analysis/work/model_shape.h"
#include "proto/profile.pb.h"

namespace qprof::aggregate {

// What analysis decided for one kernel group (analysis/analyze.cc), by group index.
struct GroupVerdict {
  proto::Attribution attribution;
  std::string kernel_id;  // registry id when known
  uint32_t row = 0;       // the kernel row the group's launches go to (same for one row's groups)
};

// `fallback_limits` (may be null): occupancy limits for devices whose own are unknown.
// `model` (may be null): the model's shape for the work of MoE calls (group_work.h).
void EmitTables(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                const occupancy::DeviceLimits* fallback_limits, proto::Profile* profile,
                const work::ModelShape* model = nullptr);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_TABLES_H_
