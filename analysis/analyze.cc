#include "analysis/analyze.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/aggregate/aggregate.h"
#include "analysis/aggregate/kernel_name.h"
#include "analysis/classify/launch_roles.h"
#include "analysis/devices/device_specs.h"
#include "analysis/occupancy/annotate.h"
#include "analysis/occupancy/device_limits.h"
#include "analysis/occupancy/diagnosis.h"
#include "proto/vocabulary.h"

namespace qprof {
namespace {

void Warn(proto::Profile* p, const std::string& code, const std::string& message) {
  proto::Warning* w = p->add_warnings();
  w->set_code(code);
  w->set_message(message);
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Roofline time of one launch on `d`: max(bytes / BW, flops / rate of its compute pipe).
// Returns -1 when the launch has no work model or the device lacks the pipe.
double RooflineNs(const proto::Activity& a, const devices::DeviceSpec& d) {
  if (!a.has_work() || (a.work().bytes() <= 0 && a.work().flops() <= 0)) return -1;
  double bw = d.EffectiveBandwidthGbps();  // bytes/ns
  double mem = bw > 0 ? a.work().bytes() / bw : 0;
  double cmp = 0;
  if (a.work().flops() > 0) {
    double rate = d.PipeTflops(a.work().compute_pipe()) * 1e3;  // FLOP/ns
    if (rate <= 0) return -1;
    cmp = a.work().flops() / rate;
  }
  return std::max(mem, cmp);
}

// Profile-wide counts of launch contexts and occupancy, and the source's own occupancy
// estimate beside ours (Kineto: compared where it is above zero; it reports 0 for kernels
// that opted into more than 48 KiB of shared memory, counted apart).
void AddToLaunchSummary(const proto::Activity& a, const proto::LaunchOccupancy& occ,
                        proto::LaunchSummary* s) {
  s->set_launches(s->launches() + 1);
  if (a.launch_context().stack() != 0 || !a.nvtx_path().empty()) {
    s->set_launches_with_context(s->launches_with_context() + 1);
  }
  if (a.launch_context().graph_launch()) s->set_graph_launches(s->graph_launches() + 1);
  const bool computed = occ.error().empty() && occ.sm_count() > 0;
  if (computed) {
    s->set_launches_with_occupancy(s->launches_with_occupancy() + 1);
  } else if (s->occupancy_unavailable().empty() && !occ.error().empty()) {
    s->set_occupancy_unavailable(occ.error());
  }
  if (computed && occ.has_reported_est_occupancy_pct()) {
    if (occ.reported_est_occupancy_pct() > 0) {
      s->set_reported_compared(s->reported_compared() + 1);
      s->set_reported_max_abs_diff_pct(std::max(
          s->reported_max_abs_diff_pct(),
          std::abs(occ.est_occupancy_pct() - occ.reported_est_occupancy_pct())));
    } else if (occ.shared_mem_optin()) {
      s->set_reported_zero_optin(s->reported_zero_optin() + 1);
    }
  }
}

}  // namespace

absl::StatusOr<proto::Profile> Analyze(const std::vector<proto::Trace>& traces,
                                       const AnalyzeOptions& options) {
  if (traces.empty()) return absl::InvalidArgumentError("no traces to analyse");
  const devices::DeviceSpec* device = nullptr;
  if (!options.device.empty()) {
    device = devices::FindDevice(options.device);
    if (!device) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--device ", options.device, ": not in the spec table (see `qprof devices`)"));
    }
  }
  proto::Profile profile;
  profile.set_schema_version(kProfileSchemaVersion);
  std::vector<const proto::Trace*> tp;
  std::vector<std::string> provenances;
  for (const proto::Trace& t : traces) {
    tp.push_back(&t);
    const auto& h = t.header();
    proto::Source* s = profile.add_sources();
    s->set_path(h.source_path());
    s->set_kind(h.source_kind());
    s->set_provenance(std::string(ProvenanceLabel(h.provenance())));
    uint64_t kernels = 0;
    for (const auto& a : t.activities()) kernels += a.kind() == proto::ACTIVITY_KIND_KERNEL;
    s->set_kernel_count(kernels);
    s->set_truncated(t.truncated());
    std::string prov = absl::StrCat(std::string(ProvenanceLabel(h.provenance())),
                                    h.provenance() == proto::PROVENANCE_IMPORTED
                                        ? absl::StrCat(" from ", BaseName(h.source_path()))
                                        : "");
    if (std::find(provenances.begin(), provenances.end(), prov) == provenances.end()) {
      provenances.push_back(prov);
    }
    for (const std::string& n : h.notes()) profile.add_notes(n);
  }
  for (const std::string& path : options.sass_sources) {
    proto::Source* s = profile.add_sources();
    s->set_path(path);
    s->set_kind("sass");
    s->set_provenance("static SASS");
  }
  *profile.mutable_run() = traces[0].header().run();
  *profile.mutable_collector() = traces[0].header().collector();
  profile.set_provenance(traces[0].header().provenance());
  if (!device) {
    for (const auto& t : traces) {
      for (const auto& d : t.header().devices()) {
        if ((device = devices::FindDevice(d.name())) != nullptr) break;
      }
      if (device) break;
    }
  }
  // Host-CPU traces have no GPU of their own: their rooflines use the same default device
  // as `qprof run`'s modelled projection (overridable with --device).
  const bool default_device = !device && options.device.empty() &&
                              profile.provenance() == proto::PROVENANCE_MEASURED_HOST;
  if (default_device) device = devices::FindDevice(devices::kDefaultProjectionDevice);

