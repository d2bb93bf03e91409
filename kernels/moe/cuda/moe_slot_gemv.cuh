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
// Kernels (extern "C" names, matched by the registry's cuda_kernel_name prefix):
//   qprof_moe_slot_gemv_<fmt>_w13: h[slot, j] = silu(clamp(W1 x)) * clamp(W3 x)
//   qprof_moe_slot_gemv_<fmt>_w2:  slot_out[s, n] = (W2[e_s] h[s])[n] (no routing weight:
//                                   the combine applies it, kernels/moe/params.h)
// followed by qprof_moe_slot_gemv_<fmt>_combine (out[t] += sum over the token's slots).
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_CUH_

#include <stdint.h>

#include "kernels/common/cuda/device_helpers.cuh"
#include "kernels/moe/cuda/fp4_scales.cuh"
#include "kernels/moe/cuda/moe_tile_lanes.h"  // MoeSwiGlu
#include "kernels/moe/cuda/slot_gemv_math.h"

namespace qprof::kernels::cuda {

inline constexpr int kSlotGemvThreads = 256;  // 8 warps: 2 per scheduler on every SM
inline constexpr int kSlotGemvRowsPerWarp = 6;  // 3 features (gate+up): 6 x 16 B loads in flight per lane

// Stages x[0..k) into shared memory, padded layout: element i at (i/32)*36 + i%32.
__device__ __forceinline__ void StageX(const float* __restrict__ x, int k, float* xs) {
  for (int i = threadIdx.x * 4; i < k; i += blockDim.x * 4) {
    const float4 v = *reinterpret_cast<const float4*>(x + i);
    *reinterpret_cast<float4*>(xs + SlotGemvXIndex(i)) = v;
  }
}

// sum_k W[row, k] * x[k] for kRows rows of one FP4 matrix, accumulated per lane (not yet
// reduced across the warp). rows[r] < 0 marks an unused row. 2^14 of the FP16 decode is
// folded into the scale.
template <bool kNvfp4, int kRows>
__device__ __forceinline__ void RowsDot(const uint8_t* __restrict__ packed,
                                        const uint8_t* __restrict__ scales, const int (&rows)[kRows],
                                        int k, const float* __restrict__ xs, float (&acc)[kRows]) {
  using T = Fp4Traits<kNvfp4>;
  const int lane = threadIdx.x & 31;
  const int chunks = k >> 5;  // 16-byte chunks per row
  const int64_t row_bytes = k >> 1;
  const int scales_per_row = k / T::kBlock;
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.f;
  for (int c = lane; c < chunks; c += 32) {
    uint4 w[kRows];
    uint32_t sc[kRows];
    // Issue every row's load before the first use: kRows x 16 B in flight per lane.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int row = rows[r] < 0 ? rows[0] : rows[r];
      w[r] = LdgNc128(packed + row * row_bytes + c * 16);
      const uint8_t* s = scales + static_cast<int64_t>(row) * scales_per_row + c * T::kScalesPer16B;
      sc[r] = kNvfp4 ? static_cast<uint32_t>(__ldg(reinterpret_cast<const uint16_t*>(s)))
                     : static_cast<uint32_t>(__ldg(s));
    }
    const float* xc = xs + c * kSlotGemvXPad;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float s0, s1;
      const uint32_t words[4] = {w[r].x, w[r].y, w[r].z, w[r].w};
      SlotGemvChunkDot(words, xc, s0, s1);
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
__device__ __forceinline__ void SlotGemvW13Body(const SlotGemvW13Args& a) {
  extern __shared__ float4 smem_f4[];
  float* xs = reinterpret_cast<float*>(smem_f4);
  const int slot = blockIdx.y;
  const int token = slot / a.topk;
  const int e = a.topk_ids[slot];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int kFeat = kSlotGemvRowsPerWarp / 2;  // gate + up row per feature
  const int j0 = (blockIdx.x * (kSlotGemvThreads / 32) + warp) * kFeat;
  if (e < 0) {  // skipped slot: defined output
    for (int f = 0; f < kFeat; ++f)
      if (j0 + f < a.inter && lane == 0) a.hidden[static_cast<int64_t>(slot) * a.inter + j0 + f] = 0.f;
    return;
  }
  StageX(a.x + static_cast<int64_t>(token) * a.dim, a.dim, xs);
  __syncthreads();
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
  const float s2 = kNvfp4 ? a.scale2[e] : 1.f;
#pragma unroll
  for (int f = 0; f < kFeat; ++f) {
    float g = WarpSum(acc[2 * f]) * s2;
    float u = WarpSum(acc[2 * f + 1]) * s2;
    if (lane == 0 && rows[2 * f] >= 0) {
      a.hidden[static_cast<int64_t>(slot) * a.inter + j0 + f] = MoeSwiGlu(g, u, a.swiglu_limit);
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
__device__ __forceinline__ void SlotGemvW2Body(const SlotGemvW2Args& a) {
  extern __shared__ float4 smem_f4[];
  float* xs = reinterpret_cast<float*>(smem_f4);
  const int slot = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  constexpr int kR = kSlotGemvW2RowsPerWarp;
  const int n0 = (blockIdx.x * (kSlotGemvThreads / 32) + warp) * kR;
  const int e = a.topk_ids[slot];
  float* o = a.slot_out + static_cast<int64_t>(slot) * a.dim;
  if (e < 0) {
    if (lane < kR && n0 + lane < a.dim) o[n0 + lane] = 0.f;
    return;
  }
  StageX(a.hidden + static_cast<int64_t>(slot) * a.inter, a.inter, xs);
  __syncthreads();
  if (n0 >= a.dim) return;
  int rows[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) rows[r] = n0 + r < a.dim ? n0 + r : -1;
  const int64_t rows_e = a.dim;
  const uint8_t* packed = a.packed + e * rows_e * (a.inter / 2);
  const uint8_t* scales = a.scales + e * rows_e * (a.inter / Fp4Traits<kNvfp4>::kBlock);
  float acc[kR];
  RowsDot<kNvfp4, kR>(packed, scales, rows, a.inter, xs, acc);
  const float s2 = kNvfp4 ? a.scale2[e] : 1.f;
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const float v = WarpSum(acc[r]);
    if (lane == 0 && rows[r] >= 0) o[rows[r]] = SlotGemvW2Out(v, s2);  // no routing weight
  }
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_CUH_

#include "absl/status/status.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

template <typename W13Kernel, typename W2Kernel>
absl::Status LaunchSlotGemvImpl(const MoeParams& p, float* hidden, float* slot_out,
                                cudaStream_t stream, W13Kernel w13, W2Kernel w2,
                                const char* name) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  SlotGemvW13Args a1{p.x, p.topk_ids, p.w13.packed, p.w13.scales, nv ? p.w13.scale2 : nullptr,
                     hidden, p.dim, p.inter, p.topk, p.swiglu_limit};
  const int slots = p.tokens * p.topk;
  constexpr int kWarps = kSlotGemvThreads / 32;
  const dim3 g1((p.inter + kWarps * (kSlotGemvRowsPerWarp / 2) - 1) / (kWarps * (kSlotGemvRowsPerWarp / 2)),
                slots);
  const size_t sm1 = static_cast<size_t>(p.dim / 32) * kSlotGemvXPad * sizeof(float);
  w13<<<g1, kSlotGemvThreads, sm1, stream>>>(a1);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  SlotGemvW2Args a2{hidden, p.topk_ids, p.w2.packed, p.w2.scales,
                    nv ? p.w2.scale2 : nullptr, slot_out, p.dim, p.inter};
  constexpr int kRowsW2 = kWarps * kSlotGemvW2RowsPerWarp;
  const dim3 g2((p.dim + kRowsW2 - 1) / kRowsW2, slots);
  const size_t sm2 = static_cast<size_t>(p.inter / 32) * kSlotGemvXPad * sizeof(float);
  w2<<<g2, kSlotGemvThreads, sm2, stream>>>(a2);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
