#include "analysis/work/roofs.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace qprof::work {

std::string RoofPipe(std::string_view pipe_class, std::string_view precision, double flops) {
  if (flops <= 0) return "";
  if (pipe_class == "simt") return "simt_fp32";
  if (pipe_class != "tensor") return "";
  if (precision == "bf16" || precision == "fp16" || precision == "tf32" || precision == "fp8" ||
      precision == "fp4") {
    return absl::StrCat("tensor_", std::string(precision));
  }
  return "";
}

double RoofTimeNs(const devices::DeviceSpec& d, double flops, double bytes, std::string_view pipe,
                  double* memory_ns, double* compute_ns) {
  const double bw = d.EffectiveBandwidthGbps();  // bytes per ns
  const double mem = bw > 0 ? bytes / bw : 0;
  double cmp = 0;
  if (flops > 0) {
    const double rate = pipe.empty() ? 0 : d.PipeTflops(pipe) * 1e3;  // FLOP per ns
    if (rate <= 0) return -1;
    cmp = flops / rate;
  }
  if (memory_ns != nullptr) *memory_ns = mem;
  if (compute_ns != nullptr) *compute_ns = cmp;
  return std::max(mem, cmp);
}

void FillRoofs(const devices::DeviceSpec& d, proto::Profile* profile) {
  proto::DeviceRoofs* roofs = profile->mutable_roofs();
  roofs->Clear();
  roofs->set_device(d.name);
  roofs->set_memory_gbps(d.EffectiveBandwidthGbps());
  roofs->set_memory_source(d.EffectiveBandwidthSource());
  for (const char* pipe : {"simt_fp32", "tensor_tf32", "tensor_bf16", "tensor_fp16", "tensor_fp8",
                           "tensor_fp6", "tensor_fp4"}) {
    if (d.PipeTflops(pipe) <= 0) continue;
    proto::DeviceRoof* r = roofs->add_pipes();
    r->set_pipe(pipe);
    r->set_tflops(d.PipeTflops(pipe));
    r->set_source(d.PipeFigure(pipe).source);
  }
  // A role's fraction, bound and roofline point are over exactly the launches its achieved
  // rates are over (every kernel row with work): when one of those rows has no roofline
  // position, the role has none either, and says which row and why, rather than a fraction
  // of the rows that happen to have one (MI300X Qwen's attention read 1.7e-7 of roof that
  // way: its FLOPs came from attn_fwd, its "fraction" from 24 fills).
  struct RoleSums {
    double roof = 0, time = 0, mem = 0, cmp = 0;
    uint32_t missing = 0, with_work = 0;
    std::string first_missing;
  };
  std::map<std::string, RoleSums> roles;
  for (proto::KernelRow& k : *profile->mutable_kernels()) {
    k.clear_peak_fraction();
    k.clear_bound();
    if (k.work_launches() == 0 || k.work_time_ns() == 0) continue;
    RoleSums& r = roles[k.role()];
    ++r.with_work;
    double mem = 0, cmp = 0;
    const bool bytes_unknown = k.bytes() <= 0;
    const double roof =
        k.flops() > 0 && bytes_unknown ? -1
                                       : RoofTimeNs(d, k.flops(), k.bytes(), k.roof_pipe(), &mem, &cmp);
    if (roof <= 0) {
      // No roof for these FLOPs on this device (a class or precision without one), or no
      // bytes: no roofline position, and the row says so.
      const std::string why =
          bytes_unknown ? "its bytes are unknown"
          : k.roof_pipe().empty()
              ? absl::StrCat("class ", k.class_(), " has no compute roof for its FLOPs")
              : absl::StrCat(d.name, " has no ", k.roof_pipe(), " roof");
      if (!bytes_unknown && k.work_note().find("no roofline position") == std::string::npos) {
        k.set_work_note(absl::StrCat(k.work_note(), k.work_note().empty() ? "" : "; ",
                                     "no roofline position: ", why));
      }
      if (r.missing++ == 0) r.first_missing = absl::StrCat(k.name(), ": ", why);
      continue;
    }
    const double time = static_cast<double>(k.work_time_ns());
    const double f = roof / time;
    k.set_peak_fraction(f);
    const bool diagnosed = k.has_diagnosis() && !k.diagnosis().kind().empty();
    if (f < kLatencyFraction || (diagnosed && f < kDiagnosedFraction)) {
      k.set_bound("latency");
    } else {
      k.set_bound(mem >= cmp ? "memory" : "compute");
    }
    r.roof += roof;
    r.time += time;
    r.mem += mem;
    r.cmp += cmp;
  }
  for (proto::RoleRow& r : *profile->mutable_roles()) {
    r.clear_peak_fraction();
    r.clear_bound();
    r.clear_roof_note();
    auto it = roles.find(r.role());
    if (it == roles.end()) continue;
    const RoleSums& s = it->second;
    if (s.missing > 0) {
      r.set_roof_note(absl::StrCat("no fraction of roof: ", s.missing, " of its ", s.with_work,
                                   " kernel rows with work have no roofline position (",
                                   s.first_missing, ")"));
      continue;
    }
    if (s.time <= 0) continue;
    const double f = s.roof / s.time;
    r.set_peak_fraction(f);
    r.set_bound(f < kLatencyFraction ? "latency" : s.mem >= s.cmp ? "memory" : "compute");
  }
}

}  // namespace qprof::work
