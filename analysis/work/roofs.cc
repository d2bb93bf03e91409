#include "analysis/work/roofs.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

namespace {

// Takes rows above the roof out of a role's work and rates, and says so in its roof note.
void ExcludeAboveRoof(uint32_t above, uint32_t with_work, const std::string& first,
                      double flops, double bytes, double time, uint64_t launches,
                      proto::RoleRow* r) {
  r->set_flops(std::max(0.0, r->flops() - flops));
  r->set_bytes(std::max(0.0, r->bytes() - bytes));
  r->set_work_time_ns(r->work_time_ns() - std::min<uint64_t>(r->work_time_ns(),
                                                             static_cast<uint64_t>(time)));
  r->set_work_launches(r->work_launches() - std::min<uint64_t>(r->work_launches(), launches));
  // Rates only where the role had them (a row with FLOPs and unknown bytes leaves none).
  const bool had_tflops = r->has_achieved_tflops(), had_gbps = r->has_achieved_gbps();
  r->clear_achieved_tflops();
  r->clear_achieved_gbps();
  if (r->work_time_ns() > 0) {
    const double t = static_cast<double>(r->work_time_ns());
    if (had_tflops && r->flops() > 0) r->set_achieved_tflops(r->flops() / t / 1e3);
    if (had_gbps && r->bytes() > 0) r->set_achieved_gbps(r->bytes() / t);
  }
  r->set_roof_note(absl::StrCat(above, " of its ", with_work, " kernel rows with work ran above the "
                                "roof (", first, "): their derived work overstates what they "
                                "moved, so the role's work, rates and fraction are over the "
                                "other rows"));
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
  // Rows above the roof: left out of the role's rates and fraction (below).
  uint32_t above = 0;
  std::string first_above;
  double above_flops = 0, above_bytes = 0, above_time = 0;
  uint64_t above_launches = 0;
};

void FillDeviceRoofs(const devices::DeviceSpec& d, proto::DeviceRoofs* roofs) {
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
}

// One kernel row's fraction of roof and bound, added to its role's sums.
void KernelRoof(const devices::DeviceSpec& d, proto::KernelRow& k, RoleSums& r) {
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
    return;
  }
  const double time = static_cast<double>(k.work_time_ns());
  const double f = roof / time;
  k.set_peak_fraction(f);
  if (f > kAboveRoofFraction) {
    // Faster than the datasheet allows: the work from shapes is more than the kernel
    // moved (a gather reads rows, not the table; a sliding window reads part of the keys)
    // or its bytes came from a cache. The row keeps its figures, says so, and stays out of
    // its role's rates and fraction.
    k.set_bound("above_roof");
    k.set_work_note(absl::StrCat(
        k.work_note(), k.work_note().empty() ? "" : "; ",
        absl::StrFormat("above the roof: %.3gx what %s allows, so the work derived for it "
                        "overstates what it moved (or its data came from a cache); left "
                        "out of its role's rates and fraction",
                        f, d.name)));
    if (r.above++ == 0) r.first_above = absl::StrFormat("%s: %.3gx", k.name(), f);
    r.above_flops += k.flops();
    r.above_bytes += k.bytes();
    r.above_time += time;
    r.above_launches += k.work_launches();
    return;
  }
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

void RoleRoof(const RoleSums& s, proto::RoleRow& r) {
  if (s.above > 0) ExcludeAboveRoof(s.above, s.with_work, s.first_above, s.above_flops,
                                    s.above_bytes, s.above_time, s.above_launches, &r);
  if (s.missing > 0) {
    r.set_roof_note(absl::StrCat(r.roof_note(), r.roof_note().empty() ? "" : "; ",
                                 "no fraction of roof: ", s.missing, " of its ", s.with_work,
                                 " kernel rows with work have no roofline position (",
                                 s.first_missing, ")"));
    return;
  }
  if (s.time <= 0) return;
  const double f = s.roof / s.time;
  r.set_peak_fraction(f);
  r.set_bound(f < kLatencyFraction ? "latency" : s.mem >= s.cmp ? "memory" : "compute");
}

}  // namespace

void FillRoofs(const devices::DeviceSpec& d, proto::Profile* profile) {
  FillDeviceRoofs(d, profile->mutable_roofs());
  std::map<std::string, RoleSums> roles;
  for (proto::KernelRow& k : *profile->mutable_kernels()) {
    k.clear_peak_fraction();
    k.clear_bound();
    if (k.work_launches() == 0 || k.work_time_ns() == 0) continue;
    KernelRoof(d, k, roles[k.role()]);
  }
  for (proto::RoleRow& r : *profile->mutable_roles()) {
    r.clear_peak_fraction();
    r.clear_bound();
    r.clear_roof_note();
    auto it = roles.find(r.role());
    if (it != roles.end()) RoleRoof(it->second, r);
  }
}

}  // namespace qprof::work
