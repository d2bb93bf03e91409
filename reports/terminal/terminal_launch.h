// The launch sections of the profile summary: where the top kernels were launched from,
// their launch shape, occupancy and waves, and the kernels flagged latency- or
// parallelism-bound with what would lift the bound (not a public API).
#ifndef QPROF_REPORTS_TERMINAL_TERMINAL_LAUNCH_H_
#define QPROF_REPORTS_TERMINAL_TERMINAL_LAUNCH_H_

#include "proto/profile.pb.h"
#include "reports/terminal/terminal_util.h"

namespace qprof::reports {

// "Launches" table for the top kernels; nothing when no kernel has a launch shape or
// context.
void ProfileLaunches(const proto::Profile& p, TermCtx& c);
// "Latency and parallelism" list; nothing when no kernel is flagged.
void ProfileLatency(const proto::Profile& p, TermCtx& c);

// "128x1x1" (or "128" when y = z = 1).
std::string Dim3Text(const proto::Dim3& d);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_TERMINAL_TERMINAL_LAUNCH_H_
