// `qprof analyze INPUT... [--json OUT] [--html OUT] [--perfetto OUT] [--partial OUT]
//  [--ncu CSV] [--sass FILE]... [--device NAME] [--model CONFIG] [--top N]`: attribute every
// kernel, aggregate, compute ceilings, print the terminal summary and write the reports
// asked for. Inputs are streamed and read in parallel (one per rank, say); --partial writes
// the aggregation state for `qprof merge` instead of finishing the analysis.
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "cli/analysis_request.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"
#include "reports/perfetto/perfetto_export.h"

namespace qprof::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  ProfileArgs out;
  std::string perfetto_out;
  std::string partial_out;
  std::string ncu_csv;
};

absl::Status RunAnalyze(const AnalyzeArgs& args) {
  AnalysisRequest request = RequestFor(args.out);
  request.inputs = args.inputs;
  request.ncu_csv = args.ncu_csv;
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsForRequest(request));
  // --perfetto lists every event, so it holds the traces in memory (as --ncu does).
  WholeTracesFn perfetto;
  if (!args.perfetto_out.empty()) {
    perfetto = [&args](const std::vector<const proto::Trace*>& traces) -> absl::Status {
      RETURN_IF_ERROR(reports::WritePerfettoJson(traces, args.perfetto_out));
      fmt::print(stderr, "qprof: wrote {} (open it in ui.perfetto.dev)\n", args.perfetto_out);
      return absl::OkStatus();
    };
  }
  ASSIGN_OR_RETURN(aggregate::ProfileState state, AccumulateRequest(request, perfetto));
  if (!args.partial_out.empty()) {
    RETURN_IF_ERROR(aggregate::WritePartialFile(state, args.partial_out));
    fmt::print(stderr, "qprof: wrote {} (partial profile of {} traces, {} kernels; finish it "
               "with `qprof merge`)\n", args.partial_out, state.traces.size(), state.groups.size());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(proto::Profile profile, AnalyzeState(state, options));
  return WriteProfileOutputs(profile, args.out);
}

}  // namespace

void RegisterAnalyzeCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Attribute every kernel of one or more traces (qtrace, Nsight Systems SQLite, PyTorch "
      "profiler JSON[.gz]) to a role and a pipe class (tensor, simt, comm, memory), aggregate, "
      "compute ceilings and print a summary. Traces stream in bounded memory; several are "
      "read in parallel and compared per rank");
  cmd->add_option("inputs", args->inputs,
                  "Trace files, analysed together (e.g. one per rank: rank*.json); partial "
                  "profiles (.qprofile) are merged in")
      ->required()
      ->check(CLI::ExistingFile);
  AddProfileOptions(cmd, &args->out);
  cmd->add_option("--perfetto", args->perfetto_out,
                  "Write the trace(s) as Chrome/Perfetto trace JSON (ui.perfetto.dev): one track "
                  "per stream, NVTX ranges on their own track (holds the traces in memory)");
  cmd->add_option("--partial", args->partial_out,
                  "Write the aggregation state (a versioned partial profile) to this file "
                  "instead of reports, for `qprof merge` on another machine");
  cmd->add_option("--ncu", args->ncu_csv,
                  "Nsight Compute CSV whose per-kernel metrics (tensor pipe %) are joined onto "
                  "the trace's kernels: the strongest evidence for the pipe class (holds the "
                  "traces in memory)")
      ->check(CLI::ExistingFile);
  cmd->callback([args, &runner] { runner.action = [args] { return RunAnalyze(*args); }; });
}

}  // namespace qprof::cli
