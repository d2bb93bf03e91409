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
  struct RoleSums {
    double roof = 0, time = 0, mem = 0, cmp = 0;
  };
  std::map<std::string, RoleSums> roles;
  for (proto::KernelRow& k : *profile->mutable_kernels()) {
    k.clear_peak_fraction();
    k.clear_bound();
    if (k.work_launches() == 0 || k.work_time_ns() == 0) continue;
    if (k.flops() > 0 && k.bytes() <= 0) continue;  // bytes unknown: no roofline position
    double mem = 0, cmp = 0;
    const double roof = RoofTimeNs(d, k.flops(), k.bytes(), k.roof_pipe(), &mem, &cmp);
    if (roof <= 0) continue;  // no roof for these FLOPs on this device, or no bytes either
    const double time = static_cast<double>(k.work_time_ns());
    const double f = roof / time;
    k.set_peak_fraction(f);
    const bool diagnosed = k.has_diagnosis() && !k.diagnosis().kind().empty();
    if (f < kLatencyFraction || (diagnosed && f < kDiagnosedFraction)) {
      k.set_bound("latency");
    } else {
      k.set_bound(mem >= cmp ? "memory" : "compute");
    }
    RoleSums& r = roles[k.role()];
    r.roof += roof;
    r.time += time;
    r.mem += mem;
    r.cmp += cmp;
  }
  for (proto::RoleRow& r : *profile->mutable_roles()) {
    r.clear_peak_fraction();
    r.clear_bound();
    auto it = roles.find(r.role());
    if (it == roles.end() || it->second.time <= 0) continue;
    const double f = it->second.roof / it->second.time;
    r.set_peak_fraction(f);
    r.set_bound(f < kLatencyFraction ? "latency" : it->second.mem >= it->second.cmp ? "memory" : "compute");
  }
}

}  // namespace qprof::work
