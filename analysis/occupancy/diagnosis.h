// Which kernels are latency- or parallelism-bound, with the numbers that show it and what
// would lift the bound (KernelRow.diagnosis), from each row's launch statistics
// (KernelRow.launch) and its position against the memory roof: the achieved bandwidth of
// its work, else its measured DRAM throughput (ncu, CUPTI).
//
//   parallelism_bound  the launches fill under one wave (time-weighted mean waves < 1), the
//                      grid leaves SMs without a block (under kFillsSmsFraction of them:
//                      one block per SM on every SM is a persistent kernel's design, not
//                      starvation) and SMs sit idle or the estimated occupancy is under
//                      kLowOccupancyPct, unless the kernel already streams at
//                      kStreamingFraction of the device bandwidth; "128 blocks on 188 SMs
//                      (3 fit per SM): 0.23 waves, 60 SMs idle". Without a roofline
//                      position the launch shape is only a hint: the diagnosis is a
//                      hypothesis (LatencyDiagnosis.hypothesis) with what would settle it,
//                      and reports ask it as a question.
//   latency_bound      at least one wave, but the estimated occupancy is under
//                      kLowOccupancyPct and the achieved bandwidth (work model known) is
//                      under kFarUnderRooflineFraction of the device's: too few warps in
//                      flight to cover memory latency (Little's law).
// Communication kernels (class comm) are not diagnosed: the link bounds them and their block
// count is a channel count. Remedies name the limiter: more blocks (split-K, more programs per token or head, more
// tokens per launch) for too few blocks; fewer registers or less shared memory per block
// when those cap the blocks per SM.
#ifndef QPROF_ANALYSIS_OCCUPANCY_DIAGNOSIS_H_
#define QPROF_ANALYSIS_OCCUPANCY_DIAGNOSIS_H_

#include "proto/profile.pb.h"

namespace qprof::occupancy {

// Under a quarter of the warp slots: 16 of 64 warps per SM on H100/B200 (12 of 48 on
// sm_120). A stated threshold, not a fitted one: the CUDA Best Practices Guide gives no
// absolute figure, and Nsight Compute only compares achieved with theoretical occupancy.
inline constexpr double kLowOccupancyPct = 25.0;
// Achieved bandwidth under a quarter of the device's sustained bandwidth: far from the
// memory roofline a decode kernel should approach.
inline constexpr double kFarUnderRooflineFraction = 0.25;
// A kernel at half the device bandwidth or more is memory-bound whatever its waves.
inline constexpr double kStreamingFraction = 0.5;
// A grid with a block for at least this share of the SMs fills them: persistent and
// cluster-launched kernels leave a few SMs out by design (128 CTAs in clusters of 2 on
// 132 SMs), which is not starvation.
inline constexpr double kFillsSmsFraction = 0.9;

// Sets KernelRow.diagnosis on the rows that qualify and fills the latency fields of
// Profile.launch_summary. `device_bandwidth_gbps` is the profiled device's (0 = unknown:
// only the wave test applies).
void Diagnose(double device_bandwidth_gbps, proto::Profile* profile);

}  // namespace qprof::occupancy

#endif  // QPROF_ANALYSIS_OCCUPANCY_DIAGNOSIS_H_
