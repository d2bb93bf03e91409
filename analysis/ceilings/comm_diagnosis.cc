#include "analysis/ceilings/comm_diagnosis.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace qprof::ceilings {
namespace {

struct Link {
  double gbps = 0;
  std::string name;
  std::string source;
};

// What bounds a copy of `kind` on `d`.
Link CopyLink(const devices::DeviceSpec& d, const std::string& kind) {
  if (kind == "HtoD" || kind == "DtoH" || kind == "HtoH") {
    return {d.host_link_gbps.value, absl::StrCat(d.host_link, " (host link)"),
            d.host_link_gbps.source};
  }
  if (kind == "PtoP") {
    return {d.interconnect_gbps.value, absl::StrCat(d.interconnect, " (GPU link)"),
            d.interconnect_gbps.source};
  }
  if (kind == "DtoD") {
    // Each byte is read and written: bytes / time reaches at most half the DRAM bandwidth.
    return {d.memory_bandwidth_gbps.value / 2, "DRAM (read + write: half its bandwidth)",
            d.memory_bandwidth_gbps.source};
  }
  if (kind == "memset") {
    return {d.memory_bandwidth_gbps.value, "DRAM (writes)", d.memory_bandwidth_gbps.source};
  }
  return {};
}

int Generation(const std::string& arch) {
  // "sm_120" -> 12, "sm_90" -> 9; Blackwell's sm_100 and sm_120 are one generation.
  if (!absl::StartsWith(arch, "sm_") || arch.size() < 5) return -1;
  const std::string digits = arch.substr(3, arch.size() - 4);
  int major = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    major = major * 10 + (c - '0');
  }
  return major == 12 ? 10 : major;
}

bool IsNvlink(const std::string& interconnect) { return absl::StartsWith(interconnect, "NVLink"); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Three significant digits and a unit, as the reports print durations.
std::string Dur(double ns) {
  if (ns < 999.5) return absl::StrFormat("%.0f ns", ns);
  if (ns < 999.5e3) return absl::StrFormat("%.3g us", ns / 1e3);
  if (ns < 999.5e6) return absl::StrFormat("%.3g ms", ns / 1e6);
  return absl::StrFormat("%.3g s", ns / 1e9);
}

}  // namespace

const devices::DeviceSpec* NvlinkCounterpart(const devices::DeviceSpec& device) {
  const devices::DeviceSpec* same = nullptr;
  const devices::DeviceSpec* any = nullptr;
  for (const devices::DeviceSpec& d : devices::AllDevices()) {
    if (!d.IsNvidia() || !IsNvlink(d.interconnect) || d.interconnect_gbps.value <= 0) continue;
    if (any == nullptr || d.interconnect_gbps.value > any->interconnect_gbps.value) any = &d;
    if (Generation(d.arch) == Generation(device.arch) &&
        (same == nullptr || d.interconnect_gbps.value > same->interconnect_gbps.value)) {
      same = &d;
    }
  }
  return same != nullptr ? same : any;
}

void AddLinkPeaks(const devices::DeviceSpec* device, proto::Profile* profile) {
  for (proto::CollectiveRow& r : *profile->mutable_comm()->mutable_collectives()) {
    if (device == nullptr) {
      r.set_link("unknown: the device is not in the spec table (pass --device NAME)");
      continue;
    }
    r.set_link(device->interconnect);
    r.set_link_peak_gbps(device->interconnect_gbps.value);
    r.set_link_source(absl::StrCat(device->name, ": ", device->interconnect_gbps.source));
    if (r.has_busbw_gbps() && r.link_peak_gbps() > 0) {
      r.set_link_fraction(r.busbw_gbps() / r.link_peak_gbps());
    }
  }
  for (proto::CopyRow& r : *profile->mutable_copies()) {
    if (device == nullptr) {
      r.set_link("unknown: the device is not in the spec table (pass --device NAME)");
      continue;
    }
    const Link l = CopyLink(*device, r.kind());
    if (l.gbps <= 0) {
      r.set_link(l.name.empty() ? "none: no link bounds this kind" : absl::StrCat(l.name, ": no figure"));
      continue;
    }
    r.set_link(l.name);
    r.set_link_peak_gbps(l.gbps);
    r.set_link_source(absl::StrCat(device->name, ": ", l.source));
    if (r.has_gbps()) r.set_link_fraction(r.gbps() / l.gbps);
  }
}

