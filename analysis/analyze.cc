#include "analysis/analyze.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "analysis/aggregate/decode_tokens.h"
#include "analysis/aggregate/group_work.h"
#include "analysis/aggregate/replay_work.h"
#include "analysis/aggregate/tables.h"
#include "analysis/other_class.h"
#include "analysis/ceilings/comm_diagnosis.h"
#include "analysis/ceilings/role_ceilings.h"
#include "analysis/classify/context_rules.h"
#include "analysis/classify/name_rules.h"
#include "analysis/classify/rate_evidence.h"
#include "analysis/device_choice.h"
#include "analysis/devices/device_specs.h"
#include "analysis/input_warnings.h"
#include "analysis/profile_warnings.h"
#include "analysis/occupancy/device_limits.h"
#include "analysis/occupancy/diagnosis.h"
#include "analysis/work/roofs.h"
#include "base/status_macros.h"
#include "proto/vocabulary.h"

namespace qprof {
namespace {

using aggregate::GroupVerdict;
using aggregate::KernelGroup;
using aggregate::ProfileState;

// "at compressed byte 1234" / "at byte 1234" from an importer's truncation detail ("...:
// truncated gzip stream (ended at compressed byte 1234)"), else the detail in parentheses.
std::string CutPlace(const std::string& detail) {
  for (std::string_view key : {"compressed byte ", "byte "}) {
    const size_t at = detail.find(key);
    if (at == std::string::npos) continue;
    size_t end = at + key.size();
    while (end < detail.size() && detail[end] >= '0' && detail[end] <= '9') ++end;
    if (end > at + key.size()) return absl::StrCat("at ", detail.substr(at, end - at));
  }
  return absl::StrCat("(", detail, ")");
}

// Step 2: sources, run information and the provenance of the totals.
void DescribeInputs(const ProfileState& state, const AnalyzeOptions& options,
                    proto::Profile* profile) {
  std::vector<std::string> provenances;
  for (const aggregate::TraceState& t : state.traces) {
    const proto::TraceHeader& h = t.header;
    proto::Source* s = profile->add_sources();
    s->set_path(h.source_path());
    s->set_kind(h.source_kind());
    s->set_provenance(std::string(ProvenanceLabel(h.provenance())));
    s->set_kernel_count(t.kernel_records);
    s->set_truncated(t.truncated);
    std::string prov = ProvenanceWithSource(h.provenance(), h.source_path());
    if (std::find(provenances.begin(), provenances.end(), prov) == provenances.end()) {
      provenances.push_back(std::move(prov));
    }
    for (const std::string& n : h.notes()) profile->add_notes(n);
  }
  // A profile has no timeline when none of its inputs has one.
  bool all_without = !state.traces.empty();
  for (const aggregate::TraceState& t : state.traces) all_without &= !t.header.no_timeline().empty();
  if (all_without) profile->set_no_timeline(state.traces[0].header.no_timeline());
  for (const std::string& path : options.sass_sources) {
    proto::Source* s = profile->add_sources();
    s->set_path(path);
    s->set_kind("sass");
    s->set_provenance("static SASS");
  }
  const proto::TraceHeader& first = state.traces[0].header;
  *profile->mutable_run() = first.run();
  *profile->mutable_collector() = first.collector();
  profile->set_provenance(first.provenance());
  profile->set_provenance_label(std::string(ProvenanceLabel(first.provenance())));
  profile->mutable_totals()->set_provenance(absl::StrJoin(provenances, "; "));
}

// Step 3a: the kernel row of each group. Groups are one name launched from one context
// verdict; a verdict whose role replaces the name's (classify/context_rules.h:
// ContextRoleWins; never for our own kernels or registry matches) makes a row of its own per
// role, the other groups of the name share the name's row.
struct KernelRowPlan {
  std::vector<uint32_t> row_of_group;
  std::vector<uint32_t> rep_group;  // per row: the group holding the row's first launch
};

KernelRowPlan PlanRows(const ProfileState& state, const classify::Classifier& classifier) {
  KernelRowPlan plan;
  plan.row_of_group.resize(state.groups.size());
  std::unordered_map<std::string, uint32_t> row_of;
  struct NameInfo {
    std::string name_role;  // role the name rules give ("" = none)
    bool registry = false;  // one of our kernels by name
  };
  std::unordered_map<std::string, NameInfo> names;
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const KernelGroup& g = state.groups[i];
    std::string key = g.name;
    if (g.context != 0 && g.context <= state.contexts.size() && !g.own) {
      const classify::ContextVerdict& v = state.contexts[g.context - 1];
      auto n = names.find(g.name);
      if (!v.role.empty() && n == names.end()) {
        NameInfo info;
        info.name_role = classify::MatchNameRules(g.name).role;
        info.registry = classifier.FindKnown(g.rep, g.name) != nullptr;
        n = names.emplace(g.name, std::move(info)).first;
      }
      if (!v.role.empty() && !n->second.registry && classify::ContextRoleWins(v, n->second.name_role)) {
        key += '\x1f' + v.role;
      }
    }
    auto [it, inserted] = row_of.emplace(std::move(key), static_cast<uint32_t>(plan.rep_group.size()));
    if (inserted) plan.rep_group.push_back(static_cast<uint32_t>(i));
    const uint32_t r = it->second;
    plan.row_of_group[i] = r;
    const KernelGroup& rep = state.groups[plan.rep_group[r]];
    if (g.launches > 0 && (rep.launches == 0 || g.rep_key < rep.rep_key)) {
      plan.rep_group[r] = static_cast<uint32_t>(i);
    }
  }
  return plan;
}

// Step 3b: one attribution per kernel row, from its first launch with the time-weighted mean
// of the measured tensor-pipe share over all its launches, and the launch-context verdict of
// that first launch.
// The work from shapes of each kernel row's launches, for the rate evidence
// (classify/rate_evidence.h): FLOPs and time of the launches that carry work, and whether
// any of it is narrower than 32 bits (or of unknown precision).
std::vector<classify::RowWork> RowWorks(const ProfileState& state, const KernelRowPlan& plan,
                                        const work::ModelShape* shape) {
  std::vector<classify::RowWork> rows(plan.rep_group.size());
  for (classify::RowWork& r : rows) r.sub_word = false;
  std::vector<double> best(rows.size(), -1);
  for (size_t i = 0; i < state.groups.size(); ++i) {
    classify::RowWork& r = rows[plan.row_of_group[i]];
    const aggregate::GroupWork w = aggregate::WorkOfGroup(state.groups[i], shape);
    for (const aggregate::GroupWork::Entry& e : w.entries) {
      if (!e.pipe.empty() || e.flops <= 0) continue;  // registry work models: not from shapes
      r.flops += e.flops * static_cast<double>(e.launches);
      r.time_ns += e.time_ns;
      r.launches += e.launches;
      // Conservative: one narrow (or unknown) part gives the whole row the higher roof.
      r.sub_word |= !(e.precision == "fp32" || e.precision == "tf32" || e.precision == "fp64");
    }
    if (w.from_shapes || w.from_model) {
      if (w.time_ns > best[plan.row_of_group[i]]) {
        best[plan.row_of_group[i]] = w.time_ns;
        r.source = w.source;
      }
    }
  }
  for (classify::RowWork& r : rows) {
    if (r.launches == 0) r.sub_word = true;
  }
  return rows;
}

std::vector<GroupVerdict> AttributeKernels(const ProfileState& state,
                                           const AnalyzeOptions& options,
                                           const devices::DeviceSpec* device,
                                           uint64_t* with_metrics) {
  classify::ClassifyOptions co;
  co.known_kernels = options.known_kernels;
  for (const sass::SassKernelStats& s : options.sass_stats) {
    co.sass.push_back({s.name, s.demangled, s.pipe_class, s.detail});
  }
  classify::Classifier classifier(std::move(co));
  const KernelRowPlan plan = PlanRows(state, classifier);
  const size_t rows = plan.rep_group.size();
  const std::vector<classify::RowWork> row_works =
      device != nullptr
          ? RowWorks(state, plan,
                     options.model && options.model->shape ? &*options.model->shape : nullptr)
          : std::vector<classify::RowWork>();
  // The metrics representative and the tensor-pipe sums over each row's groups.
  std::vector<const KernelGroup*> metrics_rep(rows, nullptr);
  std::vector<double> tp_sum(rows, 0), tp_weight(rows, 0);
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const KernelGroup& g = state.groups[i];
    const uint32_t r = plan.row_of_group[i];
    tp_sum[r] += g.class_tp_sum;
    tp_weight[r] += g.class_tp_weight;
    if (g.has_metrics_rep && (metrics_rep[r] == nullptr || g.metrics_key < metrics_rep[r]->metrics_key)) {
      metrics_rep[r] = &g;
    }
  }
  std::vector<GroupVerdict> by_row(rows);
  *with_metrics = 0;
  for (size_t r = 0; r < rows; ++r) {
    const KernelGroup& g = state.groups[plan.rep_group[r]];
    proto::Activity rep = g.rep;
    if (!rep.metrics().has_tensor_pipe_pct() && metrics_rep[r] != nullptr) {
      *rep.mutable_metrics() = metrics_rep[r]->metrics_rep;
    }
    if (tp_weight[r] > 0) {
      rep.mutable_metrics()->set_tensor_pipe_pct(tp_sum[r] / tp_weight[r]);
      ++*with_metrics;
    } else if (rep.metrics().has_tensor_count()) {
      ++*with_metrics;
    }
    const classify::ContextVerdict* context =
        g.context != 0 && g.context <= state.contexts.size() ? &state.contexts[g.context - 1]
                                                             : nullptr;
    proto::Attribution& a = by_row[r].attribution;
    a = classifier.Classify(rep, g.name, context);
    if (device != nullptr) classify::ApplyRateEvidence(row_works[r], *device, &a);
    // Nothing from a modelled trace is measured or registry: its times come from the model,
    // whatever matched the name (the class and role may still come from that match).
    if (state.traces[g.rep_key.trace].header.provenance() == proto::PROVENANCE_MODELLED &&
        a.evidence() != evidence::kModelled) {
      a.set_evidence_detail(
          absl::StrCat("modelled trace; class from ", a.evidence(), ": ", a.evidence_detail()));
      a.set_evidence(std::string(evidence::kModelled));
    }
    if (!rep.kernel_id().empty()) {
      by_row[r].kernel_id = rep.kernel_id();
    } else if (const classify::KnownKernel* k = classifier.FindKnown(rep, g.name)) {
      by_row[r].kernel_id = k->kernel_id;
    }
    by_row[r].row = static_cast<uint32_t>(r);
  }
  std::vector<GroupVerdict> out(state.groups.size());
  for (size_t i = 0; i < state.groups.size(); ++i) out[i] = by_row[plan.row_of_group[i]];
  return out;
}

