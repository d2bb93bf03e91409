// Normalising a diff for the work each side captured.
//
// Two traces rarely hold the same amount of work: a profiler window catches 68 attention
// calls in one run and 60 in the other, so total times differ without anything having got
// faster. The diff therefore compares time per unit of work, choosing the unit both sides
// know, in this order:
//   token  both profiles know their tokens (run info, or --tokens);
//   step   both know their steps (run info, --steps, or "step N" / ProfilerStep#N ranges);
//   call   otherwise: each row's time per call (kernel launches of that row).
// Each row's change splits into work and speed: delta = (b units - a units) * a per unit
// (more or less work captured) + b units * (b per unit - a per unit) (speed_delta_ns). The
// role with the largest |speed_delta_ns| is the one that moved; the per-unit headline leads
// with it and then names the largest change the other way (opposite_role), so a reader sees
// both the largest slowdown and the largest speedup. Warnings say when the sides captured different amounts of work (their units, i.e.
// tokens, steps or all kernel calls, differ by more than kWorkTolerance), ran on different
// devices, or lack the role the headline names.
#ifndef QPROF_ANALYSIS_DIFF_NORMALISE_H_
#define QPROF_ANALYSIS_DIFF_NORMALISE_H_

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::diff {

inline constexpr double kWorkTolerance = 0.03;  // units may differ by 3%

// Fills the per-unit fields of d's sides and rows, unit, unit_source, moved_role,
// per_unit_headline and the warnings above. d's rows must already be filled.
void NormaliseForWork(const proto::Profile& a, const proto::Profile& b, proto::Diff* d);

}  // namespace qprof::diff

#endif  // QPROF_ANALYSIS_DIFF_NORMALISE_H_
