// Lane maps shared by the two grouped tensor-core MoE paths (w4a16_mma, fp4_mma): which
// weight rows a warp's MMA rows g and g+8 are, and which (token, row) each accumulator of
// lane (g = lane/4, t = lane%4) holds. Plain constexpr functions, callable from the kernels
// and from the CPU warp emulation (tests/kernels/warp_emu), so both use one index expression.
//
// GEMM1 (gate_up): warp tile `tile` owns features f0 = 8*tile .. +7; MMA row g is gate row
// f0+g, row g+8 is up row inter+f0+g, so one thread holds gate and up of the same
// (feature, token) and applies SwiGLU in registers. GEMM2: tile owns 16 output rows f0 ..
// f0+15 = MMA rows 0..15.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_TILE_LANES_H_
#define QPROF_KERNELS_MOE_CUDA_MOE_TILE_LANES_H_

#include <math.h>

#include <cmath>

#include "kernels/common/reg_ops.h"

namespace qprof::kernels::cuda {

QPROF_HDC int LaneGroup(int lane) { return lane >> 2; }        // g: MMA row / column group
QPROF_HDC int LaneInGroup(int lane) { return lane & 3; }       // t: thread in group

// First feature (GEMM1) or output row (GEMM2) of warp tile `tile`.
QPROF_HDC int MoeTileFirstRow(bool gate_up, int tile) { return gate_up ? tile * 8 : tile * 16; }
// Weight row (within the expert's matrix) of MMA row g (row_a) and of MMA row g+8 (row_b).
QPROF_HDC int MoeTileRowA(int f0, int g) { return f0 + g; }
QPROF_HDC int MoeTileRowB(bool gate_up, int f0, int g, int inter) {
  return gate_up ? inter + f0 + g : f0 + 8 + g;
}
// Token (within the expert's group) of accumulator d[2*half + h] of n-tile n: columns 2t,
// 2t+1 of the m16n8 D fragment (rows g for d0/d1, g+8 for d2/d3).
QPROF_HDC int MoeTileOutToken(int tok0, int n, int t, int h) { return tok0 + n * 8 + 2 * t + h; }
// GEMM2 output row of accumulator half (0: d0/d1 = row g, 1: d2/d3 = row g+8).
QPROF_HDC int MoeTileOutRow(int f0, int g, int half) { return f0 + 8 * half + g; }

// SwiGLU with the clamp, as SwiGlu in kernels/moe/moe_cpu.h. The device uses __expf (fast,
// ~2 ulp); the host fallback uses the exact exp, so an emulated epilogue differs from the
// GPU's by a few FP32 ulp of h, far inside the paths' error bounds.
QPROF_HDI float MoeSwiGlu(float g, float u, float limit) {
  if (limit > 0.f) {
    g = fminf(g, limit);
    u = fminf(fmaxf(u, -limit), limit);
  }
#if defined(__CUDA_ARCH__)
  return g / (1.f + __expf(-g)) * u;
#else
  return g / (1.f + std::exp(-g)) * u;
#endif
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_TILE_LANES_H_