  // Group kernel launches by normalised name.
  classify::ClassifyOptions co;
  co.known_kernels = options.known_kernels;
  co.sass = options.sass_stats;
  classify::Classifier classifier(std::move(co));
  // Launch contexts: launches are grouped by name and by the role their context gives them
  // (classify/launch_roles.h); occupancy for launches the importer could not annotate comes
  // from --device's limits.
  classify::LaunchRoleResolver roles(&classifier);
  std::vector<const classify::ContextVerdict*> group_context;
  std::optional<occupancy::DeviceLimits> fallback_limits;
  if (!options.device.empty() && device != nullptr) {
    if (auto l = occupancy::DeviceLimitsForSpec(*device); l.ok()) fallback_limits = *std::move(l);
  }
  std::deque<proto::LaunchOccupancy> computed_occupancy;
  proto::LaunchSummary* launch_summary = profile.mutable_launch_summary();
  std::unordered_map<std::string, std::string> norm_cache;
  std::unordered_map<std::string, size_t> group_of;
  std::vector<aggregate::KernelGroup> groups;
  for (size_t ti = 0; ti < traces.size(); ++ti) {
    for (const proto::Activity& a : traces[ti].activities()) {
      if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
      auto it = norm_cache.find(a.name());
      if (it == norm_cache.end()) {
        std::string n = aggregate::NormaliseKernelName(a.name().empty() ? a.mangled_name() : a.name());
        if (n.empty()) n = "(unnamed kernel)";
        it = norm_cache.emplace(a.name(), std::move(n)).first;
      }
      const classify::LaunchRole lr =
          roles.For(a, it->second, traces[ti].header().launch_context_stats(), static_cast<int>(ti));
      auto [g, inserted] = group_of.emplace(classify::LaunchRoleResolver::GroupKey(it->second, lr),
                                            groups.size());
      if (inserted) {
        groups.emplace_back();
        groups.back().name = it->second;
        group_context.push_back(lr.verdict);
      }
      aggregate::Launch launch{static_cast<int>(ti), &a};
      if (lr.verdict != nullptr && !lr.verdict->innermost.empty()) {
        launch.context = &lr.verdict->innermost;
      }
      if (fallback_limits && a.occupancy().sm_count() == 0) {
        proto::LaunchOccupancy occ = a.occupancy();
        if (occupancy::FillLaunchOccupancy(*fallback_limits, a, &occ)) {
          computed_occupancy.push_back(std::move(occ));
          launch.occupancy = &computed_occupancy.back();
        }
      }
      const proto::LaunchOccupancy& occ = launch.occupancy ? *launch.occupancy : a.occupancy();
      AddToLaunchSummary(a, occ, launch_summary);
      groups[g->second].launches.push_back(launch);
    }
  }
  // Attribute each group once.
  std::map<std::string, double> role_roof, class_roof;
  std::map<std::string, bool> role_roof_ok, class_roof_ok;
  uint64_t with_metrics = 0;
  for (aggregate::KernelGroup& g : groups) {
    proto::Activity rep = *g.launches.front().activity;
    double w = 0, tp = 0;
    for (const auto& l : g.launches) {
      const auto& a = *l.activity;
      if (a.has_metrics() && a.metrics().has_tensor_pipe_pct()) {
        double d = static_cast<double>(std::max<int64_t>(1, a.end_ns() - a.start_ns()));
        tp += a.metrics().tensor_pipe_pct() * d;
        w += d;
        if (!rep.metrics().has_tensor_pipe_pct()) *rep.mutable_metrics() = a.metrics();
      }
    }
    if (w > 0) {
      rep.mutable_metrics()->set_tensor_pipe_pct(tp / w);
      ++with_metrics;
    }
    g.attribution = classifier.Classify(rep, g.name, group_context[&g - groups.data()]);
    // Nothing from a modelled trace is measured or registry: its times come from the model,
    // whatever matched the name (the class and role may still come from that match).
    if (traces[g.launches.front().trace].header().provenance() == proto::PROVENANCE_MODELLED &&
        g.attribution.evidence() != evidence::kModelled) {
      g.attribution.set_evidence_detail(
          absl::StrCat("modelled trace; class from ", g.attribution.evidence(), ": ",
                       g.attribution.evidence_detail()));
      g.attribution.set_evidence(std::string(evidence::kModelled));
    }
    if (!rep.kernel_id().empty()) {
      g.kernel_id = rep.kernel_id();
    } else if (const classify::KnownKernel* k = classifier.FindKnown(rep, g.name)) {
      g.kernel_id = k->kernel_id;
    }
    if (device) {
      double roof = 0;
      bool all = true;
      for (const auto& l : g.launches) {
        double r = RooflineNs(*l.activity, *device);
        if (r < 0) { all = false; break; }
        roof += r;
      }
      g.has_roofline = all;
      g.roofline_ns = all ? roof : 0;
      const std::string& role = g.attribution.role();
      const std::string& cls = g.attribution.pipe_class();
      if (!role_roof_ok.count(role)) role_roof_ok[role] = true;
      if (!class_roof_ok.count(cls)) class_roof_ok[cls] = true;
      role_roof_ok[role] = role_roof_ok[role] && all;
      class_roof_ok[cls] = class_roof_ok[cls] && all;
      role_roof[role] += g.roofline_ns;
      class_roof[cls] += g.roofline_ns;
    }
  }
  aggregate::AggregateStats st = aggregate::Aggregate(tp, groups, &profile);
  occupancy::Diagnose(device ? device->EffectiveBandwidthGbps() : 0, &profile);