// Step 3c: the run's weight format when the traces do not record it, read from the formats
// the names of its weight-GEMM and MoE kernels tell (name rules), by kernel time. A 4- or
// 8-bit format names the checkpoint over the 16-bit layers a quantized model keeps
// (attention projections, the LM head): an MXFP4 MoE beside BF16 attention is an MXFP4 run.
void InferFormat(proto::Profile* profile) {
  if (!profile->run().format().empty()) return;
  struct Seen {
    uint64_t time = 0;
    int kernels = 0;
  };
  std::map<std::string, Seen> seen;
  uint64_t weight_time = 0;
  for (const proto::KernelRow& k : profile->kernels()) {
    if (k.role() != role::kMoeExperts && k.role() != role::kGemmDense) continue;
    weight_time += k.time_ns();
    if (k.format().empty() || k.format() == format::kUnknown || k.format() == format::kFp32) {
      continue;
    }
    Seen& s = seen[k.format()];
    s.time += k.time_ns();
    ++s.kernels;
  }
  const std::string* best = nullptr;
  for (bool quantized : {true, false}) {
    for (const auto& [f, s] : seen) {
      const bool q = f != format::kBf16 && f != format::kFp16;
      if (q == quantized && (best == nullptr || s.time > seen[*best].time)) best = &f;
    }
    if (best != nullptr) break;
  }
  if (best == nullptr) return;
  const uint64_t total = profile->totals().kernel_time_ns();
  std::string others;
  for (const auto& [f, s] : seen) {
    if (f == *best) continue;
    absl::StrAppend(&others, others.empty() ? "; also " : ", ", f, " ",
                    absl::StrFormat("%.1f%%", total ? 100.0 * s.time / total : 0.0));
  }
  const Seen& b = seen[*best];
  profile->set_format_inferred(*best);
  profile->set_format_inferred_from(absl::StrFormat(
      "inferred from kernel names (the trace records no format): %s in %d weight-GEMM/MoE "
      "kernels, %.1f%% of kernel time (%.1f%% of weight-GEMM/MoE time)%s",
      *best, b.kernels, total ? 100.0 * b.time / total : 0.0,
      weight_time ? 100.0 * b.time / weight_time : 0.0, others));
}

