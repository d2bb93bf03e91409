// `qprof diff` as a library call: two runs (traces of any kind, or Profile JSON reports)
// analysed with the same options, compared role by role per unit of work, and, with
// regression limits, judged (analysis/diff/verdict.h) so CI can fail on the verdict.
#ifndef QPROF_API_DIFF_H_
#define QPROF_API_DIFF_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "api/analyze.h"
#include "proto/diff.pb.h"
#include "proto/profile.pb.h"

namespace qprof::api {

struct DiffSideRequest {
  std::string path;   // trace of any kind, or a Profile JSON report
  std::string ncu;    // Nsight Compute CSV joined onto this side's trace
  // Default: its format, else its file name; when both agree, what tells the sides apart
  // (SideLabels).
  std::string label;
  uint64_t tokens = 0;
  uint32_t steps = 0;
  // Traces of this side's CUDA-graph captures (`analyze --graph-capture`).
  std::vector<std::string> graph_captures;
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

// Labels for two sides whose labels agree (two files named alike, two runs of one format):
// what differs between them, in this order: the device ("h100" / "mi300x", the spec-table
// name when known), the folder holding the file ("h100/" / "mi300/"), the format, the file
// name; "A" and "B" when nothing does.
std::pair<std::string, std::string> SideLabels(const proto::Profile& a, const proto::Profile& b,
                                               const std::string& path_a,
                                               const std::string& path_b);

// Two Profiles already in memory (the Python module's): their Diff and, with limits
// (`--max-regression`'s syntax), its verdict. InvalidArgument for limits that do not parse
// and for a role neither profile has.
absl::StatusOr<proto::Diff> DiffProfiles(const proto::Profile& a, const proto::Profile& b,
                                         const std::string& max_regression = "");

}  // namespace qprof::api

#endif  // QPROF_API_DIFF_H_
