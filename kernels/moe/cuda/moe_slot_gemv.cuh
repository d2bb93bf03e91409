// MoE `slot_gemv` (SIMT): one (token, slot) per program, as SGLang's MXFP4 slot GEMV on
// sm_120. Each slot decodes its expert's FP4 rows again; nothing is reused across tokens
// routed to the same expert. That missing reuse and the FP32 pipe are the point of this
// path, so the kernel itself is made as fast as a SIMT GEMV can be:
//  - every lane streams 16-byte read-only loads (32 FP4 elements), a warp covers 512
//    contiguous bytes of a row per load, and each lane keeps kRows rows' loads in flight
//    (8 x 16 B by default) before the first use;
//  - decode by bit placement (device_helpers.cuh): one PRMT + shift + LOP3 per 4 elements
//    to FP16 pairs, HADD2.F32 to FP32, then FFMA into an FP32 block sum; the block scale
//    (with the decode's 2^14 folded in) is applied once per 32 elements;
//  - x is staged once per block in shared memory as FP32, padded by 16 bytes per 32
//    elements so that the 8 float4 reads of a quarter-warp hit 8 different bank groups.
// No tensor-core instruction is emitted (tests/kernels/sass checks the SASS).
//
// The bodies are written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles them into the kernels of moe_slot_gemv_<fmt>.cu, and the CPU warp emulation
// (tests/kernels/warp_emu/slot_gemv_emu_test.cc) runs these same functions for every thread
// of every block of the launch plans below.
//
// Kernels (extern "C" names, matched by the registry's cuda_kernel_name prefix):
//   qprof_moe_slot_gemv_<fmt>_w13: h[slot, j] = silu(clamp(W1 x)) * clamp(W3 x)
//   qprof_moe_slot_gemv_<fmt>_w2:  slot_out[s, n] = (W2[e_s] h[s])[n] (no routing weight:
//                                   the combine applies it, kernels/moe/params.h)
// followed by qprof_moe_slot_gemv_<fmt>_combine (out[t] += sum over the token's slots).
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_CUH_

#include <stddef.h>
#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/moe/cuda/fp4_scales.cuh"
#include "kernels/moe/cuda/moe_tile_lanes.h"  // MoeSwiGlu
#include "kernels/moe/cuda/slot_gemv_math.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

inline constexpr int kSlotGemvThreads = 256;  // 8 warps: 2 per scheduler on every SM
inline constexpr int kSlotGemvRowsPerWarp = 6;  // 3 features (gate+up): 6 x 16 B loads in flight per lane

// Stages x[0..k) into shared memory, padded layout: element i at (i/32)*36 + i%32.
QPROF_WARP_FN void StageX(const float* __restrict__ x, int k, float* xs) {
  for (int i = ThreadIdxX() * 4; i < k; i += BlockDimX() * 4) {
    const F32x4 v = LdGlobal<F32x4>(x + i);
    StShared<F32x4>(xs + SlotGemvXIndex(i), v);
  }
}

// sum_k W[row, k] * x[k] for kRows rows of one FP4 matrix, accumulated per lane (not yet
// reduced across the warp). rows[r] < 0 marks an unused row. 2^14 of the FP16 decode is
// folded into the scale.
template <bool kNvfp4, int kRows>
QPROF_WARP_FN void RowsDot(const uint8_t* __restrict__ packed, const uint8_t* __restrict__ scales,
                           const int (&rows)[kRows], int k, const float* __restrict__ xs,
                           float (&acc)[kRows]) {
  using T = Fp4Traits<kNvfp4>;
  const int lane = ThreadIdxX() & 31;
#if QPROF_MUTANT(TAIL_ELEMENT)  // body mutation: the last 16-byte chunk of every row is skipped
  const int chunks = (k >> 5) - 1;
#else
  const int chunks = k >> 5;  // 16-byte chunks per row
#endif
  const int64_t row_bytes = k >> 1;
  const int scales_per_row = k / T::kBlock;
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.f;
  for (int c = lane; c < chunks; c += 32) {
    U32x4 w[kRows];
    uint32_t sc[kRows];
    // Issue every row's load before the first use: kRows x 16 B in flight per lane.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = rows[r] < 0 ? rows[0] : rows[r];
      w[r] = LdgNc128(packed + row * row_bytes + c * 16);
      const uint8_t* s = scales + static_cast<int64_t>(row) * scales_per_row + c * T::kScalesPer16B;
      sc[r] = kNvfp4 ? static_cast<uint32_t>(Ldg<uint16_t>(s)) : static_cast<uint32_t>(Ldg<uint8_t>(s));
    }
    const float* xc = xs + c * kSlotGemvXPad;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float s0, s1;
      const uint32_t words[4] = {w[r].x, w[r].y, w[r].z, w[r].w};
      SlotGemvChunkDot(words, [&](int i) { return LdShared<float>(xc + i); }, s0, s1);
      acc[r] = SlotGemvAddChunk<kNvfp4>(acc[r], s0, s1, sc[r]);
    }
  }
}

