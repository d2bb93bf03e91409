#include "cli/profile_output.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "api/devices.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "fmt/core.h"
#include "reports/terminal/csv_tables.h"
#include "reports/terminal/terminal_report.h"

namespace qprof::cli {

void AddReportOptions(CLI::App* cmd, ProfileArgs* args, const std::string& what) {
  cmd->add_option("--json", args->json_out,
                  absl::StrCat("Write the ", what, " as JSON to this file; - for standard output "
                               "(the terminal summary is then left out)"));
  cmd->add_option("--html", args->html_out,
                  absl::StrCat("Write a single-file HTML ", what == "Diff" ? "diff " : "",
                               "report to this file"));
  cmd->add_flag("--csv", args->tables.csv,
                "Print the summary's tables as CSV instead of the summary (like nsys stats "
                "--format csv): full names, times in ns, shares 0..1");
  cmd->add_option("--table", args->tables.tables,
                  "With --csv: only this table (repeatable): classes, kernels, roles, ranges, "
                  "ranks (analyze); classes, roles, kernels, ranks (diff)");
  cmd->add_flag("--wide", args->tables.wide,
                "Print kernel names in full (the default when stdout is not a terminal)");
}

void AddAnalysisOptions(CLI::App* cmd, ProfileArgs* args) {
  cmd->add_option("--sass", args->sass_files,
                  "cubin/fatbin/executable/shared library, or a folder of cubins such as "
                  "Triton's cache (~/.triton/cache), whose SASS tells which kernels use "
                  "tensor cores (runs cuobjdump); repeatable")
      ->check(CLI::ExistingPath);
  cmd->add_option("--device", args->device,
                  std::string("Spec-table device for ceilings (see `qprof devices`), e.g. h200, "
                              "rtx-pro-6000; default: the device the trace reports; for "
                              "host-CPU traces ") +
                      api::kDefaultProjectionDevice + ", the default target of `qprof run`");
  cmd->add_option("--model-shape", args->model,
                  "Model shape JSON for format ceilings of third-party traces: "
                  "{\"active_params\": 13e9, \"batch\": 16, ...} (README: \"Analyse a trace you "
                  "already have\")")
      ->check(CLI::ExistingFile);
  // --model meant this shape before; in `qprof run` it names a preset or config. Kept,
  // hidden, so old command lines still work, with a warning.
  cmd->add_option("--model", args->model, "")
      ->group("")
      ->check(CLI::ExistingFile)
      ->each([](const std::string&) {
        fmt::print(stderr, "qprof: warning: --model is deprecated here: use --model-shape "
                           "(--model names a preset or config in `qprof run`)\n");
      });
  cmd->add_option("--top", args->top, "Kernels shown in the summary")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
}

void AddProfileOptions(CLI::App* cmd, ProfileArgs* args) {
  AddReportOptions(cmd, args, "Profile");
  AddAnalysisOptions(cmd, args);
  cmd->add_option("--label", args->label, "Short label for this profile (used by diffs)");
  AddWorkOptions(cmd, &args->tokens, &args->steps, "");
}

void AddWorkOptions(CLI::App* cmd, uint64_t* tokens, uint32_t* steps, const std::string& side) {
  cmd->add_option("--tokens" + side, *tokens,
                  "Tokens the trace" + std::string(side.empty() ? "s" : "") +
                      " generated, for traces that do not record it: tokens/s (over the "
                      "GPUs' span when there is no wall time) and per-token diffs")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--steps" + side, *steps,
                  "Decode (or training) steps the trace holds, for traces without \"step N\" "
                  "or ProfilerStep#N ranges: per-step figures and diffs")
      ->check(CLI::PositiveNumber);
}

void PrintNote(const std::string& line) { fmt::print(stderr, "qprof: {}\n", line); }

api::AnalyzeRequest RequestFor(const ProfileArgs& args) {
  api::AnalyzeRequest request;
  request.sass_paths = args.sass_files;
  request.device = args.device;
  request.model = args.model;
  request.label = args.label;
  request.top = args.top;
  request.tokens = args.tokens;
  request.steps = args.steps;
  // No "reading X" line: a bad input's error is then the only line (a terminal still gets
  // the importers' progress).
  request.progress = true;
  request.on_note = PrintNote;
  return request;
}

reports::TerminalOptions SummaryOptions(const ProfileArgs& args) {
  reports::TerminalOptions topt;
  topt.color = reports::ShouldUseColor(stdout);
  topt.top_kernels = args.top;
  // In a pipe or a file nobody reads the line width, and a shortened name cannot be joined
  // with other tools' tables.
  topt.wide = args.tables.wide || !StdoutIsTty();
  return topt;
}

absl::Status CommitReports(api::ReportFiles* files) {
  ASSIGN_OR_RETURN(std::vector<api::WrittenFile> written, files->Commit());
  for (const api::WrittenFile& w : written) {
    fmt::print(stderr, "qprof: wrote {}{}\n", w.path, w.note.empty() ? "" : " " + w.note);
  }
  if (files->has_stdout()) {
    std::fwrite(files->stdout_data().data(), 1, files->stdout_data().size(), stdout);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

absl::Status CheckStdout(const ProfileArgs& args) {
  if (args.tables.csv && args.json_out == "-") {
    return absl::InvalidArgumentError(
        "--csv and --json - both write to standard output: give --json a file name");
  }
  if (!args.tables.tables.empty() && !args.tables.csv) {
    return absl::InvalidArgumentError("--table picks the tables of --csv: add --csv");
  }
  return absl::OkStatus();
}

absl::Status WriteProfileOutputs(const proto::Profile& profile, const ProfileArgs& args,
                                 api::ReportFiles* extra) {
  RETURN_IF_ERROR(CheckStdout(args));
  api::ReportFiles own;
  api::ReportFiles& files = extra != nullptr ? *extra : own;
  // Everything is rendered and staged before anything is printed or renamed.
  std::string csv;
  if (args.tables.csv) {
    ASSIGN_OR_RETURN(csv, reports::ProfileCsv(profile, args.tables.tables));
  }
  RETURN_IF_ERROR(api::StageProfileReports(profile, {args.json_out, args.html_out}, &files));
  if (args.tables.csv) {
    std::fwrite(csv.data(), 1, csv.size(), stdout);
  } else if (!files.has_stdout()) {
    reports::PrintProfileSummary(profile, stdout, SummaryOptions(args));
  }
  std::fflush(stdout);
  return CommitReports(&files);
}

}  // namespace qprof::cli
