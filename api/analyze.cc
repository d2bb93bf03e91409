#include "api/analyze.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/aggregate/partial.h"
#include "analysis/ceilings/ceilings.h"
#include "analysis/importers/import.h"
#include "analysis/names/kernel_name.h"
#include "analysis/replay_layers.h"
#include "analysis/sass/sass_parser.h"
#include "api/inputs.h"
#include "base/absl_fmt.h"
#include "base/status_macros.h"
#include "fmt/core.h"
#include "reports/perfetto/perfetto_export.h"

namespace qprof::api {
namespace {

// Inputs read at once: more threads than this is a typo, not a machine.
constexpr int kMaxThreads = 4096;

void Note(const AnalyzeRequest& request, const std::string& line) {
  if (request.on_note) request.on_note(line);
}

// --ncu needs every record in memory: the ncu rows join onto launches by name and order.
absl::StatusOr<aggregate::ProfileState> AccumulateWhole(
    const AnalyzeRequest& request, const WholeTracesFn& whole_traces,
    const std::shared_ptr<const importers::GraphCaptureSet>& captures) {
  std::vector<proto::Trace> traces;
  for (const std::string& in : request.inputs) {
    ASSIGN_OR_RETURN(proto::Trace t, LoadTraceInput(in, captures));
    traces.push_back(std::move(t));
  }
  if (!request.ncu_csv.empty()) {
    for (proto::Trace& t : traces) {
      importers::NcuJoinStats st;
      RETURN_IF_ERROR(importers::JoinNcuMetrics(&t, request.ncu_csv, &st));
      Note(request, fmt::format("{}: joined {} of {} ncu kernel rows onto {} trace kernels",
                                request.ncu_csv, st.matched, st.ncu_kernels, st.trace_kernels));
    }
  }
  if (whole_traces) {
    std::vector<const proto::Trace*> ptrs;
    for (const proto::Trace& t : traces) ptrs.push_back(&t);
    RETURN_IF_ERROR(whole_traces(ptrs));
  }
  aggregate::ProfileState state;
  for (const proto::Trace& t : traces) aggregate::AccumulateTrace(t, &state);
  return state;
}

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
        auto row = rows.find(names::NormaliseKernelName(raw));
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

// A single Profile JSON report: read back as it is. What would change the analysis needs
// the traces.
absl::StatusOr<AnalyzeResult> AnalyzeProfileReport(const AnalyzeRequest& request) {
  if (request.inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        request.inputs[0], ": a Profile JSON report is analysed already and cannot be combined "
                           "with other inputs; give the traces instead"));
  }
  const std::string& path = request.inputs[0];
  for (const auto& [given, name] :
       {std::pair<bool, const char*>{!request.ncu_csv.empty(), "--ncu"},
        {request.perfetto, "--perfetto"}, {!request.sass_paths.empty(), "--sass"},
        {!request.device.empty(), "--device"}, {!request.model.empty(), "--model-shape"}}) {
    if (given) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": a Profile JSON report is analysed already; ", name, " needs the trace"));
    }
  }
  AnalyzeResult result;
  ASSIGN_OR_RETURN(result.profile, ReadProfileReport(path));
  if (!request.label.empty()) result.profile.set_label(request.label);
  result.from_report = true;
  return result;
}

// --model-shape's layer model for graph replays without a capture; null without a model, or
// (with a note saying why) when the config does not describe its layers.
absl::StatusOr<std::shared_ptr<const importers::LayerModel>> LayerModelOf(
    const AnalyzeRequest& request) {
  if (request.model.empty()) {
    if (request.batch > 0 || request.tp > 0) {
      return absl::InvalidArgumentError(
          "--batch and --tp size the layers --model-shape models: pass --model-shape CONFIG");
    }
    return std::shared_ptr<const importers::LayerModel>();
  }
  ASSIGN_OR_RETURN(ceilings::ModelConfig config, ceilings::LoadModelConfig(request.model));
  if (!config.shape) return std::shared_ptr<const importers::LayerModel>();
  auto layers = LayerModelFor(*config.shape, request.batch, request.tp);
  if (!layers.ok()) {
    Note(request, std::string(layers.status().message()));
    return std::shared_ptr<const importers::LayerModel>();
  }
  return *std::move(layers);
}

}  // namespace