  // Totals provenance and throughput.
  proto::Totals* totals = profile.mutable_totals();
  totals->set_provenance(absl::StrJoin(provenances, "; "));
  const proto::RunInfo& run = profile.run();
  totals->set_tokens(run.tokens_generated());
  totals->set_wall_time_ns(run.wall_time_ns());
  totals->set_steps(run.steps());
  double measured_tps = 0;
  if (run.tokens_generated() > 0 && run.wall_time_ns() > 0) {
    measured_tps = static_cast<double>(run.tokens_generated()) * 1e9 / static_cast<double>(run.wall_time_ns());
    totals->set_tokens_per_s(measured_tps);
  }
  profile.set_label(!options.label.empty() ? options.label
                    : !run.format().empty() ? run.format()
                                            : BaseName(traces[0].header().source_path()));

  // Ceilings.
  ceilings::CeilingInputs ci;
  ci.total_kernel_time_ns = totals->kernel_time_ns();
  for (auto& [k, v] : role_roof) if (role_roof_ok[k]) ci.role_roofline_ns[k] = v;
  for (auto& [k, v] : class_roof) if (class_roof_ok[k]) ci.class_roofline_ns[k] = v;
  ci.profiled_device = device;
  ci.measured_tokens_per_s = measured_tps;
  if (options.model) {
    ci.step_work = ceilings::StepWorkFromModel(*options.model, run.batch());
  } else {
    double wb = 0, other = 0, flops = 0;
    uint64_t n = 0;
    for (const auto& t : traces) {
      for (const auto& a : t.activities()) {
        if (!a.has_work()) continue;
        wb += a.work().weight_bytes();
        other += a.work().kv_bytes() + a.work().activation_bytes();
        flops += a.work().flops();
        n += a.work().weight_bytes() > 0;
      }
    }
    double bpw = ceilings::BitsPerWeight(run.format());
    uint64_t steps = run.steps() > 0 ? run.steps() : static_cast<uint64_t>(profile.steps_size());
    if (n > 0 && bpw > 0 && steps > 0) {
      ceilings::StepWork w;
      w.weight_params = wb / steps * 8.0 / bpw;
      w.other_bytes = other / steps;
      w.flops = flops / steps;
      w.batch = run.batch() > 0 ? run.batch() : 1;
      w.run_format = run.format();
      w.source = absl::StrFormat("registry work models of %d launches over %d steps at %s (%.4g bpw)",
                                 n, steps, run.format(), bpw);
      ci.step_work = w;
    } else if (n > 0) {
      Warn(&profile, "ceilings_unavailable",
           absl::StrCat("work models present but the run's format (\"", run.format(),
                        "\") or step count is unknown: no format ceilings"));
    }
  }
  *profile.mutable_ceilings() = ceilings::ComputeCeilings(profile, ci);
  if (device) {  // say which GPU the rooflines describe, and why that one
    proto::Ceilings* ce = profile.mutable_ceilings();
    ce->set_notes(absl::StrCat(
        "Rooflines (\"at roofline\", the * row) are for ", device->name,
        !options.device.empty() ? " (named by --device / qprof run --target)"
        : default_device ? " (default projection device for host-CPU runs; --device NAME to change)"
                         : " (the profiled device)",
        ce->notes().empty() ? "" : "; ", ce->notes()));
  }

