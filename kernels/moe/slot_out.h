// The `slot_out` contract of the MoE paths (stated in kernels/moe/params.h), in the one
// function every path's combine uses, host and device: slot_out holds the expert output of
// each slot WITHOUT its routing weight, and the combine applies the weight exactly once.
#ifndef QPROF_KERNELS_MOE_SLOT_OUT_H_
#define QPROF_KERNELS_MOE_SLOT_OUT_H_

#include <stdint.h>

#include "kernels/common/reg_ops.h"

namespace qprof::kernels {

// sum over the token's slots j of topk_weights[s] * slot_out[s, n], s = t*topk + j, in slot
// order, skipping slots with id < 0 (their slot_out rows are never read).
QPROF_HDI float MoeCombineSlots(const float* slot_out, const int32_t* topk_ids,
                                const float* topk_weights, int t, int topk, int dim, int n) {
  float acc = 0.f;
  for (int j = 0; j < topk; ++j) {
    const int s = t * topk + j;
    if (topk_ids[s] < 0) continue;
    acc += topk_weights[s] * slot_out[static_cast<int64_t>(s) * dim + n];
  }
  return acc;
}

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MOE_SLOT_OUT_H_
