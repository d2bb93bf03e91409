// Format ceilings of one role from its measured work: what the role's weights would cost
// per step in another format on the profiled device, next to what was measured. For
// third-party traces, whose work comes from the op calls' shapes (analysis/work) or from
// --model-shape (MoE), and for our own traces (registry work models).
//
// Per step (the role's work over `steps`):
//   measured     time = the launches with work (measured), achieved = bytes / time,
//                bandwidth fraction = achieved / BW
//   at the roof  max(bytes / BW, flops / roof(pipe))     pipe: the role's, at its precision
//   as format F  bytes_F = P * bpw(F) / 8 + (bytes - weight bytes),  P = the weights'
//                parameters (weight bytes * 8 / their bits per weight)
//                time_F  = max(bytes_F / BW, flops / rate(pipe the format routes to))
// Each figure names its source: time measured, bytes derived from shapes or modelled,
// roofs from the device table.
#ifndef QPROF_ANALYSIS_CEILINGS_ROLE_CEILINGS_H_
#define QPROF_ANALYSIS_CEILINGS_ROLE_CEILINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/devices/device_specs.h"
#include "proto/profile.pb.h"

namespace qprof::ceilings {

struct RoleWork {
  std::string role;
  double flops = 0, bytes = 0, weight_bytes = 0, weight_params = 0, time_ns = 0;
  uint64_t work_launches = 0, launches = 0;
  std::vector<std::string> formats;  // the weights' formats as measured
  std::string pipe;                  // the roof pipe of its FLOPs ("" for bytes only)
  std::string bytes_source;          // "derived from shapes", "modelled from --model-shape ..."
  std::string time_source;           // "measured on GPU", "imported from trace.json"
};

// Empty role when the work has no weights or no time.
proto::RoleCeiling RoleCeilingFor(const devices::DeviceSpec& device, const RoleWork& work,
                                  double steps, const std::string& steps_source);

}  // namespace qprof::ceilings

#endif  // QPROF_ANALYSIS_CEILINGS_ROLE_CEILINGS_H_