// Roofline time of one launch on `d`: max(bytes / BW, flops / rate of its compute pipe);
// -1 when the device lacks the pipe.
double RooflineNs(const aggregate::LaunchWork& w, const devices::DeviceSpec& d) {
  double bw = d.EffectiveBandwidthGbps();  // bytes/ns
  double mem = bw > 0 ? w.bytes / bw : 0;
  double cmp = 0;
  if (w.flops > 0) {
    double rate = d.PipeTflops(w.pipe) * 1e3;  // FLOP/ns
    if (rate <= 0) return -1;
    cmp = w.flops / rate;
  }
  return std::max(mem, cmp);
}

// Roofline time of a group's launches from their shape-derived work (every launch with end
// >= start must carry some, with bytes); -1 otherwise.
double ShapeRooflineNs(const KernelGroup& g, const aggregate::GroupWork& w, const std::string& cls,
                       const devices::DeviceSpec& device) {
  if (w.launches == 0 || w.launches != g.calls || g.calls != g.launches || !w.bytes_known) return -1;
  double roof = 0;
  for (const aggregate::GroupWork::Entry& e : w.entries) {
    const std::string pipe = !e.pipe.empty() ? e.pipe : work::RoofPipe(cls, e.precision, e.flops);
    const double t = work::RoofTimeNs(device, e.flops, e.bytes, pipe);
    if (t < 0) return -1;
    roof += t * static_cast<double>(e.launches);
  }
  return roof;
}

