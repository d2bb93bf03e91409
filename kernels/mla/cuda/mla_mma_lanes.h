// Lane map of the tensor-core sparse MLA decode kernel (sparse_mla_mma.cuh), shared with the
// CPU warp emulation (tests/kernels/warp_emu): which Q/K bytes feed each QK^T fragment, where each
// score lands, which scores form the P fragment, and the ldmatrix.x4.trans row addresses
// of the PV step. Block = 4 warps = one sequence x 16 heads (the MMA's m); a tile holds 32
// selected KV rows of kMmaRowBytes each; g = lane/4, t = lane%4.
#ifndef QPROF_KERNELS_MLA_CUDA_MLA_MMA_LANES_H_
#define QPROF_KERNELS_MLA_CUDA_MLA_MMA_LANES_H_

#include <math.h>
#include <stddef.h>

#include <cmath>

#include "kernels/common/reg_ops.h"

namespace qprof::kernels::cuda {

inline constexpr int kMlaDv = 512;
inline constexpr int kMlaDqk = 576;
inline constexpr int kMmaTile = 32;
inline constexpr int kMmaRowBytes = kMlaDqk * 2 + 16;  // 1168: 8 rows start in 8 bank groups
inline constexpr int kMmaSsStride = kMmaTile + 1;

// QK^T, K16 step s: A register r (0..3) of lane (g, t) is the BF16 pair of Q row
// MlaQkARow(g, r) at byte MlaQkByte(s, t, r) of the staged Q row; B register r (0, 1) is
// the pair of KV row (token) 8*warp + g of the tile at byte MlaQkByte(s, t, 2*r).
QPROF_HDC int MlaQkARow(int g, int r) {
#if QPROF_MUTANT(SWAP_A_REGS)
  r = r == 1 ? 2 : (r == 2 ? 1 : r);
#endif
  return g + 8 * (r & 1);
}
QPROF_HDC int MlaQkByte(int s, int t, int r) {
#if QPROF_MUTANT(SWAP_A_REGS)
  r = r == 1 ? 2 : (r == 2 ? 1 : r);
#endif
  return (16 * s + 2 * t) * 2 + 16 * (r >> 1);
}
QPROF_HDC int MlaQkBRow(int warp, int g) { return 8 * warp + g; }
// Score of accumulator i (0..3): head row g (+8 for i >= 2), tile column 8w + 2t (+1).
QPROF_HDC int MlaScoreRow(int g, int i) { return g + 8 * (i >> 1); }
QPROF_HDC int MlaScoreCol(int warp, int t, int i) { return 8 * warp + 2 * t + (i & 1); }
// P fragment of PV step j (tokens 16j .. 16j+15): value v (0..7) of head row g + 8*rr is the
// score at column MlaPCol(j, t, v): pairs (2t, 2t+1) then (2t+8, 2t+9); register
// pa[j][rr] = pack(v0, v1), pa[j][2 + rr] = pack(v2, v3) (and v4..v7 for the second j).
QPROF_HDC int MlaPCol(int j, int t, int v) { return 16 * j + 2 * t + (v & 1) + 8 * ((v >> 1) & 1); }
// A register of the P fragment holding pair `pair` (0: values 0,1; 1: values 2,3) of head
// row g + 8*rr: a0/a1 (pair 0, rows g / g+8), a2/a3 (pair 1).
QPROF_HDC int MlaPReg(int rr, int pair) { return rr + 2 * pair; }
// PV ldmatrix.x4.trans: lane supplies the address of KV row MlaPvLdRow(j, lane) (the token,
// the MMA's k) at column MlaPvLdCol(warp, np, lane) (the latent dim, the MMA's n): matrices
// 0/1 = k 0-7 / 8-15 of n-tile 2np, matrices 2/3 the same for n-tile 2np+1.
QPROF_HDC int MlaPvLdRow(int j, int lane) {
#if QPROF_MUTANT(LDMATRIX_BITS)
  return 16 * j + (lane & 7) + ((lane >> 4) & 1) * 8;
#else
  return 16 * j + (lane & 7) + ((lane >> 3) & 1) * 8;
#endif
}
QPROF_HDC int MlaPvLdCol(int warp, int np, int lane) {
#if QPROF_MUTANT(LDMATRIX_BITS)
  return 128 * warp + 16 * np + ((lane >> 3) & 1) * 8;
#else
  return 128 * warp + 16 * np + (lane >> 4) * 8;
#endif
}
// Output dims of accumulator tile n (0..15) of warp w: 128w + 8n + 2t (+1).
QPROF_HDC int MlaOutDim(int warp, int n, int t) { return 128 * warp + 8 * n + 2 * t; }

// Online softmax of one head row over a tile (flash-attention style), per lane: the
// running max m and the tile's max (reduced over the quad) give the new max and the factor
// alpha that rescales the running sum and the output accumulators; P = exp(s - m_new).
// A row with no valid score yet (all -inf) keeps alpha = 1 and P = 0. The device uses
// __expf; the host fallback the exact exp (the emulation differs in the last bits).
QPROF_HDI float MlaExp(float x) {
#if defined(__CUDA_ARCH__)
  return __expf(x);
#else
  return std::exp(x);
#endif
}
struct MlaRescale {
  float m_new, alpha;
  bool none;
};
QPROF_HDI MlaRescale MlaOnlineRescale(float m_old, float tile_max) {
  const float mn = fmaxf(m_old, tile_max);
  const bool none = mn == -INFINITY;
  return {mn, none ? 1.f : MlaExp(m_old - mn), none};
}
QPROF_HDI float MlaProb(float score, const MlaRescale& r) { return r.none ? 0.f : MlaExp(score - r.m_new); }
// Final normalisation: 1/l (0 for an empty selection) and lse = m + log l (-inf if empty).
QPROF_HDI float MlaInvSum(float l) { return l > 0.f ? 1.f / l : 0.f; }
QPROF_HDI float MlaLse(float m, float l) { return l > 0.f ? m + logf(l) : -INFINITY; }

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_MLA_MMA_LANES_H_
