// `qprof analyze INPUT... [--json OUT|-] [--html OUT] [--perfetto OUT] [--partial OUT]
//  [--csv [--table T]...] [--wide] [--ncu CSV] [--sass FILE]... [--device NAME]
//  [--model-shape CONFIG] [--top N] [--graph-capture CAPTURE]...`: attribute every kernel, aggregate, compute ceilings,
// print the terminal summary and write the reports asked for, all or none. Inputs are
// streamed and read in parallel (one per rank, say); --partial writes the aggregation state
// for `qprof merge` instead of finishing the analysis. A Profile JSON report (`--json` of an
// earlier analyze) is read back as it is, as `qprof diff` does.
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "analysis/aggregate/kernel_name.h"
#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/analysis_inputs.h"
#include "cli/analysis_request.h"
#include "cli/command.h"
#include "cli/profile_output.h"
#include "fmt/core.h"
#include "reports/json/json_report.h"
#include "reports/perfetto/perfetto_export.h"

namespace qprof::cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> inputs;
  ProfileArgs out;
  std::string perfetto_out;
  std::string partial_out;
  std::string ncu_csv;
  std::vector<std::string> graph_captures;
};

// Imported traces carry no attribution on their records; the Perfetto file gets the
// analysis's (class, role, format, evidence of each kernel's row), as our own traces do, and
// every kernel the name its row has in qprof's tables (`qprof_name`) beside the raw name the
// event carries, so a row of the summary finds its events.
void AttributeForPerfetto(const proto::Profile& profile, std::vector<proto::Trace>& traces) {
  std::map<std::string, const proto::KernelRow*> rows;
  for (const proto::KernelRow& k : profile.kernels()) rows[k.name()] = &k;
  std::map<std::string, const proto::KernelRow*> by_raw;  // normalising is not free
  for (proto::Trace& t : traces) {
    for (proto::Activity& a : *t.mutable_activities()) {
      if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
      const std::string& raw = a.name().empty() ? a.mangled_name() : a.name();
      auto it = by_raw.find(raw);
      if (it == by_raw.end()) {
        auto row = rows.find(aggregate::NormaliseKernelName(raw));
        it = by_raw.emplace(raw, row == rows.end() ? nullptr : row->second).first;
      }
      const proto::KernelRow* row = it->second;
      if (row == nullptr) continue;
      (*a.mutable_args())["qprof_name"] = row->name();
      if (!a.attribution().pipe_class().empty()) continue;  // our own traces say it already
      proto::Attribution* at = a.mutable_attribution();
      at->set_pipe_class(row->class_());
      at->set_role(row->role());
      at->set_format(row->format());
      at->set_evidence(row->evidence());
      at->set_evidence_detail(row->evidence_detail());
    }
  }
}

// A single Profile JSON report: read back and reported again (summary, --json, --html,
// --csv). What would change the analysis needs the traces.
absl::Status RunOnProfileJson(const AnalyzeArgs& args) {
  if (args.inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        args.inputs[0], ": a Profile JSON report is analysed already and cannot be combined "
                        "with other inputs; give the traces instead"));
  }
  const std::string& path = args.inputs[0];
  for (const auto& [given, name] :
       {std::pair<bool, const char*>{!args.ncu_csv.empty(), "--ncu"},
        {!args.perfetto_out.empty(), "--perfetto"}, {!args.partial_out.empty(), "--partial"},
        {!args.out.sass_files.empty(), "--sass"}, {!args.out.device.empty(), "--device"},
        {!args.out.model.empty(), "--model-shape"}}) {
    if (given) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": a Profile JSON report is analysed already; ", name, " needs the trace"));
    }
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  ASSIGN_OR_RETURN(proto::Profile profile, reports::ProfileFromJson(text, path));
  if (!args.out.label.empty()) profile.set_label(args.out.label);
  return WriteProfileOutputs(profile, args.out);
}

absl::Status RunAnalyze(const AnalyzeArgs& args) {
  RETURN_IF_ERROR(CheckStdout(args.out));
  for (const std::string& in : args.inputs) {
    if (LooksLikeProfileJson(in)) return RunOnProfileJson(args);
  }
  AnalysisRequest request = RequestFor(args.out);
  request.inputs = args.inputs;
  request.ncu_csv = args.ncu_csv;
  request.graph_captures = args.graph_captures;
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsForRequest(request));
  // --perfetto lists every event, so it holds the traces in memory (as --ncu does); they are
  // written after the analysis, which gives each imported kernel its class and role.
  std::vector<proto::Trace> traces;
  WholeTracesFn keep;
  if (!args.perfetto_out.empty()) {
    keep = [&traces](const std::vector<const proto::Trace*>& whole) -> absl::Status {
      for (const proto::Trace* t : whole) traces.push_back(*t);
      return absl::OkStatus();
    };
  }
  ASSIGN_OR_RETURN(aggregate::ProfileState state, AccumulateRequest(request, keep));
  if (!args.partial_out.empty()) {
    RETURN_IF_ERROR(aggregate::WritePartialFile(state, args.partial_out));
    fmt::print(stderr, "qprof: wrote {} (partial profile of {} traces, {} kernels; finish it "
               "with `qprof merge`)\n", args.partial_out, state.traces.size(), state.groups.size());
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(proto::Profile profile, AnalyzeState(state, options));
  ReportFiles files;
  if (!args.perfetto_out.empty()) {
    AttributeForPerfetto(profile, traces);
    std::vector<const proto::Trace*> ptrs;
    for (const proto::Trace& t : traces) ptrs.push_back(&t);
    RETURN_IF_ERROR(files.Add(args.perfetto_out, reports::TracesToPerfettoJson(ptrs),
                              "(open it in ui.perfetto.dev)"));
  }
  return WriteProfileOutputs(profile, args.out, &files);
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
  cmd->callback([args, &runner] { runner.action = [args] { return RunAnalyze(*args); }; });
}

}  // namespace qprof::cli