// Step 4: roofline time per role and class, for those whose every launch has a work model
// (the registry's, per launch) or a work from its op call's shapes.
void AddRooflines(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                  const devices::DeviceSpec& device, const work::ModelShape* shape,
                  ceilings::CeilingInputs* ci) {
  std::map<std::string, double> role_roof, class_roof;
  std::map<std::string, bool> role_ok, class_ok;
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const KernelGroup& g = state.groups[i];
    const std::string& role = verdicts[i].attribution.role();
    const std::string& cls = verdicts[i].attribution.pipe_class();
    double roof = -1;
    if (g.without_work == 0) {
      roof = g.work.Sum([&device](const aggregate::LaunchWork& w) { return RooflineNs(w, device); });
    } else if (g.work_launches == 0) {
      roof = ShapeRooflineNs(g, aggregate::WorkOfGroup(g, shape), cls, device);
    }
    bool all = roof >= 0;
    role_ok.emplace(role, true).first->second &= all;
    class_ok.emplace(cls, true).first->second &= all;
    role_roof[role] += all ? roof : 0;
    class_roof[cls] += all ? roof : 0;
  }
  for (const auto& [k, v] : role_roof) if (role_ok[k]) ci->role_roofline_ns[k] = v;
  for (const auto& [k, v] : class_roof) if (class_ok[k]) ci->class_roofline_ns[k] = v;
}

