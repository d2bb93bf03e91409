// Analyze: one or more traces -> one Profile (what reports render and `--json` writes).
//
// Pipeline, in named steps (analyze.cc):
//   accumulate   every record into a ProfileState (aggregate/accumulator.h), grouped by
//                normalised kernel name; records stream in, nothing is kept per launch;
//   choose the device the rooflines are for (--device, the trace's, or the default
//                projection device for host-CPU traces);
//   describe the inputs (sources, run information, provenance);
//   attribute    each kernel once (classify/, with the evidence ladder; measured metrics
//                are the time-weighted mean over the kernel's launches);
//   emit         the tables (aggregate/tables.h), one function per table;
//   ceilings     rooflines per role and class, step work, Amdahl and format ceilings;
//   warnings     per input, then the analysis's own.
// Several traces (e.g. one per rank) are analysed together: their kernels share the tables;
// busy time and spans are per trace and device, and a per-rank table compares them.
// analysis/ingest.h analyses files without building traces in memory.
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
#include "analysis/aggregate/accumulator.h"
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
  // Work the traces do not record (third-party traces): tokens generated and decode steps
  // (--tokens, --steps). They replace the run's figures; tokens/s is then tokens over the
  // run's wall time, or over the GPUs' span when the trace has none.
  uint64_t tokens = 0;
  uint32_t steps = 0;
};

// InvalidArgument when `traces` is empty or options.device is not in the spec table.
absl::StatusOr<proto::Profile> Analyze(const std::vector<proto::Trace>& traces,
                                       const AnalyzeOptions& options);

// The same from an accumulated state (streamed files, merged partial profiles).
absl::StatusOr<proto::Profile> AnalyzeState(const aggregate::ProfileState& state,
                                            const AnalyzeOptions& options);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_ANALYZE_H_
