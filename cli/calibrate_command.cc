// `qprof calibrate TRACE...`: compares measured traces of the bundled runtime (CUDA
// backend, written by the device script) with the model of the same plan, and prints the
// error per role and per kernel path, plus the efficiencies that would close the gap.
// The plan is rebuilt from each trace's run info (model, format, MoE path, batch, context
// of sequence 0, layers, tp); the target is the trace's device unless --target is given.
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "api/calibrate.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> traces;
  api::CalibrateRequest request;
  bool emit_fit = false;
};

absl::Status CalibrateOne(const std::string& path, const CalibrateOptions& opt) {
  ASSIGN_OR_RETURN(api::CalibrateResult r, api::Calibrate(path, opt.request));
  for (const std::string& w : r.warnings) fmt::print(stderr, "qprof: warning: {}\n", w);
  fmt::print("{}", r.table);
  if (opt.emit_fit) {
    fmt::print("\n// analysis/model/calibration_data.cc entries ({}):\n",
               r.fit_lines.empty() ? "none plausible" : "append to kFits");
    for (const std::string& l : r.fit_lines) fmt::print("{}\n", l);
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
  cmd->add_option("--target", opt->request.target,
                  "Spec-table device to model (default: the trace's device); see qprof devices");
  cmd->add_option("--model-param", opt->request.param_overrides,
                  "Override model parameters before comparing: name=value[,name=value...]");
  cmd->add_flag("--emit-fit", opt->emit_fit,
                "Print the plausible fitted efficiencies as lines for the model's "
                "calibration table, dated today (docs/model.md, \"Calibration\")");
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