// Step 6b: per role with weights in its measured work, what other formats would take.
void AddRoleCeilings(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                     const devices::DeviceSpec& device, const AnalyzeOptions& options,
                     proto::Profile* profile) {
  const work::ModelShape* shape =
      options.model && options.model->shape ? &*options.model->shape : nullptr;
  std::map<std::string, ceilings::RoleWork> roles;
  std::map<std::string, double> role_pipe_flops;
  std::map<std::string, std::vector<std::string>> role_sources;
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const KernelGroup& g = state.groups[i];
    const aggregate::GroupWork w = aggregate::WorkOfGroup(g, shape);
    ceilings::RoleWork& r = roles[verdicts[i].attribution.role()];
    r.role = verdicts[i].attribution.role();
    r.launches += g.calls;
    if (w.launches == 0 || !w.bytes_known) continue;
    r.flops += w.flops;
    r.bytes += w.bytes;
    r.weight_bytes += w.weight_bytes;
    r.weight_params += w.weight_params;
    r.time_ns += w.time_ns;
    r.work_launches += w.launches;
    for (const std::string& f : w.formats) {
      if (std::find(r.formats.begin(), r.formats.end(), f) == r.formats.end()) r.formats.push_back(f);
    }
    // The role's FLOPs are measured against the pipe of its largest FLOP share.
    const std::string pipe = !w.registry_pipe.empty() && w.registry_pipe != "none"
                                 ? w.registry_pipe
                                 : work::RoofPipe(verdicts[i].attribution.pipe_class(), w.precision, w.flops);
    if (w.flops > role_pipe_flops[r.role]) {
      role_pipe_flops[r.role] = w.flops;
      r.pipe = pipe;
    }
    auto add = [&](bool yes, std::string text) {
      std::vector<std::string>& v = role_sources[r.role];
      if (yes && std::find(v.begin(), v.end(), text) == v.end()) v.push_back(std::move(text));
    };
    add(w.from_shapes, std::string(work::work_source::kShapes));
    add(w.from_capture, std::string(work::work_source::kCaptureShapes));
    add(w.from_layers, std::string(work::work_source::kModelledLayers));
    add(w.from_model, absl::StrCat(work::work_source::kModel, " ",
                                   shape != nullptr ? shape->path : "", " (uniform routing assumed)"));
    add(w.from_registry, std::string(work::work_source::kRegistry));
  }
  double steps = profile->totals().steps();
  std::string steps_source = options.steps > 0 ? "--steps"
                             : !profile->totals().tokens_source().empty()
                                 ? absl::StrCat("the trace's steps: ", profile->totals().tokens_source())
                                 : "the run's steps";
  if (steps <= 0 && profile->steps_size() > 0) {
    steps = profile->steps_size();
    steps_source = "the trace's step ranges";
  }
  if (steps <= 0) {
    steps = 1;
    steps_source = "the whole trace as one step (no step ranges; --steps N to divide)";
  }
  const std::string time_source = absl::StrCat("measured: ", profile->totals().provenance());
  for (auto& [name, r] : roles) {
    if (r.weight_bytes <= 0) continue;
    r.bytes_source = absl::StrJoin(role_sources[name], " + ");
    r.time_source = time_source;
    proto::RoleCeiling c = ceilings::RoleCeilingFor(device, r, steps, steps_source);
    if (!c.role().empty()) *profile->mutable_ceilings()->add_roles() = std::move(c);
  }
}

