// Analyze: one or more traces -> one Profile (what reports render and `--json` writes).
//
// Pipeline: group kernel launches by normalised name (aggregate/kernel_name.h) ->
// attribute each group once (classify/, with the evidence ladder; measured metrics are the
// time-weighted mean over the group's launches) -> aggregate (aggregate/) -> ceilings
// (ceilings/) -> warnings. Several traces (e.g. one per rank) are analysed together:
// their kernels share the tables; busy time and spans are per trace and device.
//
// Warnings (Profile.warnings, code: message) cover: records dropped or invalid in the
// collector, truncated input, unknown kernels (also listed in Profile.unknown_kernels),
// metrics unavailable and why, a device missing from the spec table, no kernels at all.
#ifndef QPROF_ANALYSIS_ANALYZE_H_
#define QPROF_ANALYSIS_ANALYZE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/ceilings/ceilings.h"
#include "analysis/classify/classify.h"
#include "analysis/sass/sass_parser.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"

namespace qprof {

struct AnalyzeOptions {
  // Our kernels (the cli builds these from kernels/registry).
  std::vector<classify::KnownKernel> known_kernels;
  // Static SASS evidence (qprof analyze --sass FILE).
  std::vector<sass::SassKernelStats> sass_stats;
  std::vector<std::string> sass_sources;  // files the stats came from (listed as sources)
  // Spec-table device to use for ceilings instead of the one the trace reports.
  std::string device;
  // Model shape for third-party traces (--model CONFIG).
  std::optional<ceilings::ModelConfig> model;
  // How many kernels a terminal summary shows; the Profile keeps all kernels.
  int top_n = 20;
  // Short label for diffs; default: the run's format, else the first source's file name.
  std::string label;
};

// InvalidArgument when `traces` is empty or options.device is not in the spec table.
absl::StatusOr<proto::Profile> Analyze(const std::vector<proto::Trace>& traces,
                                       const AnalyzeOptions& options);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_ANALYZE_H_
