#include "cli/analysis_request.h"

#include <cstdio>

#include "analysis/ceilings/ceilings.h"
#include "analysis/sass/sass_parser.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/analysis_inputs.h"
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

absl::StatusOr<proto::Profile> AnalyzeRequest(const AnalysisRequest& request) {
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsForRequest(request));
  std::vector<proto::Trace> traces;
  for (const std::string& in : request.inputs) {
    if (request.verbose) fmt::print(stderr, "qprof: reading {}\n", in);
    ASSIGN_OR_RETURN(proto::Trace t, LoadTraceInput(in));
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
  return Analyze(traces, options);
}

}  // namespace qprof::cli