struct SlotGemvW13Args {
  const float* x;            // [tokens, dim]
  const int32_t* topk_ids;   // [tokens, topk]
  const uint8_t* packed;     // [experts, 2*inter, dim/2]
  const uint8_t* scales;     // [experts, 2*inter, dim/block]
  const float* scale2;       // [experts] or null
  float* hidden;             // [tokens*topk, inter]
  int dim, inter, topk;
  float swiglu_limit;
};

template <bool kNvfp4>
QPROF_WARP_FN void SlotGemvW13Body(const SlotGemvW13Args& a) {
  float* xs = reinterpret_cast<float*>(DynamicShared());
  const int slot = BlockIdxY();
  const int token = slot / a.topk;
  const int e = LdGlobal<int32_t>(a.topk_ids + slot);
  const int warp = ThreadIdxX() >> 5, lane = ThreadIdxX() & 31;
  constexpr int kFeat = kSlotGemvRowsPerWarp / 2;  // gate + up row per feature
  const int j0 = (BlockIdxX() * (kSlotGemvThreads / 32) + warp) * kFeat;
  if (e < 0) {  // skipped slot: defined output
    for (int f = 0; f < kFeat; ++f)
      if (j0 + f < a.inter && lane == 0) StGlobal<float>(a.hidden + (static_cast<int64_t>(slot) * a.inter + j0 + f), 0.f);
    return;
  }
  StageX(a.x + static_cast<int64_t>(token) * a.dim, a.dim, xs);
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: x read before every thread staged its part
  SyncThreads();
#endif
  if (j0 >= a.inter) return;
  int rows[kSlotGemvRowsPerWarp];
#pragma unroll
  for (int f = 0; f < kFeat; ++f) {
    const bool ok = j0 + f < a.inter;
    rows[2 * f] = ok ? j0 + f : -1;
    rows[2 * f + 1] = ok ? a.inter + j0 + f : -1;
  }
  const int64_t rows_e = 2 * static_cast<int64_t>(a.inter);
  const uint8_t* packed = a.packed + e * rows_e * (a.dim / 2);
  const uint8_t* scales = a.scales + e * rows_e * (a.dim / Fp4Traits<kNvfp4>::kBlock);
  float acc[kSlotGemvRowsPerWarp];
  RowsDot<kNvfp4, kSlotGemvRowsPerWarp>(packed, scales, rows, a.dim, xs, acc);
  const float s2 = kNvfp4 ? LdGlobal<float>(a.scale2 + e) : 1.f;
#pragma unroll
  for (int f = 0; f < kFeat; ++f) {
    float g = WarpSum(acc[2 * f]) * s2;
    float u = WarpSum(acc[2 * f + 1]) * s2;
    if (lane == 0 && rows[2 * f] >= 0) {
      StGlobal<float>(a.hidden + (static_cast<int64_t>(slot) * a.inter + j0 + f), MoeSwiGlu(g, u, a.swiglu_limit));
    }
  }
}

struct SlotGemvW2Args {
  const float* hidden;       // [tokens*topk, inter]
  const int32_t* topk_ids;   // [tokens, topk]
  const uint8_t* packed;     // [experts, dim, inter/2]
  const uint8_t* scales;     // [experts, dim, inter/block]
  const float* scale2;       // [experts] or null
  float* slot_out;           // [tokens*topk, dim] = W2[e] h per slot (unweighted); 0 when skipped
  int dim, inter;
};

