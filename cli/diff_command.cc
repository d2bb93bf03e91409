// `qprof diff A B [--json OUT|-] [--html OUT] [--csv [--table T]...] [--wide] [--sass F]...
//  [--ncu CSV | --ncu-a CSV --ncu-b CSV] [--graph-capture-a T]... [--graph-capture-b T]...
//  [--device NAME] [--model-shape CONFIG] [--top N]`:
// compare two runs. A and B are traces of any kind or Profile JSON reports written by
// `qprof analyze --json`; the analysis options apply to trace inputs as in `qprof analyze`.
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "api/diff.h"
#include "api/report_files.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"
#include "reports/terminal/csv_tables.h"
#include "reports/terminal/terminal_report.h"

namespace qprof::cli {
namespace {

struct DiffArgs {
  api::DiffSideRequest a, b;
  ProfileArgs out;  // --json/--html name the Diff; the analysis options apply to each side
  std::string ncu;
  std::string max_regression;
};

absl::Status RunDiff(const DiffArgs& args) {
  RETURN_IF_ERROR(CheckStdout(args.out));
  RETURN_IF_ERROR(api::CheckOutputs({{"--json", args.out.json_out},
                                     {"--html", args.out.html_out}}));
  api::DiffRequest request;
  request.a = args.a;
  request.b = args.b;
  request.analysis = RequestFor(args.out);
  request.analysis.ncu_csv = args.ncu;
  request.max_regression = args.max_regression;
  ASSIGN_OR_RETURN(api::DiffResult r, api::Diff(request));
  api::ReportFiles files;
  std::string csv;
  if (args.out.tables.csv) {
    ASSIGN_OR_RETURN(csv, reports::DiffCsv(r.diff, args.out.tables.tables));
  }
  RETURN_IF_ERROR(
      api::StageDiffReports(r.diff, r.a, r.b, {args.out.json_out, args.out.html_out}, &files));
  if (args.out.tables.csv) {
    std::fwrite(csv.data(), 1, csv.size(), stdout);
  } else if (!files.has_stdout()) {
    reports::PrintDiffSummary(r.diff, stdout, SummaryOptions(args.out));
  }
  std::fflush(stdout);
  RETURN_IF_ERROR(CommitReports(&files));
  // The gate: exit 3 (kExitRegression) with one line naming the worst role, after the
  // reports are written so CI keeps them as artifacts.
  if (r.diff.verdict().failed()) {
    return RegressionError(absl::StrCat("regression: ", r.diff.verdict().summary()));
  }
  if (r.diff.has_verdict()) fmt::print(stderr, "qprof: {}\n", r.diff.verdict().summary());
  return absl::OkStatus();
}

}  // namespace

void RegisterDiffCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare two runs (traces of any kind, or Profile JSON reports): time and share per pipe "
      "class and role, kernels matched by role then name, the tensor/SIMT split, tokens/s");
  cmd->add_option("a", args->a.path, "Baseline: trace or Profile JSON")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("b", args->b.path, "Compared run: trace or Profile JSON")
      ->required()
      ->check(CLI::ExistingFile);
  AddReportOptions(cmd, &args->out, "Diff");
  AddAnalysisOptions(cmd, &args->out);
  cmd->add_option("--ncu", args->ncu,
                  "Nsight Compute CSV joined onto the kernels of both traces (by name and "
                  "launch order; holds the traces in memory)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ncu-a", args->a.ncu, "Nsight Compute CSV for A only")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ncu-b", args->b.ncu, "Nsight Compute CSV for B only")
      ->check(CLI::ExistingFile);
  cmd->add_option("--label-a", args->a.label,
                  "Label for A (default: its format or file name; when both sides' agree, what "
                  "differs: device, folder, format)");
  cmd->add_option("--label-b", args->b.label, "Label for B (default: as for A)");
  cmd->add_option("--graph-capture-a", args->a.graph_captures,
                  "PyTorch profiler trace of A's CUDA-graph captures (as `analyze "
                  "--graph-capture`); repeatable")
      ->check(CLI::ExistingFile);
  cmd->add_option("--graph-capture-b", args->b.graph_captures,
                  "The same for B")
      ->check(CLI::ExistingFile);
  AddWorkOptions(cmd, &args->a.tokens, &args->a.steps, "-a");
  AddWorkOptions(cmd, &args->b.tokens, &args->b.steps, "-b");
  cmd->add_option("--max-regression", args->max_regression,
                  "Fail (exit 3, one line naming the worst role) when time per unit of work "
                  "grew past a limit: PCT for the total and every role holding 1% of kernel "
                  "time or more, ROLE=PCT for one role (e.g. 10% or 10%,comm=50%); a change "
                  "inside the steps' own spread counts as noise. The verdict is in the Diff "
                  "JSON");
  cmd->callback([args, &runner] { runner.action = [args] { return RunDiff(*args); }; });
}

}  // namespace qprof::cli
