// Diff of two Profiles (two formats, two runs, two machines).
//
// Rows: classes (by class name), roles (by role), kernels. Kernels are matched by ROLE
// first and normalised name second: within a role, kernels with the same normalised name
// pair up; the remaining kernels of that role pair up in time order (largest with
// largest), so MXFP4's SIMT slot GEMV and NVFP4's tensor-core GEMM land on the same
// moe.experts row; what is left is only_a / only_b. Roles "other" are matched by name
// only (unrelated unknown kernels must not pair up).
// Deltas are b - a; ratio is b / a when both are nonzero. The headline is one sentence
// naming the biggest change: total time, the tensor-share move, and the role that moved most.
#ifndef QPROF_ANALYSIS_DIFF_DIFF_H_
#define QPROF_ANALYSIS_DIFF_DIFF_H_

#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::diff {

proto::Diff DiffProfiles(const proto::Profile& a, const proto::Profile& b);

}  // namespace qprof::diff

#endif  // QPROF_ANALYSIS_DIFF_DIFF_H_
