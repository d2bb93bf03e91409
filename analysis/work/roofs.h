// Where each kernel row and role stands against the profiled device's roofs.
//
//   roof pipe       the pipe and precision a row's FLOPs run on: SIMT rows on simt_fp32;
//                   tensor rows on tensor_<precision> (bf16, fp16, tf32 for FP32 operands,
//                   fp8, fp4), from the work's precision; a registry work model names its
//                   pipe; rows with bytes only have none (HBM roof only)
//   peak_fraction   roofline time / measured time of the launches with work, with
//                   roofline time = max(bytes / BW, flops / roof(pipe)): 1 means at the roof
//                   that binds the work's arithmetic intensity
//   bound           "above_roof" above kAboveRoofFraction (the work overstated, or cached);
//                   "latency" when the row reaches under kLatencyFraction of its roof, or
//                   under kDiagnosedFraction with a latency or parallelism diagnosis
//                   (occupancy/diagnosis.h: too few blocks or warps to cover latency); else
//                   "memory" when bytes / BW >= flops / roof (the intensity is under the
//                   ridge point), "compute" otherwise
// Roles sum their rows: roofline time and work time over the rows with a peak fraction.
// BW is DeviceSpec::EffectiveBandwidthGbps (measured copy rate when the table has one).
#ifndef QPROF_ANALYSIS_WORK_ROOFS_H_
#define QPROF_ANALYSIS_WORK_ROOFS_H_

#include <string>
#include <string_view>

#include "analysis/devices/device_specs.h"
#include "proto/profile.pb.h"

namespace qprof::work {

// A quarter of the roof: the threshold the occupancy diagnosis uses for "far under the
// roofline" (occupancy::kFarUnderRooflineFraction), stated, not fitted.
inline constexpr double kLatencyFraction = 0.25;
// A diagnosed kernel (under one wave, or low occupancy) counts as latency-bound up to half
// of its roof: the streaming threshold of the diagnosis (occupancy::kStreamingFraction).
// Above it the work runs near a roof whatever its waves, and the diagnosis stays a remark.
inline constexpr double kDiagnosedFraction = 0.5;
// Above the datasheet roof: a row's derived work is more than it can have moved in its time
// (or its data came from a cache). Such a row is bound "above_roof", says so in its
// work_note, and its role's work, rates and fraction leave it out (RoleRow.roof_note).
inline constexpr double kAboveRoofFraction = 1.0;

// "simt_fp32", "tensor_bf16", ...; "" when no roof applies (no FLOPs, or a class or
// precision without one).
std::string RoofPipe(std::string_view pipe_class, std::string_view precision, double flops);

// Sets peak_fraction and bound on every kernel row with work and every role, on `device`.
void FillRoofs(const devices::DeviceSpec& device, proto::Profile* profile);

// The roofline time of `flops` and `bytes` on `device` with `pipe` (ns); -1 when FLOPs
// need a pipe the device lacks.
double RoofTimeNs(const devices::DeviceSpec& device, double flops, double bytes,
                  std::string_view pipe, double* memory_ns = nullptr, double* compute_ns = nullptr);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_ROOFS_H_
