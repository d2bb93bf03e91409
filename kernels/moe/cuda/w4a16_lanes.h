// Lane map and register builders of the MoE `w4a16_mma` kernels (moe_w4a16_mma.cuh), shared
// with the CPU warp emulation (tests/kernels/warp_emu): every index expression of the kernel that
// says which weight bytes, scale bytes, activation elements and output rows a lane touches
// is one of these functions, and the A fragment is built by W4a16AFragStep on both sides.
//
// K order. An MMA sums over k, so any k order works if A and B agree. In a 128-element
// chunk c of a 256-wide stage, lane (g, t) holds 16 contiguous weight bytes (physical
// k = 32t .. 32t+31) of rows g and g+8. K16 step s (0..7) gives the lane physical k
// 32t+4s .. +3; the decoder yields pairs (k0, k2) and (k1, k3), so logical (2t, 2t+1)
// <- physical (k0, k2) and logical (2t+8, 2t+9) <- (k1, k3). The activations are stored
// k-permuted in groups of four as (k0, k2, k1, k3) (PermK4), so b0, b1 are one 8-byte
// shared load at W4ActByte.
//
// Scales, one HMUL2 per decoded pair: MXFP4 2^(e-127) with the decode's 2^126 folded in,
// less 2^64 that the FP32 epilogue restores, i.e. BF16 2^(e-65) (finite for e <= 192);
// NVFP4 E4M3 * 2^117, the epilogue multiplies by weight_scale_2 * 2^9.
#ifndef QPROF_KERNELS_MOE_CUDA_W4A16_LANES_H_
#define QPROF_KERNELS_MOE_CUDA_W4A16_LANES_H_

#include <stdint.h>

#include "kernels/common/reg_ops.h"
#include "kernels/moe/cuda/moe_tile_lanes.h"