// Step 5: the work of one decode step, from --model or the traces' work models.
std::optional<ceilings::StepWork> StepWorkOf(const ProfileState& state,
                                             const AnalyzeOptions& options,
                                             proto::Profile* profile) {
  const proto::RunInfo& run = profile->run();
  if (options.model && options.model->HasStepWeights()) {
    return ceilings::StepWorkFromModel(*options.model, run.batch());
  }
  const aggregate::StepWorkSums& s = state.step_work;
  const uint64_t n = s.weight_launches;
  double bpw = ceilings::BitsPerWeight(run.format());
  uint64_t steps = profile->totals().steps() > 0 ? profile->totals().steps()
                                                 : static_cast<uint64_t>(profile->steps_size());
  if (n > 0 && bpw > 0 && steps > 0) {
    ceilings::StepWork w;
    w.weight_params = s.weight_bytes / steps * 8.0 / bpw;
    w.other_bytes = s.other_bytes / steps;
    w.flops = s.flops / steps;
    w.batch = run.batch() > 0 ? run.batch() : 1;
    w.run_format = run.format();
    w.source = absl::StrFormat("registry work models of %d launches over %d steps at %s (%.4g bpw)",
                               n, steps, run.format(), bpw);
    return w;
  }
  if (n > 0) {
    Warn(profile, "ceilings_unavailable",
         absl::StrCat("work models present but the run's format (\"", run.format(),
                      "\") or step count is unknown: no format ceilings"));
  }
  return std::nullopt;
}

// Says which GPU the rooflines describe, and why that one, in the ceilings' notes.
void NoteRooflineDevice(const DeviceChoice& device, const AnalyzeOptions& options,
                        proto::Profile* profile) {
  proto::Ceilings* ce = profile->mutable_ceilings();
  // Name only what the reports print: the "at roofline" column when a row has it, the row
  // marked * when a format ceiling is this run's format on this device.
  std::vector<std::string> shown;
  for (const auto& a : ce->amdahl()) {
    if (a.has_speedup_at_roofline()) {
      shown.push_back("\"at roofline\"");
      break;
    }
  }
  for (const auto& f : ce->formats()) {
    if (f.is_profiled_device() && f.is_run_format()) {
      shown.push_back("the format row marked *");
      break;
    }
  }
  ce->set_notes(absl::StrCat(
      "Rooflines", shown.empty() ? "" : absl::StrCat(" (", absl::StrJoin(shown, ", "), ")"),
      " are for ", device.spec->name,
      !options.device.empty() ? " (named by --device / qprof run --target)"
      : device.host_default
          ? " (default projection device for host-CPU runs; --device NAME to change)"
          : " (the profiled device)",
      ce->notes().empty() ? "" : "; ", ce->notes()));
}

