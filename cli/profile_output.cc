#include "cli/profile_output.h"

#include "analysis/devices/device_specs.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "reports/json/json_report.h"
#include "reports/terminal/terminal_report.h"
#ifdef QPROF_HAVE_HTML_REPORT
#include "reports/html/html_report.h"
#endif

namespace qprof::cli {

void AddProfileOptions(CLI::App* cmd, ProfileArgs* args) {
  cmd->add_option("--json", args->json_out, "Write the Profile as JSON to this file");
  cmd->add_option("--html", args->html_out, "Write a single-file HTML report to this file");
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

absl::StatusOr<AnalyzeOptions> MakeAnalyzeOptions(const ProfileArgs& args) {
  return OptionsForRequest(RequestFor(args));
}

AnalysisRequest RequestFor(const ProfileArgs& args) {
  AnalysisRequest request;
  request.sass_paths = args.sass_files;
  request.device = args.device;
  request.model = args.model;
  request.label = args.label;
  request.top = args.top;
  request.tokens = args.tokens;
  request.steps = args.steps;
  request.verbose = true;
  return request;
}

absl::Status WriteProfileOutputs(const proto::Profile& profile, const ProfileArgs& args) {
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

}  // namespace qprof::cli
