#include "api/model_run.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/devices/device_specs.h"
#include "analysis/model/decode_model.h"
#include "analysis/model/model_notes.h"
#include "analysis/model/parameters.h"
#include "analysis/model/published.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "kernels/registry/dispatch.h"
#include "proto/trace_io.h"
#include "runtime/plan.h"

namespace qprof::api {
namespace {

absl::StatusOr<const devices::DeviceSpec*> FindTarget(const std::string& name) {
  const devices::DeviceSpec* spec = devices::FindDevice(name);
  std::string known;
  for (const devices::DeviceSpec& d : devices::AllDevices()) {
    if (d.IsNvidia()) absl::StrAppend(&known, known.empty() ? "" : ", ", d.key);
  }
  if (spec != nullptr && !spec->IsNvidia()) {
    // The model projects our CUDA kernels; the table has AMD GPUs for traces taken on them.
    return absl::InvalidArgumentError(absl::StrCat(
        "--target '", name, "': ", spec->name, " is an ", spec->vendor,
        " GPU and the modelled runs project qprof's CUDA kernels (targets: ", known, ")"));
  }
  if (spec != nullptr) return spec;
  return absl::InvalidArgumentError(absl::StrCat("unknown --target '", name,
                                                 "' (targets: ", known, "; see qprof devices)"));
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

}  // namespace

absl::StatusOr<std::vector<ModelVariant>> ParseModelVariants(const std::string& format,
                                                             const std::string& moe_backend) {
  std::vector<std::string> formats;
  if (format == "both") {
    formats = {"mxfp4", "nvfp4"};
  } else if (format == "mxfp4" || format == "nvfp4") {
    formats = {format};
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --format '", format, "' (mxfp4, nvfp4, both)"));
  }
  std::vector<std::string> backends =
      absl::StrSplit(moe_backend.empty() ? "auto" : moe_backend, ',', absl::SkipWhitespace());
  for (const std::string& b : backends) {  // names the registry knows (any target here)
    RETURN_IF_ERROR(kernels::ResolveMoeVariant(formats[0], b, "").status());
  }
  std::vector<ModelVariant> out;
  for (const std::string& f : formats) {
    for (const std::string& b : backends) out.push_back({f, b});
  }
  return out;
}

absl::StatusOr<ModelRunResult> RunModelled(const ModelRunRequest& request) {
  ASSIGN_OR_RETURN(const devices::DeviceSpec* target, FindTarget(request.target));
  model::ModelParameters params = model::ParametersForTarget(*target);
  if (!request.param_overrides.empty()) {
    RETURN_IF_ERROR(model::ApplyParameterOverrides(params, request.param_overrides));
  }
  if (request.variants.empty()) {
    return absl::InvalidArgumentError("no format/MoE-backend variant to model");
  }
  ModelRunResult result;
  std::vector<model::ModelSummary> summaries;
  std::vector<std::string> comparisons;
  std::map<std::string, int> per_format;
  for (const ModelVariant& v : request.variants) ++per_format[v.format];
  std::set<std::string> seen;
  for (const ModelVariant& v : request.variants) {
    runtime::RunOptions o = request.base;
    o.format = v.format;
    o.moe_backend = v.moe_backend;
    o.target_arch = target->arch;
    ASSIGN_OR_RETURN(proto::DecodePlan plan, runtime::PlanDecode(o));
    if (!seen.insert(v.format + "/" + plan.moe_backend()).second) continue;  // auto + same
    absl::StatusOr<model::ModelResult> modelled = model::ModelDecodeStep(plan, *target, params);
    if (!modelled.ok()) {
      return absl::Status(modelled.status().code(),
                          absl::StrCat(v.format, " via ", plan.moe_backend(), ": ",
                                       std::string(modelled.status().message())));
    }
    ModelRunOutput out;
    out.variant = {v.format, plan.moe_backend()};
    out.summary = model::Summarize(plan, *modelled, target->key);
    out.trace = std::move(modelled->trace);
    if (request.compare_published) {
      for (std::string& n : model::ComparisonNotes(out.summary)) {
        out.trace.mutable_header()->add_notes("comparison: " + n);
        comparisons.push_back(fmt::format("{}: {}", out.summary.label, n));
      }
    }
    (*out.trace.mutable_header()->mutable_run()->mutable_extra())["model.file_suffix"] =
        request.file_suffix;
    if (!request.command_line.empty()) {
      out.trace.mutable_header()->mutable_run()->set_command_line(request.command_line);
    }
    if (!request.out_dir.empty()) {
      std::string stem = per_format[v.format] > 1
                             ? absl::StrCat(v.format, "-", plan.moe_backend())
                             : v.format;
      out.trace_path = JoinPath(request.out_dir, stem + request.file_suffix + ".qtrace");
      RETURN_IF_ERROR(MakeDirs(request.out_dir));
      RETURN_IF_ERROR(WriteTrace(out.trace, out.trace_path));
    }
    summaries.push_back(out.summary);
    result.runs.push_back(std::move(out));
  }
  result.notes.push_back(
      "MODELLED projection, not a measurement; assumptions below, each parameter with its "
      "source; see docs/model.md");
  for (std::string& n : comparisons) result.notes.push_back("comparison: " + n);
  for (std::string& n : model::StructuralAssumptions()) result.notes.push_back("assumption: " + n);
  for (std::string& n : model::TargetNotes(*target, std::max(1, request.base.tp))) {
    result.notes.push_back(n);
  }
  for (std::string& n : model::ParameterNotes(params)) result.notes.push_back("parameter: " + n);
  result.summary_json = model::SummaryJson(summaries, result.notes);
  if (!request.out_dir.empty()) {
    result.summary_path = JoinPath(request.out_dir, absl::StrCat("model-", target->key,
                                                                 ".summary.json"));
    RETURN_IF_ERROR(WriteFileAtomic(result.summary_path, result.summary_json));
  }
  return result;
}

std::string ModelRunReport(const ModelRunResult& result, const std::string& target) {
  std::vector<model::ModelSummary> s;
  for (const ModelRunOutput& r : result.runs) s.push_back(r.summary);
  const devices::DeviceSpec* spec = devices::FindDevice(target);
  std::string out = fmt::format(
      "MODELLED (not measured) on {}{}:\n", spec != nullptr ? spec->name : target,
      result.runs.empty() ? ""
                          : fmt::format(" x TP {}, batch {}", result.runs[0].summary.tp,
                                        result.runs[0].summary.batch));
  out += model::SummaryTable(s);
  for (const ModelRunOutput& r : result.runs) {
    if (!r.trace_path.empty()) out += fmt::format("  modelled trace: {}\n", r.trace_path);
  }
  if (!result.summary_path.empty()) {
    out += fmt::format("  summary and assumptions: {}\n", result.summary_path);
  }
  return out;
}

namespace {

std::vector<std::string> Paths(const ModelRunResult& result) {
  std::vector<std::string> out;
  for (const ModelRunOutput& r : result.runs) {
    if (!r.trace_path.empty()) out.push_back(r.trace_path);
  }
  return out;
}

}  // namespace

absl::StatusOr<ModelRunFiles> RunModelBackend(const runtime::RunOptions& base,
                                              const std::string& format,
                                              const std::string& moe_backend,
                                              const ModelProjectionOptions& options,
                                              const std::string& out_dir,
                                              const std::string& command_line) {
  ModelRunRequest request;
  request.base = base;
  request.base.steps = 1;  // one modelled step; the plan is for step 0
  ASSIGN_OR_RETURN(request.variants, ParseModelVariants(format, moe_backend));
  request.target = options.target;
  request.param_overrides = options.param_overrides;
  request.out_dir = out_dir;
  request.command_line = command_line;
  ASSIGN_OR_RETURN(ModelRunResult result, RunModelled(request));
  return ModelRunFiles{Paths(result), ModelRunReport(result, options.target)};
}

absl::StatusOr<ModelRunFiles> AddModelProjection(const runtime::RunOptions& base,
                                                 const std::string& format,
                                                 const ModelProjectionOptions& options,
                                                 const std::string& out_dir,
                                                 const std::string& command_line) {
  if (options.no_projection) return ModelRunFiles{};
  ModelRunRequest request;
  request.base = base;
  request.base.steps = 1;
  // The MoE path the GPU would take for the formats run on the host ("auto" resolves per
  // target arch, as the runtime does).
  ASSIGN_OR_RETURN(request.variants, ParseModelVariants(format, base.moe_backend));
  request.target = options.target;
  request.param_overrides = options.param_overrides;
  request.out_dir = out_dir;
  ASSIGN_OR_RETURN(const devices::DeviceSpec* target, FindTarget(options.target));
  request.file_suffix = absl::StrCat(".model-", target->key);
  request.command_line = command_line;
  ASSIGN_OR_RETURN(ModelRunResult result, RunModelled(request));
  return ModelRunFiles{Paths(result), "\n" + ModelRunReport(result, options.target)};
}

}  // namespace qprof::api