// Step 6: throughput, label and ceilings.
void AddCeilings(const ProfileState& state, const std::vector<GroupVerdict>& verdicts,
                 const DeviceChoice& device, const AnalyzeOptions& options,
                 proto::Profile* profile) {
  proto::Totals* totals = profile->mutable_totals();
  const proto::RunInfo& run = profile->run();
  // A trace without run info or --tokens: tokens per step from the trace itself.
  aggregate::DecodeTokens derived;
  if (options.tokens == 0 && run.tokens_generated() == 0) {
    derived = aggregate::DeriveDecodeTokens(state);
  }
  const uint64_t tokens = options.tokens > 0      ? options.tokens
                          : run.tokens_generated() ? run.tokens_generated()
                          : derived.known          ? static_cast<uint64_t>(derived.tokens + 0.5)
                                                   : 0;
  // Without a wall time of its own, a trace given --tokens is timed by its GPUs' span, one
  // whose named steps by their GPU time.
  const bool span_wall = run.wall_time_ns() == 0 && (options.tokens > 0 || derived.known);
  const uint64_t wall = !span_wall                ? run.wall_time_ns()
                        : derived.step_time_ns > 0 ? derived.step_time_ns
                                                   : profile->idle().span_ns();
  totals->set_tokens(tokens);
  totals->set_wall_time_ns(wall);
  totals->set_steps(options.steps > 0 ? options.steps : run.steps());
  if (derived.known) {
    totals->set_tokens_per_step(derived.tokens_per_step);
    totals->set_replays_per_step(derived.replays_per_step);
    std::string idle;
    // A step whose GPU waited most of its span (on an event, the host, a peer) is timed as
    // it ran; its kernels alone would allow more, and the line says how much.
    if (derived.step_time_ns > 0 && derived.step_kernel_ns > 0 &&
        derived.step_time_ns > 2 * derived.step_kernel_ns) {
      idle = absl::StrFormat(
          "; the steps' kernels ran %.3g ms of that %.3g ms (the GPU waited the rest): over "
          "their kernel time alone the rate would be %.4g tokens/s",
          derived.step_kernel_ns / 1e6, derived.step_time_ns / 1e6,
          derived.tokens * 1e9 / static_cast<double>(derived.step_kernel_ns));
    }
    totals->set_tokens_source(absl::StrCat(
        derived.source,
        derived.step_time_ns > 0
            ? "; tokens/s over the steps' GPU time (each step's kernels, first start to last end)"
            : "; tokens/s over the GPUs' span (first kernel start to last end)",
        idle));
    totals->set_step_time_ns(derived.step_time_ns);
    if (totals->steps() == 0) totals->set_steps(static_cast<uint32_t>(derived.steps + 0.5));
    if (profile->run().batch() == 0) {
      profile->mutable_run()->set_batch(static_cast<uint32_t>(derived.tokens_per_step + 0.5));
    }
  }
  if (options.tokens > 0 || options.steps > 0) {
    totals->set_work_source(absl::StrCat(
        options.tokens > 0 ? absl::StrCat(options.tokens, " tokens from --tokens") : "",
        options.tokens > 0 && options.steps > 0 ? ", " : "",
        options.steps > 0 ? absl::StrCat(options.steps, " steps from --steps") : "",
        span_wall ? "; tokens/s over the GPUs' span (first kernel start to last end), the "
                    "trace has no wall time"
                  : ""));
  }
  ceilings::CeilingInputs ci;
  if (tokens > 0 && wall > 0) {
    ci.measured_tokens_per_s = static_cast<double>(tokens) * 1e9 / static_cast<double>(wall);
    totals->set_tokens_per_s(ci.measured_tokens_per_s);
  }
  profile->set_label(!options.label.empty() ? options.label
                     : !run.format().empty() ? run.format()
                                             : BaseName(state.traces[0].header.source_path()));
  ci.total_kernel_time_ns = totals->kernel_time_ns();
  const work::ModelShape* shape =
      options.model && options.model->shape ? &*options.model->shape : nullptr;
  if (device.spec) AddRooflines(state, verdicts, *device.spec, shape, &ci);
  ci.profiled_device = device.spec;
  ci.step_work = StepWorkOf(state, options, profile);
  *profile->mutable_ceilings() = ceilings::ComputeCeilings(*profile, ci);
  if (device.spec) AddRoleCeilings(state, verdicts, *device.spec, options, profile);
  if (device.spec) NoteRooflineDevice(device, options, profile);
}

// The tensor-parallel degree a trace states only by its world size (distributedInfo) is
// taken when the collectives confirm it: every decode step runs collectives (tp_diagnosis)
// over a group of n ranks. A training trace's world (data or expert parallel) never sets it.
void ConfirmTensorParallel(proto::Profile* profile) {
  proto::RunInfo* run = profile->mutable_run();
  if (run->tp() > 0 || !profile->has_tp_diagnosis()) return;
  const uint32_t n = profile->tp_diagnosis().group_size();
  if (n < 2) return;
  std::string source;
  for (const auto& c : profile->comm().collectives()) {
    if (c.name() == profile->tp_diagnosis().collective() && c.group_size() == n) {
      source = c.group_size_source();
      break;
    }
  }
  run->set_tp(n);
  (*run->mutable_extra())["tp_source"] = absl::StrCat(
      "every decode step runs ", profile->tp_diagnosis().collective(), " over ", n,
      " ranks (group size from ", source.empty() ? "the collectives" : source, ")");
}

