#include "analysis/ceilings/role_ceilings.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/ceilings/ceilings.h"
#include "analysis/work/roofs.h"

namespace qprof::ceilings {
namespace {

constexpr const char* kFormats[] = {"nvfp4", "mxfp4", "fp8", "bf16"};

std::string Bytes(double b) {
  if (b >= 1e9) return absl::StrFormat("%.3g GB", b / 1e9);
  if (b >= 1e6) return absl::StrFormat("%.3g MB", b / 1e6);
  if (b >= 1e3) return absl::StrFormat("%.3g kB", b / 1e3);
  return absl::StrFormat("%.0f B", b);
}

std::string Time(double ns) {
  if (ns >= 1e6) return absl::StrFormat("%.3g ms", ns / 1e6);
  if (ns >= 1e3) return absl::StrFormat("%.3g us", ns / 1e3);
  return absl::StrFormat("%.3g ns", ns);
}

std::string Rate(double gbps) {
  return gbps >= 1000 ? absl::StrFormat("%.3g TB/s", gbps / 1000) : absl::StrFormat("%.3g GB/s", gbps);
}

}  // namespace

proto::RoleCeiling RoleCeilingFor(const devices::DeviceSpec& d, const RoleWork& w, double steps,
                                  const std::string& steps_source) {
  proto::RoleCeiling c;
  if (w.weight_bytes <= 0 || w.time_ns <= 0 || steps <= 0) return c;
  c.set_role(w.role);
  c.set_steps(steps);
  c.set_steps_source(steps_source);
  c.set_work_launches(w.work_launches);
  c.set_launches(w.launches);
  const double bytes = w.bytes / steps, weights = w.weight_bytes / steps;
  const double params = w.weight_params / steps, flops = w.flops / steps;
  const double time = w.time_ns / steps;
  c.set_bytes_per_step(bytes);
  c.set_weight_bytes_per_step(weights);
  c.set_flops_per_step(flops);
  c.set_time_per_step_ns(time);
  const double bw = d.EffectiveBandwidthGbps();
  c.set_achieved_gbps(w.bytes / w.time_ns);
  if (bw > 0) c.set_bandwidth_fraction(c.achieved_gbps() / bw);
  const double roof = work::RoofTimeNs(d, flops, bytes, w.pipe);
  if (roof > 0) c.set_roof_time_ns(roof);
  c.set_current_format(w.formats.size() == 1 ? w.formats.front()
                       : w.formats.empty()    ? "unknown"
                                              : absl::StrJoin(w.formats, "+"));
  c.set_bytes_source(w.bytes_source);
  c.set_time_source(w.time_source);
  c.set_roof_source(absl::StrCat("BW ", absl::StrFormat("%.0f", bw), " GB/s (",
                                 d.EffectiveBandwidthSource(), ")"));
  std::string note = absl::StrFormat(
      "%s reads %s per step (%s) at %s (%.0f%% of %s's memory bandwidth; time measured)",
      w.role, Bytes(bytes), w.bytes_source, Rate(c.achieved_gbps()),
      100 * c.bandwidth_fraction(), d.name);
  if (roof > 0) {
    absl::StrAppend(&note, absl::StrFormat("; at the roof %s (modelled, %s)", Time(roof),
                                           w.pipe.empty() ? "bytes / BW" : absl::StrCat("max(bytes / BW, FLOPs / ", w.pipe, ")")));
  }
  const double other = bytes - weights;
  for (const char* f : kFormats) {
    const double bpw = BitsPerWeight(f);
    proto::RoleFormatTime* ft = c.add_formats();
    ft->set_format(f);
    ft->set_bits_per_weight(bpw);
    const std::string pipe = PipeForFormat(d, f);
    ft->set_pipe(pipe);
    const double fbytes = params * bpw / 8 + other;
    ft->set_bytes_per_step(fbytes);
    double mem = 0, cmp = 0;
    const double t = work::RoofTimeNs(d, flops, fbytes, pipe, &mem, &cmp);
    ft->set_memory_time_ns(mem);
    ft->set_compute_time_ns(cmp);
    if (t > 0) ft->set_time_ns(t);
    ft->set_bound(mem >= cmp ? "memory" : "compute");
    ft->set_is_current(w.formats.size() == 1 && w.formats.front() == f);
    absl::StrAppend(&note, absl::StrFormat("; as %s (%.4g bits per weight) on %s %s (%s, modelled)",
                                           absl::AsciiStrToUpper(f), bpw, pipe,
                                           t > 0 ? Time(t) : "n/a", Bytes(fbytes)));
  }
  c.set_note(note);
  return c;
}

}  // namespace qprof::ceilings
