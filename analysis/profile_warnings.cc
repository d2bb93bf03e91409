#include "analysis/profile_warnings.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/input_warnings.h"
#include "proto/vocabulary.h"

namespace qprof {

using aggregate::GroupVerdict;
using aggregate::KernelGroup;
using aggregate::ProfileState;

void Warn(proto::Profile* p, const std::string& code, const std::string& message) {
  proto::Warning* w = p->add_warnings();
  w->set_code(code);
  w->set_message(message);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

namespace {

// Step 7, warnings: what each input's collector or importer reported.
void WarnInputs(const ProfileState& state, proto::Profile* profile) {
  for (const aggregate::TraceState& t : state.traces) {
    const proto::CollectorStats& c = t.header.collector();
    const std::string src = BaseName(t.header.source_path());
    if (c.records_dropped() > 0) {
      Warn(profile, "records_dropped", absl::StrCat(src, ": the collector dropped ",
                                                    c.records_dropped(),
                                                    " records; totals are lower bounds"));
    }
    if (c.records_invalid() > 0) {
      Warn(profile, "records_invalid",
           absl::StrCat(src, ": ", c.records_invalid(),
                        " records with invalid timestamps were skipped"));
    }
    if (c.metrics_requested() && !c.metrics_available()) {
      Warn(profile, "metrics_unavailable",
           absl::StrCat(src, ": per-kernel metrics were requested but are unavailable: ",
                        c.metrics_unavailable_reason().empty() ? "no reason given"
                                                               : c.metrics_unavailable_reason()));
    }
    if (t.truncated) {
      Warn(profile, "truncated",
           absl::StrCat(src, ": input is truncated (", t.truncation_detail,
                        "); the analysis covers the readable prefix"));
    }
    for (const std::string& w : c.warnings()) {
      Warn(profile, "collector", absl::StrCat(src, ": ", w));
    }
  }
}

// Step 7, warnings: roles from launch contexts without a pipe class, and kernels whose launch
// could not be found.
void WarnLaunchContexts(const ProfileState& state, proto::Profile* profile) {
  std::vector<const proto::TraceHeader*> headers;
  for (const aggregate::TraceState& t : state.traces) headers.push_back(&t.header);
  uint64_t context_only = 0, context_only_time = 0;
  for (const auto& k : profile->kernels()) {
    if (k.evidence() == evidence::kLaunchContext && k.class_() == pipe::kOther) {
      ++context_only;
      context_only_time += k.time_ns();
    }
  }
  const uint64_t kernel_time = profile->totals().kernel_time_ns();
  if (context_only > 0) {
    Warn(profile, "class_unknown",
         absl::StrFormat("%d kernels (%.1f%% of kernel time) have a role from their launch "
                         "context but no evidence for their pipe class (no metric, SASS, "
                         "registry entry or name rule); they count as class \"other\" (%s)",
                         context_only,
                         kernel_time ? 100.0 * context_only_time / kernel_time : 0.0,
                         AttributeHint(headers)));
  }
  bool joined = false;
  for (const aggregate::TraceState& t : state.traces) {
    const proto::GraphCaptureJoin& j = t.header.launch_context_stats().graph_capture();
    joined |= j.kernels() > 0;
    if (j.unmatched() == 0) continue;
    Warn(profile, "graph_capture_unmatched",
         absl::StrCat(BaseName(t.header.source_path()), ": ", j.unmatched(), " of ", j.kernels(),
                      " graph-replay kernels found no launch of theirs in the capture and keep "
                      "the graph launch's context (their roles come from their names): ",
                      absl::StrJoin(j.notes(), "; ")));
  }
  if (!joined && state.launch_counts.graph_launches > 0) {
    Warn(profile, "graph_replays",
         absl::StrCat(state.launch_counts.graph_launches,
                      " kernels ran in CUDA-graph replays, whose launch context is the graph "
                      "launch's: their roles come from their names. A profile taken while the "
                      "graphs were captured gives them their own (analyze --graph-capture "
                      "CAPTURE, Kineto), as does nsys --cuda-graph-trace=node"));
  }
  for (const aggregate::TraceState& t : state.traces) {
    const auto& cs = t.header.launch_context_stats();
    if (cs.no_launch_record() > 0) {
      Warn(profile, "launch_context_missing",
           absl::StrCat(BaseName(t.header.source_path()), ": ", cs.no_launch_record(), " of ",
                        cs.kernels(), " kernels have no launch event with their correlation id "
                        "(launched before the capture began, or the CPU side was not traced): "
                        "no launch context, their roles come from their names"));
    }
  }
}

// Step 7, warnings: what the analysis itself could not do.
void WarnAnalysis(const ProfileState& state, const DeviceChoice& device, uint64_t with_metrics,
                  proto::Profile* profile) {
  const proto::Totals& totals = profile->totals();
  std::vector<const proto::TraceHeader*> headers;
  for (const aggregate::TraceState& t : state.traces) headers.push_back(&t.header);
  if (with_metrics == 0 && totals.kernel_count() > 0 &&
      profile->provenance() != proto::PROVENANCE_MODELLED) {  // a model has no counters
    Warn(profile, "metrics_unavailable", MetricsUnavailableMessage(headers));
  }
  if (!device.spec) Warn(profile, "device_unknown", DeviceUnknownMessage(headers));
  if (std::string mixed = MixedVendorsMessage(headers); !mixed.empty()) {
    Warn(profile, "vendors_mixed", mixed);
  }
  if (device.spec && profile->provenance() == proto::PROVENANCE_MEASURED_HOST) {
    Warn(profile, "device_mismatch",
         absl::StrCat("times were measured on the host CPU; roofline bounds use ", device.spec->name,
                      device.host_default
                          ? " (the default projection device; --device NAME to change)"
                          : "",
                      " figures, so \"at roofline\" compares a CPU time with a GPU bound"));
  }
  if (state.dropped_negative > 0) {
    Warn(profile, "records_invalid", absl::StrCat(state.dropped_negative,
                                                  " kernel launches with end < start were ignored"));
  }
  if (totals.busy_time_error_ns() > 0) {
    Warn(profile, "busy_time_approximate",
         absl::StrFormat("kernels arrived far out of time order: busy time may be up to %d ns "
                         "larger than reported",
                         totals.busy_time_error_ns()));
  }
  WarnLaunchContexts(state, profile);
}

// Step 7, warnings: kernels the ingest put on the other side of the comm / compute split than
// their final class (measured tensor-pipe activity or SASS can class an NCCL kernel "tensor";
// a registry entry passed to the analysis can make a kernel comm), and late records.
void WarnCommSplit(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                   proto::Profile* profile) {
  uint64_t as_comm = 0, as_compute = 0, time = 0;
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const bool comm = verdicts[i].attribution.pipe_class() == pipe::kComm;
    if (comm == state.groups[i].comm) continue;
    (state.groups[i].comm ? as_comm : as_compute) += 1;
    time += state.groups[i].time_ns;
  }
  if (as_comm + as_compute > 0) {
    Warn(profile, "comm_split_differs",
         absl::StrFormat("%d kernels counted as communication at ingest (registry attribution or "
                         "name rules) are classed otherwise, and %d the other way round (%d ns "
                         "of kernel time); the exposed and hidden communication figures count "
                         "them as the ingest did",
                         as_comm, as_compute, time));
  }
  if (profile->comm().error_ns() > 0) {
    Warn(profile, "comm_overlap_approximate",
         absl::StrFormat("records arrived far out of time order: the exposed and hidden "
                         "communication and copy figures may be off by up to %d ns",
                         profile->comm().error_ns()));
  }
}

// Step 7, warnings: launches whose op call's shapes did not add up, MoE calls that need
// the model's shape, and the assumption the model's work rests on.
void WarnWork(const ProfileState& state, const AnalyzeOptions& options, proto::Profile* profile) {
  uint64_t invalid = 0;
  std::string example;
  for (const KernelGroup& g : state.groups) {
    if (g.shape_invalid == 0) continue;
    if (invalid == 0 || g.shape_invalid_example < example) example = g.shape_invalid_example;
    invalid += g.shape_invalid;
  }
  if (invalid > 0) {
    Warn(profile, "work_shapes_invalid",
         absl::StrCat(invalid, " kernel launches carry no work: the shapes their op call "
                      "recorded do not add up (the first: ", example, ")"));
  }
  uint64_t needs = 0, modelled = 0;
  for (const proto::KernelRow& k : profile->kernels()) {
    if (absl::StrContains(k.work_note(), "--model-shape")) ++needs;
    if (absl::StartsWith(k.work_source(), work::work_source::kModel)) ++modelled;
  }
  if (needs > 0) {
    Warn(profile, "work_needs_model",
         absl::StrCat(needs, " kernel rows launched by MoE calls carry no work: the expert "
                      "weights a call reads depend on the model; pass --model-shape "
                      "config.json (a Hugging Face config)"));
  }
  if (modelled > 0 && options.model && options.model->shape) {
    const work::ModelShape& m = *options.model->shape;
    profile->add_notes(absl::StrFormat(
        "MoE work modelled from %s (%s: %d experts, top-%d, hidden %d, intermediate %d, %s at "
        "%.4g bits per weight%s): the expected distinct experts of T tokens are "
        "E*(1-(1-k/E)^T), an assumption of uniform routing (real routers are skewed: fewer "
        "distinct experts read fewer bytes)",
        m.path, m.name, m.experts, m.top_k, m.hidden, m.moe_inter, m.format, m.bits_per_weight,
        m.tp > 1 ? absl::StrFormat(", intermediate split over %d GPUs", m.tp) : ""));
  }
}

void WarnUnknownKernels(const ProfileState& state, proto::Profile* profile) {
  uint64_t unknown_time = 0;
  for (const auto& k : profile->kernels()) {
    if (k.evidence() == evidence::kUnknown) {
      profile->add_unknown_kernels(k.name());
      unknown_time += k.time_ns();
    }
  }
  if (profile->unknown_kernels_size() == 0) return;
  const uint64_t total = profile->totals().kernel_time_ns();
  double share = total ? static_cast<double>(unknown_time) / static_cast<double>(total) : 0;
  std::vector<const proto::TraceHeader*> headers;
  for (const aggregate::TraceState& t : state.traces) headers.push_back(&t.header);
  Warn(profile, "unknown_kernels",
       absl::StrFormat("%d kernels (%.1f%% of kernel time) could not be attributed: no metric, "
                       "SASS, registry entry or name rule; they are counted as class \"other\" "
                       "and listed in unknown_kernels (%s)",
                       profile->unknown_kernels_size(), 100 * share, AttributeHint(headers)));
}

}  // namespace

void AddWarnings(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                 const DeviceChoice& device, const AnalyzeOptions& options,
                 uint64_t with_metrics, proto::Profile* profile) {
  WarnInputs(state, profile);
  WarnAnalysis(state, device, with_metrics, profile);
  WarnCommSplit(state, verdicts, profile);
  WarnWork(state, options, profile);
  WarnUnknownKernels(state, profile);
}

// A span past 2^53 ns (104 days) is a trace whose bulk itself spans that long or mixes
// clocks the importers could not tell apart: the JSON report still writes it exact
// (reports/json/json_numbers.h), and says that a reader parsing doubles rounds it.
void WarnSpanBeyondJson(proto::Profile* profile) {
  constexpr uint64_t kTwoTo53 = uint64_t{1} << 53;
  const uint64_t span = std::max(profile->totals().span_ns(), profile->idle().span_ns());
  if (span <= kTwoTo53) return;
  Warn(profile, "span_beyond_2_53",
       absl::StrFormat("the traces span %d ns (%.0f days), beyond 2^53 ns: the figures are "
                       "exact in the JSON report, but a reader that parses numbers as doubles "
                       "rounds them; the timestamps likely mix two clocks",
                       span, static_cast<double>(span) / 86400e9));
}

}  // namespace qprof
