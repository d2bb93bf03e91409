// `qprof analyze INPUT... [--json OUT] [--html OUT] [--perfetto OUT] [--ncu CSV] [--sass FILE]...
//  [--device NAME] [--model CONFIG] [--top N]`: attribute every kernel, aggregate, compute
// ceilings, print the terminal summary and write the reports asked for.
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/ceilings/ceilings.h"
#include "analysis/sass/sass_parser.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/analysis_inputs.h"
#include "cli/analysis_request.h"
#include "cli/command.h"
#include "fmt/core.h"
#include "reports/json/json_report.h"
#include "reports/perfetto/perfetto_export.h"
#include "reports/terminal/terminal_report.h"
#ifdef QPROF_HAVE_IMPORTERS
#include "analysis/importers/import.h"
#endif
#ifdef QPROF_HAVE_HTML_REPORT
#include "reports/html/html_report.h"
#endif

namespace qprof::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  std::string json_out;
  std::string html_out;
  std::string perfetto_out;
  std::string ncu_csv;
  std::vector<std::string> sass_files;
  std::string device;
  std::string model;
  std::string label;
  int top = 15;
};

absl::Status RunAnalyze(const AnalyzeArgs& args) {
  AnalysisRequest request;
  request.sass_paths = args.sass_files;
  request.device = args.device;
  request.model = args.model;
  request.label = args.label;
  request.top = args.top;
  request.verbose = true;
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsForRequest(request));
  std::vector<proto::Trace> traces;
  for (const std::string& in : args.inputs) {
    if (!StderrIsTty()) fmt::print(stderr, "qprof: reading {}\n", in);
    ASSIGN_OR_RETURN(proto::Trace t, LoadTraceInput(in));
    traces.push_back(std::move(t));
  }
  if (!args.ncu_csv.empty()) {
#ifdef QPROF_HAVE_IMPORTERS
    for (proto::Trace& t : traces) {
      importers::NcuJoinStats st;
      RETURN_IF_ERROR(importers::JoinNcuMetrics(&t, args.ncu_csv, &st));
      fmt::print(stderr, "qprof: {}: joined {} of {} ncu kernel rows onto {} trace kernels\n",
                 args.ncu_csv, st.matched, st.ncu_kernels, st.trace_kernels);
    }
#else
    return absl::UnimplementedError("--ncu: the importers are not built into this qprof");
#endif
  }
  if (!args.perfetto_out.empty()) {
    std::vector<const proto::Trace*> ptrs;
    for (const proto::Trace& t : traces) ptrs.push_back(&t);
    RETURN_IF_ERROR(reports::WritePerfettoJson(ptrs, args.perfetto_out));
    fmt::print(stderr, "qprof: wrote {} (open it in ui.perfetto.dev)\n", args.perfetto_out);
  }
  ASSIGN_OR_RETURN(proto::Profile profile, Analyze(traces, options));
  reports::TerminalOptions topt;
  topt.color = reports::ShouldUseColor(stdout);
  topt.top_kernels = args.top;
  reports::PrintProfileSummary(profile, stdout, topt);
  if (!args.json_out.empty()) {
    RETURN_IF_ERROR(reports::WriteProfileJson(profile, args.json_out));
    fmt::print(stderr, "qprof: wrote {}\n", args.json_out);
  }
  if (!args.html_out.empty()) {
#ifdef QPROF_HAVE_HTML_REPORT
    RETURN_IF_ERROR(reports::WriteProfileHtml(profile, args.html_out));
    fmt::print(stderr, "qprof: wrote {}\n", args.html_out);
#else
    return absl::UnimplementedError("--html: the HTML report is not available in this build yet");
#endif
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Attribute every kernel of one or more traces (qtrace, Nsight Systems SQLite, PyTorch "
      "profiler JSON[.gz]) to a role and a pipe class (tensor, simt, comm, memory), aggregate, "
      "compute ceilings and print a summary");
  cmd->add_option("inputs", args->inputs, "Trace files, analysed together (e.g. one per rank)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--json", args->json_out, "Write the Profile as JSON to this file");
  cmd->add_option("--html", args->html_out, "Write a single-file HTML report to this file");
  cmd->add_option("--perfetto", args->perfetto_out,
                  "Write the trace(s) as Chrome/Perfetto trace JSON (ui.perfetto.dev): one track "
                  "per stream, NVTX ranges on their own track");
  cmd->add_option("--ncu", args->ncu_csv,
                  "Nsight Compute CSV whose per-kernel metrics (tensor pipe %) are joined onto "
                  "the trace's kernels: the strongest evidence for the pipe class")
      ->check(CLI::ExistingFile);
  cmd->add_option("--sass", args->sass_files,
                  "cubin/fatbin/executable/shared library, or a folder of cubins such as "
                  "Triton's cache (~/.triton/cache), whose SASS tells which kernels use "
                  "tensor cores (runs cuobjdump); repeatable")
      ->check(CLI::ExistingPath);
  cmd->add_option("--device", args->device,
                  std::string("Spec-table device for ceilings (see `qprof devices`), e.g. h200, "
                              "rtx-pro-6000; default: the device the trace reports; for "
                              "host-CPU traces ") +
                      devices::kDefaultProjectionDevice + ", the default target of `qprof run`");
  cmd->add_option("--model", args->model,
                  "Model shape JSON for format ceilings of third-party traces: "
                  "{\"active_params\": 13e9, \"batch\": 16, ...} (README: \"Analyse a trace you "
                  "already have\")")
      ->check(CLI::ExistingFile);
  cmd->add_option("--top", args->top, "Kernels shown in the summary")->check(CLI::Range(1, 100000));
  cmd->add_option("--label", args->label, "Short label for this profile (used by diffs)");
  cmd->callback([args, &runner] { runner.action = [args] { return RunAnalyze(*args); }; });
}

}  // namespace qprof::cli
