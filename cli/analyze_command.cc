// `qprof analyze INPUT... [--json OUT|-] [--html OUT] [--perfetto OUT] [--partial OUT]
//  [--csv [--table T]...] [--wide] [--ncu CSV] [--sass FILE]... [--device NAME]
//  [--model-shape CONFIG [--batch N] [--tp N]] [--top N] [--graph-capture CAPTURE]...
//  [--threads N]`: attribute every kernel, aggregate, compute ceilings, print the terminal
// summary and write the reports asked for, all or none. Inputs are
// streamed and read in parallel (one per rank, say); --partial writes the aggregation state
// for `qprof merge` instead of finishing the analysis. A Profile JSON report (`--json` of an
// earlier analyze) is read back as it is, as `qprof diff` does.
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "api/analyze.h"
#include "api/report_files.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  ProfileArgs out;
  std::string perfetto_out;
  std::string partial_out;
  std::string ncu_csv;
  std::vector<std::string> graph_captures;
  int threads = 0;  // 0: one per core
  uint32_t batch = 0;
  uint32_t tp = 0;
};

absl::Status RunAnalyze(const AnalyzeArgs& args) {
  RETURN_IF_ERROR(CheckStdout(args.out));
  RETURN_IF_ERROR(api::CheckOutputs({{"--json", args.out.json_out},
                                     {"--html", args.out.html_out},
                                     {"--perfetto", args.perfetto_out},
                                     {"--partial", args.partial_out}}));
  api::AnalyzeRequest request = RequestFor(args.out);
  request.inputs = args.inputs;
  request.ncu_csv = args.ncu_csv;
  request.perfetto = !args.perfetto_out.empty();
  request.graph_captures = args.graph_captures;
  request.threads = args.threads;
  request.batch = args.batch;
  request.tp = args.tp;
  if (!args.partial_out.empty()) {
    ASSIGN_OR_RETURN(api::PartialResult partial, api::AnalyzePartial(request));
    RETURN_IF_ERROR(WriteFileAtomic(args.partial_out, partial.bytes));
    fmt::print(stderr, "qprof: wrote {} ({}; finish it with `qprof merge`)\n", args.partial_out,
               partial.summary);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(api::AnalyzeResult result, api::Analyze(request));
  api::ReportFiles files;
  if (!args.perfetto_out.empty()) {
    RETURN_IF_ERROR(files.Add(args.perfetto_out, std::move(result.perfetto_json),
                              "(open it in ui.perfetto.dev)"));
  }
  return WriteProfileOutputs(result.profile, args.out, &files);
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Attribute every kernel of one or more traces (qtrace, Nsight Systems SQLite, PyTorch "
      "profiler JSON[.gz]) to a role and a pipe class (tensor, simt, comm, memory), aggregate, "
      "compute ceilings and print a summary. Traces stream in bounded memory; several are "
      "read in parallel and compared per rank. A Profile JSON report (--json of an earlier "
      "analyze) is read back and reported again");
  cmd->add_option("inputs", args->inputs,
                  "Trace files, analysed together (e.g. one per rank: rank*.json); partial "
                  "profiles (.qprofile) are merged in; or one Profile JSON report")
      ->required()
      ->check(CLI::ExistingFile);
  AddProfileOptions(cmd, &args->out);
  cmd->add_option("--perfetto", args->perfetto_out,
                  "Write the trace(s) as Chrome/Perfetto trace JSON (ui.perfetto.dev) to this "
                  "file: one track per stream, NVTX ranges on their own track, each kernel "
                  "with its class, role and evidence (holds the traces in memory)");
  cmd->add_option("--partial", args->partial_out,
                  "Write the aggregation state (a versioned partial profile) to this file "
                  "instead of reports, for `qprof merge` on another machine");
  cmd->add_option("--ncu", args->ncu_csv,
                  "Nsight Compute CSV whose per-kernel metrics (tensor pipe %) are joined onto "
                  "the trace's kernels: the strongest evidence for the pipe class (holds the "
                  "traces in memory)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--graph-capture", args->graph_captures,
                  "PyTorch profiler trace taken while the CUDA (or HIP) graphs were captured "
                  "(SGLang/vLLM capture traces; repeat for one file per batch size): each graph "
                  "replay's kernels take the context they had at capture, paired by kernel name "
                  "(ROCm) or launch order and count (CUDA), with the capture that fits best")
      ->check(CLI::ExistingFile);
  cmd->add_option("--threads", args->threads,
                  "The most threads the analysis runs on: traces read at once, and the worker "
                  "threads one large trace decodes on; 1 reads everything on one thread "
                  "(default: one per core; at most 4096)")
      ->option_text("N");  // the range is checked by the API, so Python words it alike
  cmd->add_option("--batch", args->batch,
                  "Tokens per decode step, for graph replays without a capture whose GEMMs "
                  "--model-shape models from the layer order (default: the batch the step "
                  "ranges name, \"step[DECODE bs=32]\" or the iteration annotation)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tp", args->tp,
                  "Tensor-parallel degree the modelled layers are split by (default: the "
                  "trace's world size, from its distributedInfo, else 1)")
      ->check(CLI::PositiveNumber);
  cmd->callback([args, &runner] { runner.action = [args] { return RunAnalyze(*args); }; });
}

}  // namespace qprof::cli
