// Lane map of the tensor-core sparse MLA decode kernel (sparse_mla_mma.cuh), shared with the
// CPU warp emulation (tests/warp_emu): which Q/K bytes feed each QK^T fragment, where each
// score lands, which scores form the P fragment, and the ldmatrix.x4.trans row addresses
// of the PV step. Block = 4 warps = one sequence x 16 heads (the MMA's m); a tile holds 32
// selected KV rows of kMmaRowBytes each; g = lane/4, t = lane%4.
#ifndef QPROF_KERNELS_MLA_CUDA_MLA_MMA_LANES_H_
#define QPROF_KERNELS_MLA_CUDA_MLA_MMA_LANES_H_

#include <stddef.h>

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

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_MLA_MMA_LANES_H_
