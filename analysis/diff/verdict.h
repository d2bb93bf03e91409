// The regression gate of `qprof diff --max-regression PCT[,ROLE=PCT...]`: held to limits on
// the growth of time per unit of work (Diff.unit: token, step or call, as the diff chose),
// a Diff gets a verdict that CI can fail on.
//
// Rules (each stated in the verdict so a reader of the JSON sees them):
//  - Checked: every role present on both sides, and "total" (all kernels). A role that exists
//    on one side only counts through the total. The default limit (a bare PCT) applies to
//    the total and to the roles holding at least kMinShare of kernel time on either side;
//    a role given its own limit (ROLE=PCT) is always checked, with that limit. A named role
//    on one side only is said in the summary; one on neither side is an error
//    (CheckLimitRoles): a misspelt role would otherwise gate nothing.
//  - change = 100 * (b per unit / a per unit - 1); exceeded when change > limit.
//  - Noise: when both sides have at least kNoiseMinSteps steps, the step-to-step spread of
//    kernel time (p90 - p10 of the per-step kernel time, nearest rank, the larger side) is the
//    band a change must leave to count: a check whose |b - a| per unit is inside the band
//    (converted to the unit: per token divided by A's tokens per step, per call by A's calls
//    of the row per step) is "within noise" and does not fail.
//  - worst: the exceeded check furthest past its limit.
#ifndef QPROF_ANALYSIS_DIFF_VERDICT_H_
#define QPROF_ANALYSIS_DIFF_VERDICT_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::diff {

inline constexpr double kMinShare = 0.01;
inline constexpr int kNoiseMinSteps = 5;

struct RegressionLimits {
  std::optional<double> default_pct;     // a bare PCT
  std::map<std::string, double> per_role;  // ROLE=PCT ("total" names the whole)
};

// "10%", "10", "comm=50%", "10%,comm=50%,moe.experts=5". InvalidArgument (naming the item)
// for an empty spec, a number that is not one, a negative limit, a role given twice or two
// bare limits.
absl::StatusOr<RegressionLimits> ParseRegressionLimits(std::string_view spec);

// InvalidArgument naming the first role of `limits` that neither side of `d` has ("total"
// aside), and the roles there are; OK otherwise.
absl::Status CheckLimitRoles(const proto::Diff& d, const RegressionLimits& limits);

// The verdict of `d` (DiffProfiles(a, b)) against `limits`. `a` and `b` give the steps.
proto::DiffVerdict JudgeRegression(const proto::Diff& d, const proto::Profile& a,
                                   const proto::Profile& b, const RegressionLimits& limits);

}  // namespace qprof::diff

#endif  // QPROF_ANALYSIS_DIFF_VERDICT_H_
