// Tensor-parallel partitioning of the bundled model (qprof run --tp N): which heads,
// experts and shared-expert columns rank r holds (runtime/tp_shape.h, weight-free, also
// read by the decode plan), and the host-side weight slices. Plain
// C++ (no CUDA), so the partitioning is tested on the CPU reference kernels
// (tests/runtime/tp_partition_test.cc); runtime/cuda runs one rank per GPU over NCCL.
//
// The split (one all-reduce after attention and one after the MoE, Megatron style):
//  - attention: rank r holds heads [r*H/N, (r+1)*H/N): the rows of wq_b of those heads
//    (head h = rows [h*d_qk, (h+1)*d_qk)) and the columns of wo_a that read them (head h =
//    columns [h*kv_lora, (h+1)*kv_lora)). wo_a and wo_b are linear, so
//      wo_b (wo_a attn) = sum_r wo_b (wo_a[:, heads_r] attn[heads_r]):
//    each rank's output projection is a partial sum of the hidden-state update.
//    Everything else (norms, wq_a, wkv_a, the latent KV cache, the indexer) is replicated:
//    the latent KV row is shared by all heads (MLA), so it cannot be split by head.
//  - routed experts: rank r holds experts [r*E/N, (r+1)*E/N); the router runs replicated
//    (full gate, top-k over all E) and each rank computes only the slots routed to its
//    experts (the others get id -1 = skip, LocalExpertIds). Sum over ranks = full MoE.
//  - shared expert: split along its intermediate dimension Is (columns [r*Is/N, ...) of
//    the gate and up rows of W13 and the same columns of W2). SwiGLU is elementwise in the
//    intermediate, so W2 h = sum_r W2[:, cols_r] h[cols_r]. Chosen over replication because
//    decode is bound by weight bytes: each rank reads 1/N of the shared weights and the
//    result needs no scaling (replicate-and-scale reads N times the bytes and rounds).
//    When Is/N is not a multiple of the FP4 scale block (a block cannot be split) or of
//    the expert kernel's inter granule (CUDA: 32 slot_gemv, 128 fp4_mma, 256 w4a16_mma),
//    the shared expert runs whole on rank 0 and the other ranks skip it (still exact, only
//    unbalanced); MakeTpSlice says which.
// The residual: rank 0's partial output accumulates onto the residual x, the other ranks
// write their partial alone, so the all-reduce (sum) leaves x + update on every rank.
#ifndef QPROF_RUNTIME_TP_PARTITION_H_
#define QPROF_RUNTIME_TP_PARTITION_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/model_arch.h"
#include "runtime/model_weights.h"
#include "runtime/tp_shape.h"

namespace qprof::runtime {

// The weights rank `s.rank` holds: wq_b, wo_a, the routed and the shared expert stacks
// sliced as above (shapes shrink), every other tensor copied. The config is unchanged
// (the full model): the slice says what is local. tp = 1 returns an equal copy.
absl::StatusOr<ModelWeights> SliceWeights(const ModelWeights& full, const TpSlice& s);

// Routed slot ids made local: id in [expert_begin, expert_end) -> id - expert_begin,
// anything else -> -1 (skip). The CPU twin of the CUDA remap kernel (runtime/cuda).
void LocalExpertIds(const int32_t* ids, int64_t n, int expert_begin, int expert_end,
                    int32_t* out);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_TP_PARTITION_H_
