// `qprof calibrate TRACE...`: compares measured traces of the bundled runtime (CUDA
// backend, written by the device script) with the model of the same plan, and prints the
// error per role and per kernel path, plus the efficiencies that would close the gap.
// The plan is rebuilt from each trace's run info (model, format, MoE path, batch, context
// of sequence 0, layers, tp); the target is the trace's device unless --target is given.
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/devices/device_specs.h"
#include "analysis/model/calibration.h"
#include "analysis/model/decode_model.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "fmt/core.h"
#include "proto/trace_io.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace qprof::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> traces;
  std::string target;
  std::string param_overrides;
  bool emit_fit = false;
};

std::string Today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

absl::Status CalibrateOne(const std::string& path, const CalibrateOptions& opt) {
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
  if (run.backend() != "cuda") {
    fmt::print(stderr, "qprof: warning: {}: backend '{}' is not the CUDA backend; the model "
                       "describes GPU kernels\n", path, run.backend());
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
  fmt::print("{}", model::CalibrationTable(report));
  if (opt.emit_fit) {
    std::vector<std::string> lines = model::FitDataLines(report, Today());
    fmt::print("\n// analysis/model/calibration_data.cc entries ({}):\n",
               lines.empty() ? "none plausible" : "append to kFits");
    for (const std::string& l : lines) fmt::print("{}\n", l);
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterCalibrateCommand(CLI::App& app, CommandRunner& runner) {
  auto opt = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Compare measured traces of the bundled runtime with the model of the same plan: "
      "error per role and per kernel path, and fitted efficiencies");
  cmd->add_option("traces", opt->traces,
                  "Measured .qtrace files written by `qprof run --backend cuda`")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--target", opt->target,
                  "Spec-table device to model (default: the trace's device); see qprof devices");
  cmd->add_option("--model-param", opt->param_overrides,
                  "Override model parameters before comparing: name=value[,name=value...]");
  cmd->add_flag("--emit-fit", opt->emit_fit,
                "Print the plausible fitted efficiencies as lines for "
                "analysis/model/calibration_data.cc, dated today");
  cmd->callback([opt, &runner] {
    runner.action = [opt] {
      for (const std::string& t : opt->traces) {
        RETURN_IF_ERROR(CalibrateOne(t, *opt));
      }
      return absl::OkStatus();
    };
  });
}

}  // namespace qprof::cli
