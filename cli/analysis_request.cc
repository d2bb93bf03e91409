#include "cli/analysis_request.h"

#include <cstdio>
#include <utility>

#include "analysis/ceilings/ceilings.h"
#include "analysis/sass/sass_parser.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/analysis_inputs.h"
#include "cli/command.h"
#include "fmt/core.h"
#ifdef QPROF_HAVE_IMPORTERS
#include "analysis/importers/import.h"
#endif

namespace qprof::cli {

absl::StatusOr<AnalyzeOptions> OptionsForRequest(const AnalysisRequest& request) {
  AnalyzeOptions options;
  options.known_kernels = RegistryKnownKernels();
  options.device = request.device;
  options.top_n = request.top;
  options.label = request.label;
  options.tokens = request.tokens;
  options.steps = request.steps;
  if (!request.model.empty()) {
    ASSIGN_OR_RETURN(options.model, ceilings::LoadModelConfig(request.model));
  }
  for (const std::string& path : request.sass_paths) {
    ASSIGN_OR_RETURN(sass::SassOfPath sass, sass::SassStatsForPath(path));
    if (request.verbose) {
      fmt::print(stderr, "qprof: {}: SASS of {} kernels{}\n", path, sass.stats.size(),
                 sass.files.size() > 1 || sass.files[0] != path
                     ? fmt::format(" from {} cubins", sass.files.size())
                     : "");
      for (const std::string& why : sass.skipped) fmt::print(stderr, "qprof: skipped {}\n", why);
    }
    options.sass_stats.insert(options.sass_stats.end(), sass.stats.begin(), sass.stats.end());
    options.sass_sources.push_back(path);
  }
  return options;
}

namespace {

// --ncu needs every record in memory: the ncu rows join onto launches by name and order.
absl::StatusOr<aggregate::ProfileState> AccumulateWhole(
    const AnalysisRequest& request, const WholeTracesFn& whole_traces,
    const std::shared_ptr<const importers::GraphCaptureSet>& captures) {
  std::vector<proto::Trace> traces;
  for (const std::string& in : request.inputs) {
    ASSIGN_OR_RETURN(proto::Trace t, LoadTraceInput(in, captures));
    traces.push_back(std::move(t));
  }
  if (!request.ncu_csv.empty()) {
#ifdef QPROF_HAVE_IMPORTERS
    for (proto::Trace& t : traces) {
      importers::NcuJoinStats st;
      RETURN_IF_ERROR(importers::JoinNcuMetrics(&t, request.ncu_csv, &st));
      if (request.verbose) {
        fmt::print(stderr, "qprof: {}: joined {} of {} ncu kernel rows onto {} trace kernels\n",
                   request.ncu_csv, st.matched, st.ncu_kernels, st.trace_kernels);
      }
    }
#else
    return absl::UnimplementedError("--ncu: the importers are not built into this qprof");
#endif
  }
  if (whole_traces) {
    std::vector<const proto::Trace*> ptrs;
    for (const proto::Trace& t : traces) ptrs.push_back(&t);
    RETURN_IF_ERROR(whole_traces(ptrs));
  }
  aggregate::ProfileState state;
  for (const proto::Trace& t : traces) aggregate::AccumulateTrace(t, &state);
  return state;
}

}  // namespace

absl::StatusOr<aggregate::ProfileState> AccumulateRequest(const AnalysisRequest& request,
                                                          const WholeTracesFn& whole_traces) {
  if (request.inputs.empty()) return absl::InvalidArgumentError("no traces to analyse");
  ASSIGN_OR_RETURN(auto captures, LoadGraphCaptures(request.graph_captures));
  if (!request.ncu_csv.empty() || whole_traces) {
    return AccumulateWhole(request, whole_traces, captures);
  }
  // No "reading X" line: a bad input's error is then the only line (a terminal still gets
  // the importers' progress).
  AccumulateOptions options;
  options.progress = request.verbose;
  options.threads = request.threads;
  options.graph_captures = std::move(captures);
  return AccumulateInputs(request.inputs, options);
}

absl::StatusOr<proto::Profile> AnalyzeRequest(const AnalysisRequest& request) {
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsForRequest(request));
  ASSIGN_OR_RETURN(aggregate::ProfileState state, AccumulateRequest(request));
  return AnalyzeState(state, options);
}

}  // namespace qprof::cli
