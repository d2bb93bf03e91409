#include "api/calibrate.h"

#include <algorithm>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "analysis/devices/device_specs.h"
#include "analysis/model/calibration.h"
#include "analysis/model/decode_model.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "proto/trace_io.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace qprof::api {

namespace {

std::string Today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace

absl::StatusOr<CalibrateResult> Calibrate(const std::string& path, const CalibrateRequest& opt) {
  ASSIGN_OR_RETURN(proto::Trace trace, ReadTrace(path));
  if (trace.header().provenance() == proto::PROVENANCE_MODELLED) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": trace is modelled; calibrate against a measured trace"));
  }
  std::string target_name = opt.target;
  if (target_name.empty() && trace.header().devices_size() > 0) {
    target_name = trace.header().devices(0).name();
  }
  const devices::DeviceSpec* target = devices::FindDevice(target_name);
  if (target == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": device '", target_name, "' is not in the spec table; pass --target"));
  }
  const proto::RunInfo& run = trace.header().run();
  if (run.model().empty() || run.format().empty() || run.batch() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": run info lacks model, format or batch; only traces of `qprof run` can be "
              "calibrated against their plan"));
  }
  CalibrateResult result;
  if (run.backend() != "cuda") {
    result.warnings.push_back(fmt::format("{}: backend '{}' is not the CUDA backend; the model "
                                          "describes GPU kernels", path, run.backend()));
  }
  runtime::RunOptions o;
  o.model = run.model();
  o.format = run.format();
  o.moe_backend = run.moe_backend().empty() ? "auto" : run.moe_backend();
  o.batch = static_cast<int>(run.batch());
  // runtime::ContextLengths gives sequence 0 the full context.
  o.context = run.context_lengths_size() > 0 ? static_cast<int>(run.context_lengths(0)) : 256;
  o.layers = static_cast<int>(run.layers());
  o.tp = std::max(1, static_cast<int>(run.tp()));
  o.steps = 1;
  o.target_arch = target->arch;
  absl::StatusOr<proto::DecodePlan> plan = runtime::PlanDecode(o);
  if (!plan.ok()) {
    return absl::Status(plan.status().code(),
                        absl::StrCat(path, ": cannot plan its run: ", plan.status().message()));
  }
  model::ModelParameters params = model::ParametersForTarget(*target);
  if (!opt.param_overrides.empty()) {
    RETURN_IF_ERROR(model::ApplyParameterOverrides(params, opt.param_overrides));
  }
  ASSIGN_OR_RETURN(model::ModelResult modelled, model::ModelDecodeStep(*plan, *target, params));
  trace.mutable_header()->set_source_path(path);
  ASSIGN_OR_RETURN(model::CalibrationReport report,
                   model::Calibrate(trace, *plan, modelled, params, target->key));
  result.table = model::CalibrationTable(report);
  result.fit_lines = model::FitDataLines(report, Today());
  return result;
}

}  // namespace qprof::api
