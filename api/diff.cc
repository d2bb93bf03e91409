#include "api/diff.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/diff/diff.h"
#include "analysis/diff/verdict.h"
#include "analysis/importers/import.h"
#include "api/inputs.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "fmt/core.h"

namespace qprof::api {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// One side: a Profile JSON report as it is, or a trace analysed with `options` (an ncu CSV
// joined onto it first when given). --tokens/--steps replace a report's totals.
absl::StatusOr<proto::Profile> LoadSide(const DiffSideRequest& side, const std::string& ncu,
                                        AnalyzeOptions options, bool analysis_options,
                                        const NoteFn& note) {
  options.label = side.label;
  options.tokens = side.tokens;
  options.steps = side.steps;
  proto::Profile p;
  if (LooksLikeProfileJson(side.path)) {
    if (!ncu.empty() || analysis_options) {
      return absl::InvalidArgumentError(absl::StrCat(
          side.path, ": a Profile JSON report is analysed already; --ncu, --sass, --device and "
                     "--model-shape need its trace"));
    }
    ASSIGN_OR_RETURN(p, ReadProfileReport(side.path));
    if (!side.label.empty()) p.set_label(side.label);
  } else if (ncu.empty()) {
    ASSIGN_OR_RETURN(p, LoadProfileInput(side.path, options));
  } else {
    ASSIGN_OR_RETURN(proto::Trace trace, LoadTraceInput(side.path));
    importers::NcuJoinStats st;
    RETURN_IF_ERROR(importers::JoinNcuMetrics(&trace, ncu, &st));
    if (note) {
      note(fmt::format("{}: joined {} of {} ncu kernel rows onto {} kernels of {}", ncu,
                       st.matched, st.ncu_kernels, st.trace_kernels, side.path));
    }
    aggregate::ProfileState state;
    aggregate::AccumulateTrace(trace, &state);
    ASSIGN_OR_RETURN(p, AnalyzeState(state, options));
  }
  if (side.tokens > 0) p.mutable_totals()->set_tokens(side.tokens);
  if (side.steps > 0) p.mutable_totals()->set_steps(side.steps);
  return p;
}

}  // namespace

absl::StatusOr<proto::Diff> DiffProfiles(const proto::Profile& a, const proto::Profile& b,
                                         const std::string& max_regression) {
  std::optional<diff::RegressionLimits> limits;
  if (!max_regression.empty()) {
    ASSIGN_OR_RETURN(limits, diff::ParseRegressionLimits(max_regression));
  }
  proto::Diff d = diff::DiffProfiles(a, b);
  if (limits) {
    RETURN_IF_ERROR(diff::CheckLimitRoles(d, *limits));
    *d.mutable_verdict() = diff::JudgeRegression(d, a, b, *limits);
  }
  return d;
}

absl::StatusOr<DiffResult> Diff(const DiffRequest& request) {
  // Limits are checked before any input is read: a typo fails at once.
  if (!request.max_regression.empty()) {
    RETURN_IF_ERROR(diff::ParseRegressionLimits(request.max_regression).status());
  }
  if (!request.analysis.ncu_csv.empty() && (!request.a.ncu.empty() || !request.b.ncu.empty())) {
    return absl::InvalidArgumentError("--ncu joins one CSV onto both sides; with --ncu-a or "
                                      "--ncu-b give each side its own instead");
  }
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsFor(request.analysis));
  const AnalyzeRequest& an = request.analysis;
  const bool analysis_options = !an.sass_paths.empty() || !an.device.empty() || !an.model.empty();
  DiffResult out;
  ASSIGN_OR_RETURN(out.a, LoadSide(request.a, request.a.ncu.empty() ? an.ncu_csv : request.a.ncu,
                                   options, analysis_options, an.on_note));
  ASSIGN_OR_RETURN(out.b, LoadSide(request.b, request.b.ncu.empty() ? an.ncu_csv : request.b.ncu,
                                   options, analysis_options, an.on_note));
  // Two inputs with the same label (e.g. both "mxfp4", or an empty run format) are told
  // apart by their file names.
  if (request.a.label.empty() && request.b.label.empty() && out.a.label() == out.b.label()) {
    out.a.set_label(BaseName(request.a.path));
    out.b.set_label(BaseName(request.b.path));
  }
  ASSIGN_OR_RETURN(out.diff, DiffProfiles(out.a, out.b, request.max_regression));
  return out;
}

}  // namespace qprof::api