// One slot per program row of the grid (blockIdx.y = slot), as W13; the token's slots are
// summed afterwards by the path's combine kernel (deterministic, no atomics). Fewer rows per warp
// than W13 so that batch 1 still launches dim/32 * topk blocks (enough to fill the GPU).
inline constexpr int kSlotGemvW2RowsPerWarp = 4;

template <bool kNvfp4>
QPROF_WARP_FN void SlotGemvW2Body(const SlotGemvW2Args& a) {
  float* xs = reinterpret_cast<float*>(DynamicShared());
  const int slot = BlockIdxY();
  const int warp = ThreadIdxX() >> 5, lane = ThreadIdxX() & 31;
  constexpr int kR = kSlotGemvW2RowsPerWarp;
  const int n0 = (BlockIdxX() * (kSlotGemvThreads / 32) + warp) * kR;
  const int e = LdGlobal<int32_t>(a.topk_ids + slot);
  float* o = a.slot_out + static_cast<int64_t>(slot) * a.dim;
  if (e < 0) {
    if (lane < kR && n0 + lane < a.dim) StGlobal<float>(o + (n0 + lane), 0.f);
    return;
  }
  StageX(a.hidden + static_cast<int64_t>(slot) * a.inter, a.inter, xs);
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: h read before every thread staged its part
  SyncThreads();
#endif
  if (n0 >= a.dim) return;
  int rows[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) rows[r] = n0 + r < a.dim ? n0 + r : -1;
  const int64_t rows_e = a.dim;
  const uint8_t* packed = a.packed + e * rows_e * (a.inter / 2);
  const uint8_t* scales = a.scales + e * rows_e * (a.inter / Fp4Traits<kNvfp4>::kBlock);
  float acc[kR];
  RowsDot<kNvfp4, kR>(packed, scales, rows, a.inter, xs, acc);
  const float s2 = kNvfp4 ? LdGlobal<float>(a.scale2 + e) : 1.f;
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const float v = WarpSum(acc[r]);
    if (lane == 0 && rows[r] >= 0) StGlobal<float>(o + rows[r], SlotGemvW2Out(v, s2));  // no routing weight
  }
}

// Launch plans, shared by the launcher (moe_slot_gemv_launch.cuh) and the emulation:
// kSlotGemvThreads threads, one grid row per slot (tokens * topk), x (W13) or h (W2) staged
// in `smem` bytes of dynamic shared memory. W13: 24 features per block (8 warps x 3), the
// last block partial when inter % 24 != 0. W2: 32 output rows per block.
struct SlotGemvW13Launch {
  LaunchDims grid;
  size_t smem;
  SlotGemvW13Args args;
};
struct SlotGemvW2Launch {
  LaunchDims grid;
  size_t smem;
  SlotGemvW2Args args;
};
inline SlotGemvW13Launch SlotGemvW13Plan(const MoeParams& p, float* hidden) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  constexpr int kPerBlock = (kSlotGemvThreads / 32) * (kSlotGemvRowsPerWarp / 2);
  return {{static_cast<unsigned>((p.inter + kPerBlock - 1) / kPerBlock), static_cast<unsigned>(p.tokens * p.topk), 1},
          static_cast<size_t>(p.dim / 32) * kSlotGemvXPad * sizeof(float),
          {p.x, p.topk_ids, p.w13.packed, p.w13.scales, nv ? p.w13.scale2 : nullptr, hidden, p.dim, p.inter,
           p.topk, p.swiglu_limit}};
}
inline SlotGemvW2Launch SlotGemvW2Plan(const MoeParams& p, const float* hidden, float* slot_out) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  constexpr int kPerBlock = (kSlotGemvThreads / 32) * kSlotGemvW2RowsPerWarp;
  return {{static_cast<unsigned>((p.dim + kPerBlock - 1) / kPerBlock), static_cast<unsigned>(p.tokens * p.topk), 1},
          static_cast<size_t>(p.inter / 32) * kSlotGemvXPad * sizeof(float),
          {hidden, p.topk_ids, p.w2.packed, p.w2.scales, nv ? p.w2.scale2 : nullptr, slot_out, p.dim, p.inter}};
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_CUH_
