// `qprof diff` as a library call: two runs (traces of any kind, or Profile JSON reports)
// analysed with the same options, compared role by role per unit of work, and, with
// regression limits, judged (analysis/diff/verdict.h) so CI can fail on the verdict.
#ifndef QPROF_API_DIFF_H_
#define QPROF_API_DIFF_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "api/analyze.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::api {

struct DiffSideRequest {
  std::string path;   // trace of any kind, or a Profile JSON report
  std::string ncu;    // Nsight Compute CSV joined onto this side's trace
  std::string label;  // default: its format, else its file name when both labels agree
  uint64_t tokens = 0;
  uint32_t steps = 0;
};

struct DiffRequest {
  DiffSideRequest a, b;
  // Analysis options for trace inputs (sass_paths, device, model, top, on_note); a Profile
  // JSON side refuses those that need its trace. Its inputs, label, tokens and steps are
  // ignored (each side has its own).
  AnalyzeRequest analysis;
  // `--max-regression PCT[,ROLE=PCT...]` (analysis/diff/verdict.h); "" = no verdict.
  std::string max_regression;
};

struct DiffResult {
  proto::Profile a, b;
  proto::Diff diff;  // diff.verdict() set when max_regression was given
};

absl::StatusOr<DiffResult> Diff(const DiffRequest& request);

// Two Profiles already in memory (the Python module's): their Diff and, with limits
// (`--max-regression`'s syntax), its verdict. InvalidArgument for limits that do not parse
// and for a role neither profile has.
absl::StatusOr<proto::Diff> DiffProfiles(const proto::Profile& a, const proto::Profile& b,
                                         const std::string& max_regression = "");

}  // namespace qprof::api

#endif  // QPROF_API_DIFF_H_
