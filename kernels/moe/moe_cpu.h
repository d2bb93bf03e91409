// CPU MoE expert kernels (params and the computation in kernels/moe/params.h).
//
//  - MoeReferenceCpu: the plainest loop. Dequantises each used expert matrix whole with
//    the format's reference decoder (kernels/formats) and accumulates every dot product
//    in FP32 in index order. The oracle for the fast CPU paths and for the CUDA kernels.
//  - MoeSlotGemvCpu: the slot path. Work items are (slot, row tile); every slot decodes
//    its expert's FP4 rows again (a 256-entry byte -> two-floats table, then a vectorised
//    dot with x), so weight decode work grows with tokens * topk, as on the GPU SIMT path.
//  - MoeGroupedCpu: the grouped path. Work items are (expert, row tile); the tile is
//    dequantised once into FP32 and reused for all slots routed to that expert: the CPU
//    counterpart of the W4A16 / native FP4 tensor-core paths.
// All three give the same result up to FP32 summation order. `out` is accumulated.
#ifndef QPROF_KERNELS_MOE_MOE_CPU_H_
#define QPROF_KERNELS_MOE_MOE_CPU_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/moe/params.h"

namespace qprof::kernels {

// SwiGLU with the clamp (gpt-oss / DeepSeek swiglu_limit; off when limit <= 0): the gate
// is clamped from above, the up projection on both sides, h = silu(g) * u.
inline float SwiGlu(float g, float u, float limit) {
  if (limit > 0) {
    g = std::min(g, limit);
    u = std::min(std::max(u, -limit), limit);
  }
  return g / (1.0f + std::exp(-g)) * u;
}

// InvalidArgument (naming the field) for null pointers, dims not multiples of the block,
// expert ids out of range, missing NVFP4 scale2.
absl::Status ValidateMoeParams(const MoeParams& p);

absl::Status MoeReferenceCpu(const MoeParams& p);
absl::Status MoeSlotGemvCpu(const MoeParams& p);
absl::Status MoeGroupedCpu(const MoeParams& p);

// Groups slots by expert (counting sort, stable): see MoeParams::sorted_slots.
// sorted_slots [tokens*topk] (entries past expert_offsets[experts] are -1 for skipped
// slots), expert_offsets [experts+1].
void MoeAlignCpu(const int32_t* topk_ids, int tokens, int topk, int experts,
                 int32_t* sorted_slots, int32_t* expert_offsets);

// Distinct experts among topk_ids (ids < 0 ignored).
int CountUniqueExperts(const int32_t* topk_ids, int tokens, int topk, int experts);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MOE_MOE_CPU_H_
