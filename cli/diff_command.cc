// `qprof diff A B [--json OUT] [--html OUT]`: compare two runs. A and B are traces of any
// kind or Profile JSON reports written by `qprof analyze --json`.
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "analysis/analyze.h"
#include "analysis/diff/diff.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/analysis_inputs.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"
#include "reports/json/json_report.h"
#include "reports/terminal/terminal_report.h"
#ifdef QPROF_HAVE_HTML_REPORT
#include "reports/html/html_report.h"
#endif

namespace qprof::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  std::string json_out, html_out;
  std::string device;
  std::string label_a, label_b;
  uint64_t tokens_a = 0, tokens_b = 0;
  uint32_t steps_a = 0, steps_b = 0;
};

// --tokens-X / --steps-X: for a trace, through the analysis (tokens/s too); a Profile JSON
// gets its totals replaced.
void ApplyWork(uint64_t tokens, uint32_t steps, proto::Profile* p) {
  if (tokens > 0) p->mutable_totals()->set_tokens(tokens);
  if (steps > 0) p->mutable_totals()->set_steps(steps);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::Status RunDiff(const DiffArgs& args) {
  AnalyzeOptions options;
  options.known_kernels = RegistryKnownKernels();
  options.device = args.device;
  options.label = args.label_a;
  options.tokens = args.tokens_a;
  options.steps = args.steps_a;
  ASSIGN_OR_RETURN(proto::Profile a, LoadProfileInput(args.a, options));
  ApplyWork(args.tokens_a, args.steps_a, &a);
  options.label = args.label_b;
  options.tokens = args.tokens_b;
  options.steps = args.steps_b;
  ASSIGN_OR_RETURN(proto::Profile b, LoadProfileInput(args.b, options));
  ApplyWork(args.tokens_b, args.steps_b, &b);
  // Two inputs with the same label (e.g. both "mxfp4", or an empty run format) are told
  // apart by their file names.
  if (args.label_a.empty() && args.label_b.empty() && a.label() == b.label()) {
    a.set_label(BaseName(args.a));
    b.set_label(BaseName(args.b));
  }
  proto::Diff d = diff::DiffProfiles(a, b);
  reports::TerminalOptions topt;
  topt.color = reports::ShouldUseColor(stdout);
  reports::PrintDiffSummary(d, stdout, topt);
  if (!args.json_out.empty()) {
    RETURN_IF_ERROR(reports::WriteDiffJson(d, args.json_out));
    fmt::print(stderr, "qprof: wrote {}\n", args.json_out);
  }
  if (!args.html_out.empty()) {
#ifdef QPROF_HAVE_HTML_REPORT
    reports::DiffHtmlInputs in;
    in.a = &a;
    in.b = &b;
    RETURN_IF_ERROR(reports::WriteDiffHtml(d, args.html_out, in));
    fmt::print(stderr, "qprof: wrote {}\n", args.html_out);
#else
    return absl::UnimplementedError("--html: the HTML report is not available in this build yet");
#endif
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterDiffCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare two runs (traces of any kind, or Profile JSON reports): time and share per pipe "
      "class and role, kernels matched by role then name, the tensor/SIMT split, tokens/s");
  cmd->add_option("a", args->a, "Baseline: trace or Profile JSON")->required()->check(CLI::ExistingFile);
  cmd->add_option("b", args->b, "Compared run: trace or Profile JSON")->required()->check(CLI::ExistingFile);
  cmd->add_option("--json", args->json_out, "Write the Diff as JSON to this file");
  cmd->add_option("--html", args->html_out, "Write a single-file HTML diff report to this file");
  cmd->add_option("--device", args->device, "Spec-table device for ceilings of trace inputs");
  cmd->add_option("--label-a", args->label_a, "Label for A (default: its format or file name)");
  cmd->add_option("--label-b", args->label_b, "Label for B (default: its format or file name)");
  AddWorkOptions(cmd, &args->tokens_a, &args->steps_a, "-a");
  AddWorkOptions(cmd, &args->tokens_b, &args->steps_b, "-b");
  cmd->callback([args, &runner] { runner.action = [args] { return RunDiff(*args); }; });
}

}  // namespace qprof::cli
