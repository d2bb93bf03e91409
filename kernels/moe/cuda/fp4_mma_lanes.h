// Lane map of the MoE `fp4_mma` kernels (moe_fp4_mma.cuh), shared with the CPU warp
// emulation (tests/kernels/warp_emu): which weight, activation and scale bytes lane (g, t) loads for
// each m16n8k64 block-scaled MMA, and the scale-factor selectors.
//
// Fragments of mma.m16n8k64 .e2m1 (PTX ISA, "Matrix fragments for mma.m16n8k64"): nibble j
// of a register is k = 8t + j (natural FP4 order, so the checkpoint layout is used as is);
// a0 = row g, k 8t..8t+7; a1 = row g+8; a2/a3 the same rows at k+32; b0 = column (token) g,
// k 8t..8t+7; b1 at k+32. Scale factors (selectors byte-id 0, thread-id 0): lane 4r holds
// row r's scale bytes, lane 4r+1 row r+8's, lane 4n column n's; byte b scales k 16b..16b+15
// (scale_vec::4X, NVFP4) or 32b..32b+31 (scale_vec::2X, MXFP4).
#ifndef QPROF_KERNELS_MOE_CUDA_FP4_MMA_LANES_H_
#define QPROF_KERNELS_MOE_CUDA_FP4_MMA_LANES_H_

#include <stdint.h>

#include "kernels/common/reg_ops.h"
#include "kernels/formats/fp4_blocks.h"
#include "kernels/moe/cuda/moe_tile_lanes.h"

namespace qprof::kernels::cuda {

inline constexpr int kF4Warps = 4;
inline constexpr int kF4Threads = kF4Warps * 32;
inline constexpr int kF4NT = 2;  // token tiles of 8 per pass

// {byte-id, thread-id} selectors of the scale operands (immediates of the instruction).
inline constexpr int kF4SfByteId = 0;
inline constexpr int kF4SfThreadId = 0;

// Byte offset (within a weight or activation row) of lane t's first 4 bytes at K64 step
// k64: k = 64*k64 + 8t .. +7. Register r then adds Fp4ARegOffset(r) / Fp4BRegOffset(r) (16
// bytes = k + 32), kept as a separate term so that it stays an immediate offset.
QPROF_HDC int Fp4LaneKByte(int k64, int t) { return k64 * 32 + 4 * t; }
// A register r (0..3): which MMA row (0: row g, 1: row g+8) and the offset (0 or +32 k).
QPROF_HDC int Fp4ARegRowHalf(int r) {
#if QPROF_MUTANT(SWAP_A_REGS)
  r = r == 1 ? 2 : (r == 2 ? 1 : r);
#endif
  return r & 1;
}
QPROF_HDC int Fp4ARegOffset(int r) {
#if QPROF_MUTANT(SWAP_A_REGS)
  r = r == 1 ? 2 : (r == 2 ? 1 : r);
#endif
  return 16 * (r >> 1);
}
// B register r (0, 1): offset within the token's activation row.
QPROF_HDC int Fp4BRegOffset(int r) { return 16 * r; }
// Activation row (within the expert's group) whose bytes lane g feeds as column g of n-tile
// n; padded columns (past `count`) read row 0, a valid row, and their outputs are dropped.
QPROF_HDC int Fp4BToken(int tok0, int n, int g, int count) {
  const int tok = tok0 + n * 8 + g;
  return tok < count ? tok : 0;
}
// Which lanes load scale factors, for thread-id 0: SFA row of lane t (0: row g, 1: row g+8,
// -1: none), SFB (the lane's column g) only on t == 0.
QPROF_HDC int Fp4SfaRowHalf(int t) {
#if QPROF_MUTANT(SCALE_LANE)
  return t == 1 ? 0 : (t == 2 ? 1 : -1);
#else
  return t == 0 ? 0 : (t == 1 ? 1 : -1);
#endif
}
QPROF_HDC bool Fp4SfbLoads(int t) {
#if QPROF_MUTANT(SCALE_LANE)
  return t == 1;
#else
  return t == 0;
#endif
}
// Scale bytes per K64 step (4 for 16-element blocks, 2 for 32), and their offset in a row.
QPROF_HDC int Fp4ScalesPerK64(bool nvfp4) { return nvfp4 ? 4 : 2; }
QPROF_HDC int Fp4ScaleByte(bool nvfp4, int k64) { return k64 * Fp4ScalesPerK64(nvfp4); }

// One block of an activation row, with the formats' own encoders (kernels/formats/
// fp4_blocks.h): the bits equal QuantizeMxfp4 / QuantizeNvfp4 (with the row's scale2) of
// that row on the CPU. Returns the block's scale code.
template <bool kNvfp4>
QPROF_HDI uint8_t QuantActBlock(const float* v, float s2, uint8_t* packed) {
  constexpr int kBlock = kNvfp4 ? 16 : 32;
  uint32_t amax_bits = 0;
  for (int j = 0; j < kBlock; ++j) {
    const uint32_t m = reg::FloatAsBits(v[j]) & 0x7FFFFFFFu;
    amax_bits = m > amax_bits ? m : amax_bits;
  }
  if (kNvfp4) return fp4::Nvfp4EncodeBlock(v, amax_bits, s2, 6.f * s2, packed);
  const uint8_t code = fp4::Mxfp4ScaleCodeFromAmaxBits(amax_bits);
  fp4::Mxfp4EncodeBlock(v, code, packed);
  return code;
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_FP4_MMA_LANES_H_
