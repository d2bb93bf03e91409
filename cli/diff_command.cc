// `qprof diff A B [--json OUT|-] [--html OUT] [--csv [--table T]...] [--wide] [--sass F]...
//  [--ncu CSV | --ncu-a CSV --ncu-b CSV] [--device NAME] [--model-shape CONFIG] [--top N]`:
// compare two runs. A and B are traces of any kind or Profile JSON reports written by
// `qprof analyze --json`; the analysis options apply to trace inputs as in `qprof analyze`.
#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/diff/diff.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/analysis_inputs.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"
#include "reports/json/json_report.h"
#include "reports/terminal/csv_tables.h"
#include "reports/terminal/terminal_report.h"
#ifdef QPROF_HAVE_HTML_REPORT
#include "reports/html/html_report.h"
#endif
#ifdef QPROF_HAVE_IMPORTERS
#include "analysis/importers/import.h"
#endif

namespace qprof::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  ProfileArgs out;  // --json/--html name the Diff; the analysis options apply to each side
  std::string label_a, label_b;
  uint64_t tokens_a = 0, tokens_b = 0;
  uint32_t steps_a = 0, steps_b = 0;
  std::string ncu, ncu_a, ncu_b;
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

// One side: a Profile JSON report as it is, or a trace analysed with `options` (an ncu CSV
// joined onto it first when given).
absl::StatusOr<proto::Profile> LoadSide(const std::string& path, const std::string& ncu,
                                        const AnalyzeOptions& options, bool analysis_options) {
  if (LooksLikeProfileJson(path)) {
    if (!ncu.empty() || analysis_options) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": a Profile JSON report is analysed already; --ncu, --sass, --device and "
                "--model-shape need its trace"));
    }
    return LoadProfileInput(path, options);
  }
  if (ncu.empty()) return LoadProfileInput(path, options);
#ifdef QPROF_HAVE_IMPORTERS
  ASSIGN_OR_RETURN(proto::Trace trace, LoadTraceInput(path));
  importers::NcuJoinStats st;
  RETURN_IF_ERROR(importers::JoinNcuMetrics(&trace, ncu, &st));
  fmt::print(stderr, "qprof: {}: joined {} of {} ncu kernel rows onto {} kernels of {}\n", ncu,
             st.matched, st.ncu_kernels, st.trace_kernels, path);
  aggregate::ProfileState state;
  aggregate::AccumulateTrace(trace, &state);
  return AnalyzeState(state, options);
#else
  return absl::UnimplementedError("--ncu: the importers are not built into this qprof");
#endif
}

absl::Status RunDiff(const DiffArgs& args) {
  RETURN_IF_ERROR(CheckStdout(args.out));
  if (!args.ncu.empty() && (!args.ncu_a.empty() || !args.ncu_b.empty())) {
    return absl::InvalidArgumentError("--ncu joins one CSV onto both sides; with --ncu-a or "
                                      "--ncu-b give each side its own instead");
  }
  ASSIGN_OR_RETURN(AnalyzeOptions options, MakeAnalyzeOptions(args.out));
  const bool analysis_options =
      !args.out.sass_files.empty() || !args.out.device.empty() || !args.out.model.empty();
  options.label = args.label_a;
  options.tokens = args.tokens_a;
  options.steps = args.steps_a;
  ASSIGN_OR_RETURN(proto::Profile a, LoadSide(args.a, args.ncu_a.empty() ? args.ncu : args.ncu_a,
                                              options, analysis_options));
  ApplyWork(args.tokens_a, args.steps_a, &a);
  options.label = args.label_b;
  options.tokens = args.tokens_b;
  options.steps = args.steps_b;
  ASSIGN_OR_RETURN(proto::Profile b, LoadSide(args.b, args.ncu_b.empty() ? args.ncu : args.ncu_b,
                                              options, analysis_options));
  ApplyWork(args.tokens_b, args.steps_b, &b);
  // Two inputs with the same label (e.g. both "mxfp4", or an empty run format) are told
  // apart by their file names.
  if (args.label_a.empty() && args.label_b.empty() && a.label() == b.label()) {
    a.set_label(BaseName(args.a));
    b.set_label(BaseName(args.b));
  }
  proto::Diff d = diff::DiffProfiles(a, b);
  ReportFiles files;
  std::string csv;
  if (args.out.tables.csv) {
    ASSIGN_OR_RETURN(csv, reports::DiffCsv(d, args.out.tables.tables));
  }
  if (!args.out.json_out.empty()) {
    ASSIGN_OR_RETURN(std::string json, reports::DiffToJson(d));
    RETURN_IF_ERROR(files.Add(args.out.json_out, std::move(json)));
  }
  if (!args.out.html_out.empty()) {
#ifdef QPROF_HAVE_HTML_REPORT
    reports::DiffHtmlInputs in;
    in.a = &a;
    in.b = &b;
    RETURN_IF_ERROR(files.Add(args.out.html_out, reports::RenderDiffHtml(d, in)));
#else
    return absl::UnimplementedError("--html: the HTML report is not available in this build yet");
#endif
  }
  if (args.out.tables.csv) {
    std::fwrite(csv.data(), 1, csv.size(), stdout);
  } else if (!files.has_stdout()) {
    reports::PrintDiffSummary(d, stdout, SummaryOptions(args.out));
  }
  std::fflush(stdout);
  return files.Commit();
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
  AddReportOptions(cmd, &args->out, "Diff");
  AddAnalysisOptions(cmd, &args->out);
  cmd->add_option("--ncu", args->ncu,
                  "Nsight Compute CSV joined onto the kernels of both traces (by name and "
                  "launch order; holds the traces in memory)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--ncu-a", args->ncu_a, "Nsight Compute CSV for A only")->check(CLI::ExistingFile);
  cmd->add_option("--ncu-b", args->ncu_b, "Nsight Compute CSV for B only")->check(CLI::ExistingFile);
  cmd->add_option("--label-a", args->label_a, "Label for A (default: its format or file name)");
  cmd->add_option("--label-b", args->label_b, "Label for B (default: its format or file name)");
  AddWorkOptions(cmd, &args->tokens_a, &args->steps_a, "-a");
  AddWorkOptions(cmd, &args->tokens_b, &args->steps_b, "-b");
  cmd->callback([args, &runner] { runner.action = [args] { return RunDiff(*args); }; });
}

}  // namespace qprof::cli
