// The "achieved vs roof" section of the profile summary: per role and per top kernel with
// work, the achieved TFLOP/s and GB/s, the roof they are measured against, the fraction of
// it reached and the bound; then where each top kernel's work came from; and the format
// ceilings of the roles with measured work (not a public API).
#ifndef QPROF_REPORTS_TERMINAL_TERMINAL_ROOFLINE_H_
#define QPROF_REPORTS_TERMINAL_TERMINAL_ROOFLINE_H_

#include "proto/profile.pb.h"
#include "reports/terminal/terminal_util.h"

namespace qprof::reports {

// Nothing when no row has work.
void ProfileAchieved(const proto::Profile& p, TermCtx& c);
// The role ceilings' sentences (Ceilings.roles); nothing when there are none.
void ProfileRoleCeilings(const proto::Profile& p, TermCtx& c);

// "312 TF/s", "2.91 TB/s", "-" (not known): achieved-rate cells.
std::string FormatTflops(const proto::KernelRow& k);
std::string FormatGbps(double gbps, bool known);

}  // namespace qprof::reports

#endif  // QPROF_REPORTS_TERMINAL_TERMINAL_ROOFLINE_H_
