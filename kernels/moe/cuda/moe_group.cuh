// Grouping helpers of the MoE paths, compiled once per path and format under the path's
// kernel-name prefix (e.g. qprof_moe_w4a16_mma_nvfp4_align), so that their time is
// attributed to the path:
//   *_align:   slots -> per-expert lists (expert_offsets, sorted_slots in increasing
//                      slot order, as MoeAlignCpu) and the compact list of active experts, so
//                      that GEMM grids cover only experts that received tokens;
//   *_permute_bf16: x rows gathered in sorted-slot order as BF16, k permuted within
//                      groups of 4 as (k0, k2, k1, k3) to match the W4A16 fragment decode;
//   *_combine: out[t] += sum_j w[t,j] * slot_out[t*topk+j] (deterministic: no atomics).
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_GROUP_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_GROUP_CUH_

#include <stdint.h>

#include "kernels/moe/cuda/w4a16_lanes.h"  // PermK4

namespace qprof::kernels::cuda {

inline constexpr int kAlignThreads = 1024;
inline constexpr int kAlignMaxSlots = 8192;
inline constexpr int kAlignMaxExperts = 1024;

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_GROUP_CUH_
