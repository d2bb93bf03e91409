// The launch parts of the Profile page (not a public API): where each kernel was launched
// from, its launch shape and occupancy under its name, the role rows' expansion into their
// kernels, and the section on latency- and parallelism-bound kernels.
#ifndef QPROF_REPORTS_HTML_LAUNCH_SECTIONS_H_
#define QPROF_REPORTS_HTML_LAUNCH_SECTIONS_H_

#include <string>

#include "proto/profile.pb.h"

namespace qprof::reports::html {

// The launch of one kernel row, under its name in the kernels table (so the table fits the
// page): a line with grid x block, occupancy, waves and the latency flag, expanding
// (<details>) into where it was launched from, registers and shared memory, what limits the
// blocks per SM and the trace's own occupancy estimate. "" when the row has no launch
// information.
std::string KernelLaunchLines(const proto::KernelRow& k);

// The role cell: the role name expanding (<details>) into its kernels, by time.
std::string RoleCellWithKernels(const proto::Profile& p, const proto::RoleRow& r);
// "launch context 92%, name rule 8%": which evidence decided the role's time.
std::string RoleEvidenceText(const proto::RoleRow& r);

// Latency and parallelism: flagged kernels with their numbers and remedy, the launch
// context / occupancy coverage and the comparison with the trace's own estimate. Empty
// when the profile has no launch information at all.
std::string LatencySection(const proto::Profile& p);

}  // namespace qprof::reports::html

#endif  // QPROF_REPORTS_HTML_LAUNCH_SECTIONS_H_