namespace qprof::kernels::cuda {

inline constexpr int kW4Warps = 4;
inline constexpr int kW4Threads = kW4Warps * 32;
inline constexpr int kW4StageK = 256;               // K elements per pipeline stage
inline constexpr int kW4NT = 2;                     // n8 token tiles per pass: 16 tokens
inline constexpr int kW4ActRowBytes = kW4StageK * 2 + 16;  // padded BF16 row

// Position of element k inside its permuted group of 4: k0 k2 k1 k3.
QPROF_HDC int PermK4(int k) {
#if QPROF_MUTANT(NO_KPERM)
  return k;
#else
  return (k & ~3) | ((k & 1) << 1) | ((k >> 1) & 1);
#endif
}

// The *_permute_bf16 kernel's packing of one group of 4 activations (k0..k3) into the 8
// bytes of PermK4 order: lo = (k0, k2), hi = (k1, k3).
QPROF_HDI void W4PermGroupBf16(float x0, float x1, float x2, float x3, uint32_t& lo, uint32_t& hi) {
#if QPROF_MUTANT(NO_KPERM)
  lo = reg::PackBf16x2(x0, x1);
  hi = reg::PackBf16x2(x2, x3);
#else
  lo = reg::PackBf16x2(x0, x2);
  hi = reg::PackBf16x2(x1, x3);
#endif
}

// Byte offset, within a weight row, of lane t's 16 bytes of chunk c (0, 1) of stage st:
// W4WeightStageByte(st) + W4WeightChunkByte(c) + W4WeightLaneByte(t), added as separate
// terms so that the chunk part stays an immediate offset of the lane's address (one sum
// of the three costs the kernel 6 to 10 registers).
QPROF_HDC int64_t W4WeightStageByte(int st) { return static_cast<int64_t>(st) * (kW4StageK / 2); }
QPROF_HDC int W4WeightChunkByte(int c) { return c * 64; }
QPROF_HDC int W4WeightLaneByte(int t) { return t * 16; }
// Scale staging: lane l < 16 copies the stage's scale bytes of MMA row l (rows 0..7 are
// row_a of g = l, rows 8..15 row_b of g = l - 8) into shared slot l.
QPROF_HDC int W4ScaleLoadRow(bool gate_up, int f0, int lane, int inter) {
  return lane < 8 ? MoeTileRowA(f0, lane) : MoeTileRowB(gate_up, f0, lane - 8, inter);
}
// Shared scale slot lane g reads for its MMA row g (half 0) or g+8 (half 1).
QPROF_HDC int W4ScaleSlot(int g, int half) {
#if QPROF_MUTANT(SCALE_LANE)
  return (g + 8 * half + 1) & 15;
#else
  return g + 8 * half;
#endif
}
// Scale bytes per row per stage, and the byte of chunk c for lane t: the lane's 32 elements
// are block 4c+t (MXFP4, 32-element blocks), blocks 8c+2t and +1 (NVFP4, 16-element).
QPROF_HDC int W4ScaleBytesPerStage(bool nvfp4) { return nvfp4 ? 16 : 8; }
QPROF_HDC int W4ScaleByte(bool nvfp4, int c, int t, int half) {
  return nvfp4 ? 8 * c + 2 * t + half : 4 * c + t;
}
// K16 step s of a chunk: which 32-bit word of the lane's 16 bytes, which byte pair of it,
// and which 16-element half (NVFP4 scale) it decodes.
QPROF_HDC int W4StepWord(int s) { return s >> 1; }
QPROF_HDC int W4StepByteSel(int s) { return s & 1; }
QPROF_HDC int W4StepHalf(int s) { return s >> 2; }
// Physical k (within the stage) of A-fragment register r (0..3), half h (0 low, 1 high),
// for lane t at step s of chunk c: a0/a1 hold (k0, k2), a2/a3 hold (k1, k3).
QPROF_HDC int W4PhysK(int c, int t, int s, int r, int h) {
  return c * 128 + 32 * t + 4 * s + (r >> 1) + 2 * h;
}
// Activations: staged row n*8+g of the B operand (token tok0 + n*8 + g), byte offset of the
// lane's b0 (b1 follows) for step s of chunk c; 16-byte staging piece p copies elements
// st*256 + 8p .. +7 of the grouped row to byte 16p.
QPROF_HDC int W4ActRow(int n, int g) { return n * 8 + g; }
QPROF_HDC int W4ActByte(int c, int t, int s) { return (c * 128 + 32 * t + 4 * s) * 2; }
QPROF_HDC int W4ActPieceElem(int st, int piece) { return st * kW4StageK + piece * 8; }

// BF16x2 block-scale factors (one per 32 or 16 elements) with the decode's power of two
// folded in.
QPROF_HDI uint32_t MxScaleBf16x2(uint32_t e) {
  e = e > 192u ? 192u : e;  // 2^(e-65) must stay finite in BF16
  const uint32_t b = (e + 62u) << 7;
  return b | (b << 16);
}
// E4M3 code -> BF16x2 of E4M3 * 2^117. Placing the 7 magnitude bits at FP32 bit 20 gives
// 2^(e-127) (1 + m/8) for e >= 1 and the matching FP32 subnormal for e = 0, i.e. exactly
// E4M3 * 2^-120 (FP32 FMUL keeps subnormal inputs); times 2^120 * 2^117 in two exact steps
// (2^126, then 2^111) so that nothing overflows; BF16 holds the result exactly. The sign
// is carried over and the E4M3 NaN codes (0x7F, 0xFF) give a BF16 NaN, so a corrupt scale
// poisons its block instead of becoming a tiny finite number.
QPROF_HDI uint32_t NvScaleBf16x2(uint32_t code) {
  const uint32_t mag = code & 0x7Fu;
  const float f = reg::BitsAsFloat(mag << 20) * 8.5070591730234616e37f  // 2^126
                  * 2.5961484292674139e33f;                            // 2^111
  const uint32_t sign = (code & 0x80u) << 8;
  const uint32_t b = (mag == 0x7Fu ? 0x7FC0u : reg::FloatToBf16Bits(f)) | sign;
  return b | (b << 16);
}
// Scale registers of one chunk for the lane's rows: [half] (NVFP4: two 16-element blocks;
// MXFP4: the one 32-element block twice). `load_byte(i)` = byte i of the row's stage scale
// bytes (the kernel reads shared memory; each byte is loaded right before its conversion,
// which keeps nvcc from merging the two NVFP4 byte loads into one LDS.U16 and a PRMT).
template <bool kNvfp4, typename LoadByte>
QPROF_HDI void W4a16ScaleRegs(LoadByte load_byte, int c, int t, uint32_t (&out)[2]) {
  if (kNvfp4) {
    out[0] = NvScaleBf16x2(load_byte(W4ScaleByte(true, c, t, 0)));
    out[1] = NvScaleBf16x2(load_byte(W4ScaleByte(true, c, t, 1)));
  } else {
    out[0] = out[1] = MxScaleBf16x2(load_byte(W4ScaleByte(false, c, t, 0)));
  }
}
// The BF16 A fragment of one K16 step: decode 4 nibbles of each row (byte pair kByteSel of
// the rows' words wa, wb) and scale them; a0 = row g (k0,k2), a1 = row g+8 (k0,k2),
// a2 = row g (k1,k3), a3 = row g+8 (k1,k3).
template <int kByteSel>
QPROF_HDI void W4a16AFragStep(uint32_t wa, uint32_t wb, uint32_t scale_a, uint32_t scale_b,
                              uint32_t (&frag)[4]) {
  uint32_t ea, oa, eb, ob;
  reg::DecodeE2M1Quad<6, kByteSel>(wa, ea, oa);
  reg::DecodeE2M1Quad<6, kByteSel>(wb, eb, ob);
  frag[0] = reg::Hmul2Bf16(ea, scale_a);
  frag[1] = reg::Hmul2Bf16(eb, scale_b);
  frag[2] = reg::Hmul2Bf16(oa, scale_a);
  frag[3] = reg::Hmul2Bf16(ob, scale_b);
#if QPROF_MUTANT(SWAP_A_REGS)
  const uint32_t x = frag[1];
  frag[1] = frag[2];
  frag[2] = x;
#endif
}
// FP32 epilogue factor restoring what the BF16 scales left out: 2^64 (MXFP4) or
// weight_scale_2 * 2^9 (NVFP4).
template <bool kNvfp4>
QPROF_HDI float W4a16PostScale(float scale2) {
  return kNvfp4 ? scale2 * 512.f : 18446744073709551616.f;
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_W4A16_LANES_H_