void DiagnoseTensorParallel(const devices::DeviceSpec* device, proto::Profile* profile) {
  const proto::CommSummary& comm = profile->comm();
  if (profile->steps_size() == 0 || comm.collectives_size() == 0) return;
  uint64_t comm_time = 0, comm_calls = 0;
  std::vector<double> spans;
  for (const proto::StepRow& s : profile->steps()) {
    if (s.comm_calls() == 0) return;  // a step without collectives: not a TP decode
    comm_time += s.comm_time_ns();
    comm_calls += s.comm_calls();
    spans.push_back(static_cast<double>(s.span_ns()));
  }
  // Per-step figures mean something only when the steps hold every collective (a training
  // trace launches its backward all-reduces from autograd's thread, outside the step ranges).
  uint64_t all_calls = 0;
  for (const proto::CollectiveRow& r : comm.collectives()) all_calls += r.calls();
  if (comm_calls != all_calls) return;
  uint32_t gpus = 0;
  for (const proto::CommDeviceRow& d : comm.per_device()) gpus += d.total_ns() > 0;
  if (gpus == 0) return;
  const double steps = profile->steps_size();
  proto::TpDiagnosis* t = profile->mutable_tp_diagnosis();
  t->set_steps(static_cast<uint32_t>(profile->steps_size()));
  t->set_step_span_ns(Median(spans));
  t->set_comm_ns_per_step(static_cast<double>(comm_time) / steps / gpus);
  t->set_comm_calls_per_step(static_cast<double>(comm_calls) / steps / gpus);
  t->set_exposed_ns_per_step(static_cast<double>(comm.exposed_ns()) / steps / gpus);
  if (t->step_span_ns() > 0) {
    t->set_comm_share(t->comm_ns_per_step() / t->step_span_ns());
    t->set_exposed_share(std::min(1.0, t->exposed_ns_per_step() / t->step_span_ns()));
  }
  const proto::CollectiveRow* top = &comm.collectives(0);  // sorted by time
  uint64_t all_time = 0;
  for (const proto::CollectiveRow& r : comm.collectives()) all_time += r.time_ns();
  t->set_collective(top->name());
  t->set_collective_share(all_time ? static_cast<double>(top->time_ns()) / all_time : 0.0);
  t->set_group_size(top->group_size());
  t->set_bytes_per_call(top->bytes_per_call());
  if (top->has_busbw_gbps()) t->set_busbw_gbps(top->busbw_gbps());
  t->set_link(top->link());
  t->set_link_peak_gbps(top->link_peak_gbps());
  t->set_link_source(top->link_source());
  if (top->has_link_fraction()) t->set_link_fraction(top->link_fraction());
  t->set_provenance(absl::StrCat(profile->totals().provenance(), " (per step and GPU: sums over ",
                                 profile->steps_size(), " steps and ", gpus, " GPU timelines)"));

  std::string note = absl::StrFormat(
      "Tensor-parallel decode: every step runs collectives. Per step and GPU, %.3g collective "
      "kernels take %s of a %s step (%.1f%%), %s of it exposed (%.1f%% of the step); %s is %.0f%% "
      "of the collective time",
      t->comm_calls_per_step(), Dur(t->comm_ns_per_step()), Dur(t->step_span_ns()),
      100 * t->comm_share(), Dur(t->exposed_ns_per_step()), 100 * t->exposed_share(), top->name(),
      100 * t->collective_share());
  if (t->bytes_per_call() > 0) {
    absl::StrAppendFormat(&note, ", %.3g MB per call", t->bytes_per_call() / 1e6);
  }
  if (t->has_busbw_gbps() && t->link_peak_gbps() > 0) {
    absl::StrAppendFormat(&note, "; bus bandwidth %.3g GB/s = %.1f%% of %s (%.3g GB/s per direction)",
                          t->busbw_gbps(), 100 * t->link_fraction(), t->link(),
                          t->link_peak_gbps());
  } else if (!t->has_busbw_gbps()) {
    // Say what is missing, not what is known: a row with n = 4 has its group size.
    const bool has_n = top->group_size() >= 2, has_bytes = top->calls_with_bytes() > 0;
    note += !has_n && !has_bytes ? "; bus bandwidth unknown (the trace gives no message size or "
                                   "group size)"
            : !has_bytes ? absl::StrFormat("; bus bandwidth unknown: the group size is %d (%s) "
                                           "but the trace gives no message size",
                                           top->group_size(), top->group_size_source())
                         : "; bus bandwidth unknown (the trace gives no group size)";
  }
  note += ".";
  if (device != nullptr && !IsNvlink(device->interconnect) && device->interconnect_gbps.value > 0) {
    if (const devices::DeviceSpec* nv = NvlinkCounterpart(*device)) {
      const double r = device->interconnect_gbps.value / nv->interconnect_gbps.value;
      const double f = t->exposed_share();
      t->set_what_if_link(absl::StrCat(nv->interconnect, " (", nv->name, ")"));
      t->set_what_if_link_gbps(nv->interconnect_gbps.value);
      t->set_what_if_source(absl::StrCat(nv->name, ": ", nv->interconnect_gbps.source));
      t->set_what_if_exposed_ns_per_step(t->exposed_ns_per_step() * r);
      t->set_what_if_speedup(1.0 / (1.0 - f + f * r));
      t->set_formula(absl::StrFormat(
          "modelled: exposed time x r, r = %.4g / %.4g GB/s = %.3g (same share of the link's "
          "peak); step speedup = 1 / (1 - f + f r) with f = exposed / step = %.3g",
          device->interconnect_gbps.value, nv->interconnect_gbps.value, r, f));
      absl::StrAppendFormat(
          &note,
          " With the %s figure (%.4g GB/s per direction instead of %.4g) the exposed part would "
          "take %s per step and the step would be at most %.2fx faster (modelled: Amdahl on the "
          "exposed part, bandwidth only; latency-bound small messages gain less).",
          t->what_if_link(), nv->interconnect_gbps.value, device->interconnect_gbps.value,
          Dur(t->what_if_exposed_ns_per_step()), t->what_if_speedup());
    }
  }
  t->set_note(note);
}

}  // namespace qprof::ceilings
