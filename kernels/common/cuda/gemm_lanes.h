// Lane map of the dense BF16 tensor-core GEMM (qprof_gemm_dense / _lm_head /
// qprof_moe_router_gemm, common_kernels.cu), shared with the CPU warp emulation
// (tests/kernels/warp_emu). y[m, n] = sum_k W[n, k] x[m, k]: weights are the MMA's A (16 output
// features per warp), tokens its n = 8 columns (kGemmNt tiles per pass).
//
// K order: in each 32-wide K chunk lane (g, t) loads 16 contiguous bytes (k = 8t .. 8t+7)
// of weight rows g and g+8. K16 step s (0, 1) uses physical k 8t+4s .. +3 as logical
// (2t, 2t+1 | 2t+8, 2t+9): a0/a1 = word 2s of rows g/g+8, a2/a3 = word 2s+1. B is loaded
// with the same k mapping straight from the FP32 activations (rounded to BF16 in
// registers): b0 = (x[8t+4s], x[8t+4s+1]), b1 = (x[8t+4s+2], x[8t+4s+3]).
#ifndef QPROF_KERNELS_COMMON_CUDA_GEMM_LANES_H_
#define QPROF_KERNELS_COMMON_CUDA_GEMM_LANES_H_

#include "kernels/common/reg_ops.h"

namespace qprof::kernels::cuda {

inline constexpr int kGemmWarps = 4;
inline constexpr int kGemmNt = 2;
inline constexpr int kGemmChunkK = 32;

// First output feature of warp `warp` of block `block`; the weight rows of MMA rows g and
// g+8, clamped to the last row (their outputs are dropped).
QPROF_HDC int GemmFirstRow(int block, int warp) { return (block * kGemmWarps + warp) * 16; }
QPROF_HDC int GemmRowClamped(int r0, int g, int half, int n) {
  const int r = r0 + 8 * half + g;
  return r < n - 1 ? r : n - 1;  // min(): one IMNMX
}
// Token row whose activations lane g feeds as column g of n-tile j (clamped, as padding).
QPROF_HDC int GemmTokenClamped(int m0, int j, int g, int m) {
  const int r = m0 + 8 * j + g;
  return r < m - 1 ? r : m - 1;
}
// Element offset of the lane's 8 weights / activations inside a 32-wide K chunk.
QPROF_HDC int GemmLaneK(int t) { return 8 * t; }
// A register r (0..3) at step s: which of the lane's two 16-byte loads (0: row g, 1: row
// g+8) and which 32-bit word of it.
QPROF_HDC int GemmARegRow(int r) {
#if QPROF_MUTANT(SWAP_A_REGS)
  r = r == 1 ? 2 : (r == 2 ? 1 : r);
#endif
  return r & 1;
}
QPROF_HDC int GemmARegWord(int s, int r) {
#if QPROF_MUTANT(SWAP_A_REGS)
  r = r == 1 ? 2 : (r == 2 ? 1 : r);
#endif
  return 2 * s + (r >> 1);
}
// Activation element (relative to the lane's GemmLaneK) of B register r (0, 1), half h.
QPROF_HDC int GemmBElem(int s, int r, int h) {
#if QPROF_MUTANT(NO_KPERM)
  return 4 * s + 2 * h + r;  // (k0, k2), (k1, k3): no longer the A fragment's k order
#else
  return 4 * s + 2 * r + h;
#endif
}
// Output token of accumulator d[2*half + h] of n-tile j: column 2t + h.
QPROF_HDC int GemmOutToken(int m0, int j, int t, int h) { return m0 + 8 * j + 2 * t + h; }

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_GEMM_LANES_H_