  // Warnings.
  if (totals->kernel_count() == 0) Warn(&profile, "no_kernels", "no kernel records in the input");
  for (const auto& t : traces) {
    const auto& c = t.header().collector();
    const std::string src = BaseName(t.header().source_path());
    if (c.records_dropped() > 0) {
      Warn(&profile, "records_dropped", absl::StrCat(src, ": the collector dropped ", c.records_dropped(),
                                                     " records; totals are lower bounds"));
    }
    if (c.records_invalid() > 0) {
      Warn(&profile, "records_invalid", absl::StrCat(src, ": ", c.records_invalid(),
                                                     " records with invalid timestamps were skipped"));
    }
    if (c.metrics_requested() && !c.metrics_available()) {
      Warn(&profile, "metrics_unavailable",
           absl::StrCat(src, ": per-kernel metrics were requested but are unavailable: ",
                        c.metrics_unavailable_reason().empty() ? "no reason given"
                                                               : c.metrics_unavailable_reason()));
    }
    if (t.truncated()) {
      Warn(&profile, "truncated", absl::StrCat(src, ": input is truncated (", t.truncation_detail(),
                                               "); the analysis covers the readable prefix"));
    }
    for (const std::string& w : c.warnings()) Warn(&profile, "collector", absl::StrCat(src, ": ", w));
  }
  if (with_metrics == 0 && totals->kernel_count() > 0 &&
      profile.provenance() != proto::PROVENANCE_MODELLED) {  // a model has no counters
    Warn(&profile, "metrics_unavailable",
         "no per-kernel tensor-pipe metrics in the input (collect them with CUPTI metrics or "
         "pass --ncu CSV); pipe classes come from SASS, the registry or name rules");
  }
  if (!device) {
    std::string names;
    for (const auto& t : traces) {
      for (const auto& d : t.header().devices()) names += (names.empty() ? "" : ", ") + d.name();
    }
    Warn(&profile, "device_unknown",
         absl::StrCat("device ", names.empty() ? "(not reported)" : names,
                      " is not in the spec table; pass --device NAME for ceilings on the profiled device"));
  }
  if (device && profile.provenance() == proto::PROVENANCE_MEASURED_HOST) {
    Warn(&profile, "device_mismatch",
         absl::StrCat("times were measured on the host CPU; roofline bounds use ", device->name,
                      default_device ? " (the default projection device; --device NAME to change)" : "",
                      " figures, so \"at roofline\" compares a CPU time with a GPU bound"));
  }
  if (st.dropped_negative > 0) {
    Warn(&profile, "records_invalid", absl::StrCat(st.dropped_negative, " kernel launches with end < start were ignored"));
  }
  uint64_t context_only = 0, context_only_time = 0;
  for (const auto& k : profile.kernels()) {
    if (k.evidence() == evidence::kLaunchContext && k.class_() == pipe::kOther) {
      ++context_only;
      context_only_time += k.time_ns();
    }
  }
  if (context_only > 0) {
    Warn(&profile, "class_unknown",
         absl::StrFormat("%d kernels (%.1f%% of kernel time) have a role from their launch "
                         "context but no evidence for their pipe class (no metric, SASS, "
                         "registry entry or name rule); they count as class \"other\" (pass "
                         "--sass or --ncu to attribute them)",
                         context_only,
                         totals->kernel_time_ns()
                             ? 100.0 * context_only_time / totals->kernel_time_ns()
                             : 0.0));
  }
  for (const auto& t : traces) {
    const auto& cs = t.header().launch_context_stats();
    if (cs.no_launch_record() > 0) {
      Warn(&profile, "launch_context_missing",
           absl::StrCat(BaseName(t.header().source_path()), ": ", cs.no_launch_record(), " of ",
                        cs.kernels(), " kernels have no launch event with their correlation id "
                        "(launched before the capture began, or the CPU side was not traced): "
                        "no launch context, their roles come from their names"));
    }
  }
  uint64_t unknown_time = 0;
  for (const auto& k : profile.kernels()) {
    if (k.evidence() == evidence::kUnknown) {
      profile.add_unknown_kernels(k.name());
      unknown_time += k.time_ns();
    }
  }
  if (profile.unknown_kernels_size() > 0) {
    double share = totals->kernel_time_ns() ? static_cast<double>(unknown_time) / totals->kernel_time_ns() : 0;
    Warn(&profile, "unknown_kernels",
         absl::StrFormat("%d kernels (%.1f%% of kernel time) could not be attributed: no metric, "
                         "SASS, registry entry or name rule; they are counted as class \"other\" "
                         "and listed in unknown_kernels (pass --sass or --ncu to attribute them)",
                         profile.unknown_kernels_size(), 100 * share));
  }
  return profile;
}

}  // namespace qprof