absl::StatusOr<AnalyzeOptions> OptionsFor(const AnalyzeRequest& request) {
  AnalyzeOptions options;
  options.known_kernels = RegistryKnownKernels();
  options.device = request.device;
  options.top_n = request.top;
  options.label = request.label;
  options.tokens = request.tokens;
  options.steps = request.steps;
  if (!request.model.empty()) {
    ASSIGN_OR_RETURN(options.model, ceilings::LoadModelConfig(request.model));
  }
  for (const std::string& path : request.sass_paths) {
    ASSIGN_OR_RETURN(sass::SassOfPath sass, sass::SassStatsForPath(path));
    Note(request, fmt::format("{}: SASS of {} kernels{}", path, sass.stats.size(),
                              sass.files.size() > 1 || sass.files[0] != path
                                  ? fmt::format(" from {} cubins", sass.files.size())
                                  : ""));
    for (const std::string& why : sass.skipped) Note(request, absl::StrCat("skipped ", why));
    options.sass_stats.insert(options.sass_stats.end(), sass.stats.begin(), sass.stats.end());
    options.sass_sources.push_back(path);
  }
  return options;
}

absl::StatusOr<aggregate::ProfileState> Accumulate(const AnalyzeRequest& request,
                                                   const WholeTracesFn& whole_traces) {
  if (request.inputs.empty()) return absl::InvalidArgumentError("no traces to analyse");
  if (request.threads < 0 || request.threads > kMaxThreads) {
    return absl::InvalidArgumentError(absl::StrCat("--threads ", request.threads,
                                                   ": out of range 0 to ", kMaxThreads,
                                                   " (0 = one per core; 1 = the calling thread)"));
  }
  RETURN_IF_ERROR(CheckDistinctInputs(request.inputs));
  ASSIGN_OR_RETURN(auto captures, LoadGraphCaptures(request.graph_captures));
  if (!request.ncu_csv.empty() || whole_traces) {
    return AccumulateWhole(request, whole_traces, captures);
  }
  AccumulateOptions options;
  options.progress = request.progress;
  options.threads = request.threads;
  options.graph_captures = std::move(captures);
  ASSIGN_OR_RETURN(options.layer_model, LayerModelOf(request));
  return AccumulateInputs(request.inputs, options);
}

absl::StatusOr<AnalyzeResult> Analyze(const AnalyzeRequest& request) {
  if (request.inputs.empty()) return absl::InvalidArgumentError("no traces to analyse");
  for (const std::string& in : request.inputs) {
    if (LooksLikeProfileJson(in)) return AnalyzeProfileReport(request);
  }
  ASSIGN_OR_RETURN(AnalyzeOptions options, OptionsFor(request));
  return AnalyzeWith(request, options);
}

absl::StatusOr<AnalyzeResult> AnalyzeWith(const AnalyzeRequest& request,
                                          const AnalyzeOptions& options) {
  // The Perfetto export lists every event, so it holds the traces in memory (as --ncu
  // does); they are rendered after the analysis, which gives each imported kernel its
  // class and role.
  std::vector<proto::Trace> traces;
  WholeTracesFn keep;
  if (request.perfetto) {
    keep = [&traces](const std::vector<const proto::Trace*>& whole) -> absl::Status {
      for (const proto::Trace* t : whole) traces.push_back(*t);
      return absl::OkStatus();
    };
  }
  ASSIGN_OR_RETURN(aggregate::ProfileState state, Accumulate(request, keep));
  AnalyzeResult result;
  ASSIGN_OR_RETURN(result.profile, AnalyzeState(state, options));
  if (request.perfetto) {
    AttributeForPerfetto(result.profile, traces);
    std::vector<const proto::Trace*> ptrs;
    for (const proto::Trace& t : traces) ptrs.push_back(&t);
    result.perfetto_json = reports::TracesToPerfettoJson(ptrs);
  }
  return result;
}

absl::StatusOr<PartialResult> AnalyzePartial(const AnalyzeRequest& request) {
  for (const std::string& in : request.inputs) {
    if (LooksLikeProfileJson(in)) {
      return absl::InvalidArgumentError(absl::StrCat(
          in, ": a Profile JSON report is analysed already; --partial needs the trace"));
    }
  }
  ASSIGN_OR_RETURN(aggregate::ProfileState state, Accumulate(request));
  PartialResult out;
  ASSIGN_OR_RETURN(out.bytes, aggregate::PartialBytes(state));
  out.summary = fmt::format("partial profile of {} traces, {} kernels", state.traces.size(),
                            state.groups.size());
  return out;
}

}  // namespace qprof::api
