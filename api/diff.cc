#include "api/diff.h"

#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/aggregate/accumulator.h"
#include "analysis/devices/device_specs.h"
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

// The folder holding `path`, by its own name ("" at the top of a relative path).
std::string FolderName(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec).lexically_normal();
  return ec ? "" : p.parent_path().filename().string();
}

// The device a profile ran on, as briefly as it can be said: the spec table's key, else
// the name the trace gives.
std::string DeviceLabel(const proto::Profile& p) {
  if (p.devices().empty()) return "";
  const std::string& name = p.devices(0).name();
  if (const devices::DeviceSpec* s = devices::FindDevice(name)) return s->key;
  return name == "unknown" ? "" : name;
}

std::string FormatLabel(const proto::Profile& p) {
  return !p.run().format().empty() ? p.run().format() : p.format_inferred();
}

// One side: a Profile JSON report as it is, or a trace analysed with `options` (an ncu CSV
// joined onto it, or graph captures paired, when given). --tokens/--steps replace a report's
// totals.
absl::StatusOr<proto::Profile> LoadSide(const DiffSideRequest& side, const std::string& ncu,
                                        const AnalyzeRequest& analysis, AnalyzeOptions options,
                                        bool analysis_options) {
  options.label = side.label;
  options.tokens = side.tokens;
  options.steps = side.steps;
  proto::Profile p;
  if (LooksLikeProfileJson(side.path)) {
    if (!ncu.empty() || analysis_options || !side.graph_captures.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          side.path, ": a Profile JSON report is analysed already; --ncu, --sass, --device, "
                     "--model-shape and --graph-capture need its trace"));
    }
    ASSIGN_OR_RETURN(p, ReadProfileReport(side.path));
    if (!side.label.empty()) p.set_label(side.label);
  } else {
    AnalyzeRequest r = analysis;
    r.inputs = {side.path};
    r.ncu_csv = ncu;
    r.graph_captures = side.graph_captures;
    r.label = side.label;
    r.tokens = side.tokens;
    r.steps = side.steps;
    r.perfetto = false;
    ASSIGN_OR_RETURN(AnalyzeResult result, AnalyzeWith(r, options));
    p = std::move(result.profile);
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

std::pair<std::string, std::string> SideLabels(const proto::Profile& a, const proto::Profile& b,
                                               const std::string& path_a,
                                               const std::string& path_b) {
  const std::pair<std::string, std::string> candidates[] = {
      {DeviceLabel(a), DeviceLabel(b)},
      {FolderName(path_a), FolderName(path_b)},
      {FormatLabel(a), FormatLabel(b)},
      {BaseName(path_a), BaseName(path_b)},
  };
  for (const auto& [la, lb] : candidates) {
    if (!la.empty() && !lb.empty() && la != lb) return {la, lb};
  }
  return {"A", "B"};
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
                                   an, options, analysis_options));
  ASSIGN_OR_RETURN(out.b, LoadSide(request.b, request.b.ncu.empty() ? an.ncu_csv : request.b.ncu,
                                   an, options, analysis_options));
  // Two inputs with the same label (both "mxfp4", or two files of one name in two folders)
  // are told apart by what differs between them.
  if (request.a.label.empty() && request.b.label.empty() && out.a.label() == out.b.label()) {
    auto [la, lb] = SideLabels(out.a, out.b, request.a.path, request.b.path);
    out.a.set_label(la);
    out.b.set_label(lb);
  }
  ASSIGN_OR_RETURN(out.diff, DiffProfiles(out.a, out.b, request.max_regression));
  return out;
}

}  // namespace qprof::api
