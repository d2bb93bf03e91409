// Dense BF16 tensor-core GEMM (qprof_gemm_dense / qprof_gemm_lm_head / qprof_moe_router_gemm,
// common_kernels.cu): y[m, n] (+)= sum_k W[n, k] x[m, k] with mma.sync m16n8k16 BF16 and FP32
// accumulation. Weights are the MMA's A (16 output features per warp), tokens its n = 8
// columns (kGemmNt tiles per pass); lane map and k order in gemm_lanes.h. Memory-bound at
// decode sizes: weights stream once per pass of 16 tokens.
//
// The body is written against the warp primitives (warp_ops.h): nvcc compiles it into the
// three kernels, and the CPU warp emulation (tests/kernels/warp_emu/gemm_emu_test.cc) runs
// this same function for every thread.
#ifndef QPROF_KERNELS_COMMON_CUDA_GEMM_MMA_CUH_
#define QPROF_KERNELS_COMMON_CUDA_GEMM_MMA_CUH_

#include <stdint.h>

#include "kernels/common/cuda/gemm_lanes.h"
#include "kernels/common/cuda/warp_ops.h"

namespace qprof::kernels::cuda {

// Launch shape shared by the launcher and the emulation: kGemmWarps warps of 16 features
// per block, no shared memory.
inline constexpr unsigned kGemmThreads = kGemmWarps * 32;
inline LaunchDims DenseGemmGrid(int n) {
  return {static_cast<unsigned>((n + kGemmWarps * 16 - 1) / (kGemmWarps * 16)), 1, 1};
}

// accumulate != 0: y += result (the residual add of an output projection), else y = result.
QPROF_WARP_FN void DenseGemmMmaBody(const float* __restrict__ x, const uint16_t* __restrict__ w,
                                    float* y, int m, int n, int k, int accumulate) {
  const int warp = ThreadIdxX() >> 5, lane = ThreadIdxX() & 31;
  const int g = lane >> 2, t = lane & 3;
  const int r0 = GemmFirstRow(BlockIdxX(), warp);
  if (r0 >= n) return;
  const uint16_t* wr[2] = {w + static_cast<int64_t>(GemmRowClamped(r0, g, 0, n)) * k + GemmLaneK(t),
                           w + static_cast<int64_t>(GemmRowClamped(r0, g, 1, n)) * k + GemmLaneK(t)};
  for (int m0 = 0; m0 < m; m0 += 8 * kGemmNt) {
    float acc[kGemmNt][4];
    const float* xr[kGemmNt];
#pragma unroll
    for (int j = 0; j < kGemmNt; ++j) {
      acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
      xr[j] = x + static_cast<int64_t>(GemmTokenClamped(m0, j, g, m)) * k + GemmLaneK(t);
    }
#pragma unroll 2
    for (int k0 = 0; k0 < k; k0 += kGemmChunkK) {
      const U32x4 va = LdgNc128(wr[0] + k0);
      const U32x4 vb = LdgNc128(wr[1] + k0);
      const uint32_t wv[2][4] = {{va.x, va.y, va.z, va.w}, {vb.x, vb.y, vb.z, vb.w}};
      float xv[kGemmNt][8];
#pragma unroll
      for (int j = 0; j < kGemmNt; ++j) {
        const F32x4 lo = LdGlobal<F32x4>(xr[j] + k0);
        const F32x4 hi = LdGlobal<F32x4>(xr[j] + k0 + 4);
        xv[j][0] = lo.x; xv[j][1] = lo.y; xv[j][2] = lo.z; xv[j][3] = lo.w;
        xv[j][4] = hi.x; xv[j][5] = hi.y; xv[j][6] = hi.z; xv[j][7] = hi.w;
      }
#pragma unroll
      for (int s = 0; s < 2; ++s) {
        uint32_t af[4];
#pragma unroll
        for (int r = 0; r < 4; ++r) af[r] = wv[GemmARegRow(r)][GemmARegWord(s, r)];
#pragma unroll
        for (int j = 0; j < kGemmNt; ++j) {
          MmaBf16m16n8k16(acc[j], af, PackBf16x2(xv[j][GemmBElem(s, 0, 0)], xv[j][GemmBElem(s, 0, 1)]),
                          PackBf16x2(xv[j][GemmBElem(s, 1, 0)], xv[j][GemmBElem(s, 1, 1)]));
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kGemmNt; ++j) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int tok = GemmOutToken(m0, j, t, h);
        if (tok >= m) continue;
        float* yr = y + static_cast<int64_t>(tok) * n;
        if (r0 + g < n) yr[r0 + g] = accumulate ? yr[r0 + g] + acc[j][h] : acc[j][h];
        if (r0 + 8 + g < n) yr[r0 + 8 + g] = accumulate ? yr[r0 + 8 + g] + acc[j][2 + h] : acc[j][2 + h];
      }
    }
  }
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_GEMM_MMA_CUH_