// An input cut before its first kernel has nothing to analyse: one error line saying where it
// was cut, rather than a profile of 0 launches.
absl::Status CheckReadableInputs(const ProfileState& state) {
  for (const aggregate::TraceState& t : state.traces) {
    if (!t.truncated || t.kernel_records > 0) continue;
    return absl::DataLossError(absl::StrCat(t.header.source_path(), ": no kernel before the cut ",
                                            CutPlace(t.truncation_detail)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<proto::Profile> AnalyzeState(const ProfileState& state,
                                            const AnalyzeOptions& options) {
  if (state.traces.empty()) return absl::InvalidArgumentError("no traces to analyse");
  RETURN_IF_ERROR(CheckReadableInputs(state));
  ASSIGN_OR_RETURN(DeviceChoice device, ChooseDevice(state, options));
  proto::Profile profile;
  profile.set_schema_version(kProfileSchemaVersion);
  DescribeInputs(state, options, &profile);
  if (!device.note.empty()) profile.add_notes(absl::StrCat("device: ", device.note));
  uint64_t with_metrics = 0;
  // The rate evidence needs a GPU's roofs and GPU times: not for host-CPU traces.
  const std::vector<GroupVerdict> verdicts =
      AttributeKernels(state, options, device.host_default ? nullptr : device.spec, &with_metrics);
  // Occupancy limits for launches whose device the traces do not describe: --device's.
  std::optional<occupancy::DeviceLimits> fallback_limits;
  if (!options.device.empty() && device.spec != nullptr) {
    if (auto l = occupancy::DeviceLimitsForSpec(*device.spec); l.ok()) {
      fallback_limits = *std::move(l);
    }
  }
  const work::ModelShape* shape =
      options.model && options.model->shape ? &*options.model->shape : nullptr;
  aggregate::EmitTables(state, verdicts, fallback_limits ? &*fallback_limits : nullptr,
                        &profile, shape);
  aggregate::FillReplayWork(state, shape, profile.mutable_launch_summary());
  occupancy::Diagnose(device.spec ? device.spec->EffectiveBandwidthGbps() : 0, &profile);
  InferFormat(&profile);
  ceilings::AddLinkPeaks(device.spec, &profile);
  ceilings::DiagnoseTensorParallel(device.spec, &profile);
  ConfirmTensorParallel(&profile);
  if (device.spec) work::FillRoofs(*device.spec, &profile);
  AddCeilings(state, verdicts, device, options, &profile);
  if (profile.totals().kernel_count() == 0) {
    Warn(&profile, "no_kernels", "no kernel records in the input");
  }
  AddWarnings(state, verdicts, device, options, with_metrics, &profile);
  HeadlineOtherClass(&profile);
  WarnSpanBeyondJson(&profile);
  if (!profile.no_timeline().empty()) {
    // Kernels laid end to end by the importer: their gaps, steps and sampled step say
    // nothing, so the profile carries none (no_timeline says why).
    profile.clear_idle();
    profile.clear_timeline();
    profile.clear_steps();
  }
  return profile;
}

absl::StatusOr<proto::Profile> Analyze(const std::vector<proto::Trace>& traces,
                                       const AnalyzeOptions& options) {
  if (traces.empty()) return absl::InvalidArgumentError("no traces to analyse");
  ProfileState state;
  for (const proto::Trace& t : traces) aggregate::AccumulateTrace(t, &state);
  return AnalyzeState(state, options);
}

}  // namespace qprof
