// Parameters of the MoE expert kernels (routed experts and the shared expert), shared by
// the CPU references (kernels/moe/moe_cpu.h) and the CUDA variants (kernels/moe/cuda).
//
// One call computes, for every token t and each of its top-k slots j with expert
// e = topk_ids[t, j] (skipped when e < 0):
//   g = W1[e] x[t],  u = W3[e] x[t]                              (gate, up: [inter])
//   g = min(g, limit); u = clamp(u, -limit, limit)   (swiglu clamp; off when limit <= 0)
//   h = silu(g) * u = g / (1 + exp(-g)) * u                       ([inter])
//   out[t] += topk_weights[t, j] * (W2[e] h)                      ([dim], accumulated)
// The shared expert is the same computation with experts = 1, topk = 1, ids 0, weight 1.
//
// Weights: W1 and W3 are stored fused as W13 = [W1; W3] ([2*inter, dim] per expert, gate
// rows first), W2 as [dim, inter]; each is FP4 in `format`, row-major, K contiguous:
//   packed  [rows, K/2]      byte i = element 2i (low nibble) | element 2i+1 (high nibble)
//   scales  [rows, K/block]  UE8M0 codes (MXFP4, block 32) or E4M3 codes (NVFP4, block 16)
//   scale2  one FP32 per expert matrix (NVFP4 weight_scale_2; W1 and W3 share one);
//           null for MXFP4
// Dequantised weight = E2M1(nibble) * scale(block) [* scale2].
//
// Kernel paths (registry ids in kernels/registry):
//  - slot_gemv: one (token, slot) pair per program; each slot decodes its expert's
//    weights again: weight bytes read = tokens * topk * expert bytes. No tensor cores.
//  - grouped (CPU) / w4a16_mma / fp4_mma (CUDA): slots grouped by expert
//    (sorted_slots/expert_offsets below); each expert's weight tile is decoded once and
//    reused for all its slots: weight bytes read = unique experts * expert bytes.
// The results of all paths agree up to FP32 summation order.
#ifndef QPROF_KERNELS_MOE_PARAMS_H_
#define QPROF_KERNELS_MOE_PARAMS_H_

#include <cstdint>

#include "kernels/common/params.h"

namespace qprof::kernels {

// One FP4 matrix stack: `count` matrices of [rows, cols], stored back to back.
struct Fp4Weights {
  const uint8_t* packed = nullptr;   // [count, rows, cols/2]
  const uint8_t* scales = nullptr;   // [count, rows, cols/block]
  const float* scale2 = nullptr;     // [count] NVFP4 weight_scale_2; null for MXFP4
};

struct MoeParams {
  Fp4Format format = Fp4Format::kMxfp4;
  int tokens = 0;                    // B (rows of x)
  int dim = 0;                       // hidden size: K of W13, N of W2; multiple of block
  int inter = 0;                     // expert intermediate size: K of W2; multiple of block
  int experts = 0;                   // E experts held in w13/w2
  int topk = 0;                      // slots per token
  float swiglu_limit = 0.0f;         // clamp of gate (above) and up (both sides); <= 0: off

  const float* x = nullptr;          // [tokens, dim] input activations
  const uint16_t* x_bf16 = nullptr;  // [tokens, dim] optional BF16 copy (CUDA W4A16 paths)
  const int32_t* topk_ids = nullptr;      // [tokens, topk] expert per slot; < 0 = skip
  const float* topk_weights = nullptr;    // [tokens, topk] routing weight per slot

  Fp4Weights w13;                    // [experts, 2*inter, dim]  gate rows then up rows
  Fp4Weights w2;                     // [experts, dim, inter]

  float* out = nullptr;              // [tokens, dim] accumulated: out += sum_j w * expert

  // Grouping for the grouped paths, made by MoeAlignCpu (or a CUDA align kernel). The
  // slot s = t * topk + j of token t. Slots of expert e are
  // sorted_slots[expert_offsets[e] .. expert_offsets[e+1]), in increasing slot order.
  // The CPU grouped kernel builds these itself when they are null.
  const int32_t* sorted_slots = nullptr;    // [tokens * topk]
  const int32_t* expert_offsets = nullptr;  // [experts + 1]

  // Scratch: the SwiGLU output of every slot. Null: the kernel allocates its own.
  float* slot_hidden = nullptr;      // [tokens * topk, inter]

  // The slot_out contract, obeyed by every path (CPU paths keep it in a local buffer, CUDA
  // paths in their workspace): slot_out[s, n] = (W2[e_s] h_s)[n] for slot s = t*topk + j,
  // the expert's output WITHOUT the routing weight (NVFP4: weight_scale_2 applied, the
  // FP4 scales folded in). The one combine (MoeCombineSlots, kernels/moe/slot_out.h) then
  // adds out[t, n] += sum_j topk_weights[s] * slot_out[s, n] over slots with id >= 0, so
  // the routing weight is applied exactly once. Rows of skipped slots (id < 0) are never
  // read and may hold anything.

  // CPU worker pool (kernels/common/thread_pool.h); null = the calling thread only.
  // Ignored by CUDA.
  ThreadPool* pool = nullptr;
};

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MOE_PARAMS_H_
