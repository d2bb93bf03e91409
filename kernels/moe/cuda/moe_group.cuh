// Grouping helpers of the MoE paths, compiled once per path and format under the path's
// kernel-name prefix (e.g. qprof_moe_w4a16_mma_nvfp4_align), so that their time is
// attributed to the path:
//   *_align:   slots -> per-expert lists (expert_offsets, sorted_slots in increasing
//                      slot order, as MoeAlignCpu) and the compact list of active experts, so
//                      that GEMM grids cover only experts that received tokens;
//   *_permute_bf16: x rows gathered in sorted-slot order as BF16, k permuted within
//                      groups of 4 as (k0, k2, k1, k3) to match the W4A16 fragment decode;
//   *_combine: out[t] += sum_j w[t,j] * slot_out[t*topk+j] (deterministic: no atomics).
// The bodies are written against the warp primitives (warp_ops.h), so that the CPU warp
// emulation runs them as part of the grouped paths (tests/kernels/warp_emu).
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_GROUP_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_GROUP_CUH_

#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/moe/cuda/w4a16_lanes.h"  // W4PermGroupBf16
#include "kernels/moe/params.h"
#include "kernels/moe/slot_out.h"

namespace qprof::kernels::cuda {

inline constexpr int kAlignThreads = 1024;
inline constexpr int kAlignMaxSlots = 8192;
inline constexpr int kAlignMaxExperts = 1024;
inline constexpr int kPermuteThreads = 256;
inline constexpr int kCombineThreads = 256;

// Launch shapes shared by the launchers (moe_group.cu) and the warp emulation. Align: one
// block of kAlignThreads with the slots' expert ids and the offsets in dynamic shared
// memory; permute: one block per slot (blocks past the grouped rows exit); combine: one
// block per token.
inline size_t MoeAlignSmemBytes(int slots, int experts) {
  return static_cast<size_t>(slots + experts + 1) * sizeof(int32_t);
}
inline LaunchDims MoePermuteGrid(const MoeParams& p) { return {static_cast<unsigned>(p.tokens * p.topk), 1, 1}; }
inline LaunchDims MoeCombineGrid(const MoeParams& p) { return {static_cast<unsigned>(p.tokens), 1, 1}; }

// One block. ids staged in shared memory; thread e counts and then fills expert e in slot
// order (stable). O(S) per thread: fine for decode (S = tokens * topk <= 8192).
QPROF_WARP_FN void AlignBody(const int32_t* __restrict__ topk_ids, int slots, int experts,
                             int32_t* __restrict__ sorted_slots, int32_t* __restrict__ expert_offsets,
                             int32_t* __restrict__ active_experts, int32_t* __restrict__ num_active) {
  int32_t* ids = reinterpret_cast<int32_t*>(DynamicShared());  // [slots]
  int32_t* offs = ids + slots;                                  // [experts + 1]
  for (int s = ThreadIdxX(); s < slots; s += BlockDimX()) StShared<int32_t>(ids + s, topk_ids[s]);
  SyncThreads();
  for (int e = ThreadIdxX(); e < experts; e += BlockDimX()) {
    int c = 0;
    for (int s = 0; s < slots; ++s) c += LdShared<int32_t>(ids + s) == e;
    StShared<int32_t>(offs + e + 1, c);
  }
  SyncThreads();
  if (ThreadIdxX() == 0) {
    StShared<int32_t>(offs, 0);
    int active = 0, total = 0;  // total = offs[e], kept in a register
    for (int e = 0; e < experts; ++e) {
      const int32_t c = LdShared<int32_t>(offs + e + 1);
      if (c > 0) active_experts[active++] = e;
      total += c;
      StShared<int32_t>(offs + e + 1, total);
    }
    *num_active = active;
  }
  SyncThreads();
  for (int e = ThreadIdxX(); e <= experts; e += BlockDimX()) expert_offsets[e] = LdShared<int32_t>(offs + e);
  for (int e = ThreadIdxX(); e < experts; e += BlockDimX()) {
    int pos = LdShared<int32_t>(offs + e);
    for (int s = 0; s < slots; ++s)
      if (LdShared<int32_t>(ids + s) == e) sorted_slots[pos++] = s;
  }
  for (int i = LdShared<int32_t>(offs + experts) + ThreadIdxX(); i < slots; i += BlockDimX()) sorted_slots[i] = -1;
}

// Row i of the grouped activations = x[sorted_slots[i] / topk] as BF16, k-permuted (PermK4).
QPROF_WARP_FN void PermuteBody(const float* __restrict__ x, const int32_t* __restrict__ sorted_slots,
                               const int32_t* __restrict__ expert_offsets, int experts, int topk, int dim,
                               uint16_t* __restrict__ act) {
  const int i = BlockIdxX();
  if (i >= expert_offsets[experts]) return;
  const int token = sorted_slots[i] / topk;
  const float* xr = x + static_cast<int64_t>(token) * dim;
  U32x2* out = reinterpret_cast<U32x2*>(act + static_cast<int64_t>(i) * dim);
  for (int g = ThreadIdxX(); g < dim / 4; g += BlockDimX()) {
    const F32x4 v = LdGlobal<F32x4>(xr + 4 * g);
    U32x2 o;
    W4PermGroupBf16(v.x, v.y, v.z, v.w, o.x, o.y);
    StGlobal<U32x2>(out + g, o);
  }
}

// out[t] += the routing-weighted sum of token t's slot outputs (MoeCombineSlots).
QPROF_WARP_FN void CombineBody(const float* __restrict__ slot_out, const int32_t* __restrict__ topk_ids,
                               const float* __restrict__ topk_weights, int topk, int dim,
                               float* __restrict__ out) {
  const int t = BlockIdxX();
  for (int n = ThreadIdxX(); n < dim; n += BlockDimX())
    out[static_cast<int64_t>(t) * dim + n] += MoeCombineSlots(slot_out, topk_ids, topk_weights, t, topk, dim, n);
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_GROUP_CUH_
