// Register-level operations of the tensor-core and SIMT kernels, callable from device code
// (where each is one instruction or an intrinsic) and from host code (portable fallbacks
// that give the same bits), so that the CPU tests run the kernels' own register math:
//   BytePerm        PRMT (__byte_perm)
//   FloatToBf16Bits F2F.BF16 round-to-nearest-even (__float2bfloat16_rn); NaN stays NaN
//   PackBf16x2      two floats -> bf16x2, RNE (__floats2bfloat162_rn)
//   Hmul2Bf16       HMUL2.BF16: two BF16 products, each rounded once to nearest even
//   Half2ToFloat2   HADD2.F32 of an f16x2 (exact)
//   DecodeE2M1Quad  four E2M1 nibbles -> two 16-bit float pairs by bit placement
//
// Host fallbacks and the hardware agree bit for bit for finite inputs and outputs,
// subnormals included (the host keeps them: x86 SSE arithmetic has no flush-to-zero unless
// asked). Whether the GPU keeps BF16 subnormal *results* of HMUL2 is not decided here:
// see docs/kernels.md ("What the warp emulation proves").
#ifndef QPROF_KERNELS_COMMON_REG_OPS_H_
#define QPROF_KERNELS_COMMON_REG_OPS_H_

#include <stdint.h>

#include <cmath>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define QPROF_HDI __host__ __device__ __forceinline__
#define QPROF_HDC __host__ __device__ __forceinline__ constexpr
#else
#define QPROF_HDI inline
#define QPROF_HDC inline constexpr
#endif

#include "kernels/common/mutation.h"

namespace qprof::kernels::reg {

QPROF_HDI uint32_t FloatAsBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
#endif
}
QPROF_HDI float BitsAsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// PRMT in its default mode: result byte i = byte sel[4i+3:4i] (0..7) of {b, a} (a = bytes
// 0..3). The sign-replicate mode (bit 3 of a selector nibble) is not used by the kernels.
QPROF_HDI uint32_t BytePerm(uint32_t a, uint32_t b, uint32_t sel) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, sel);
#else
  const uint64_t src = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t s = (sel >> (4 * i)) & 7u;
    r |= static_cast<uint32_t>((src >> (8 * s)) & 0xFFu) << (8 * i);
  }
  return r;
#endif
}

// FP32 -> BF16 bits, round to nearest even; NaN -> quiet NaN with the sign kept.
QPROF_HDI uint16_t FloatToBf16Bits(float f) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  uint32_t u = FloatAsBits(f);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
#endif
}
QPROF_HDI float Bf16BitsToFloat(uint16_t b) { return BitsAsFloat(static_cast<uint32_t>(b) << 16); }

// Two floats -> packed bf16x2 (lo in the low half), both RNE.
QPROF_HDI uint32_t PackBf16x2(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
#else
  return static_cast<uint32_t>(FloatToBf16Bits(lo)) | (static_cast<uint32_t>(FloatToBf16Bits(hi)) << 16);
#endif
}

#if !defined(__CUDA_ARCH__)
// Host: BF16 round-to-nearest-even of a double, subnormals kept (quantum 2^-133), overflow
// to inf. Used where a product of two BF16 values (exact in double) must be rounded once.
inline uint16_t DoubleToBf16Bits(double d) {
  if (std::isnan(d)) return 0x7FC0u;
  if (d == 0.0 || std::isinf(d)) return FloatToBf16Bits(static_cast<float>(d));
  int e;
  std::frexp(d, &e);                       // |d| in [2^(e-1), 2^e)
  const int q = (e - 1 < -126 ? -126 : e - 1) - 7;  // exponent of the last kept bit
  const double r = std::ldexp(std::nearbyint(std::ldexp(d, -q)), q);  // RNE (default mode)
  if (std::fabs(r) > 3.3895313892515355e38) return d > 0 ? 0x7F80u : 0xFF80u;  // past max
  return static_cast<uint16_t>(FloatAsBits(static_cast<float>(r)) >> 16);  // r fits BF16
}
#endif

// Lane-wise BF16 product, each rounded once to nearest even (mul.rn.bf16x2). The host
// forms the exact product in double (8 x 8 significant bits, any exponent) and rounds it
// once, which is the hardware's result for finite operands.
QPROF_HDI uint32_t Hmul2Bf16(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  __nv_bfloat162 r = __hmul2(*reinterpret_cast<__nv_bfloat162*>(&a), *reinterpret_cast<__nv_bfloat162*>(&b));
  return *reinterpret_cast<uint32_t*>(&r);
#else
  auto lane = [](uint32_t x, int h) {
    return static_cast<double>(Bf16BitsToFloat(static_cast<uint16_t>(x >> (16 * h))));
  };
  return static_cast<uint32_t>(DoubleToBf16Bits(lane(a, 0) * lane(b, 0))) |
         (static_cast<uint32_t>(DoubleToBf16Bits(lane(a, 1) * lane(b, 1))) << 16);
#endif
}

// FP16 bits -> float (exact; subnormals included). Host only needs the values the FP4
// decode produces, but the conversion is the general one.
QPROF_HDI float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F) return BitsAsFloat(sign | 0x7F800000u | (m << 13));
  if (e != 0) return BitsAsFloat(sign | ((e + 112u) << 23) | (m << 13));
  // subnormal: m * 2^-24, exact in FP32
  const float mag = static_cast<float>(m) * 5.9604644775390625e-8f;
  return BitsAsFloat(sign | FloatAsBits(mag));
}
struct Float2 {
  float x, y;
};
QPROF_HDI Float2 Half2ToFloat2(uint32_t h2) {
#if defined(__CUDA_ARCH__)
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&h2));
  return {f.x, f.y};
#else
  return {HalfBitsToFloat(static_cast<uint16_t>(h2)), HalfBitsToFloat(static_cast<uint16_t>(h2 >> 16))};
#endif
}

// Decodes the 4 E2M1 nibbles of bytes (2*kByteSel, 2*kByteSel+1) of `w` into two 16-bit
// pairs. Nibbles n0..n3 (n0 = low nibble of the first byte): out_even = (n0, n2),
// out_odd = (n1, n3) [low half, high half]. kShift = 3 gives FP16 with value E2M1 * 2^-14,
// kShift = 6 gives BF16 with value E2M1 * 2^-126 (exact: e = 0 lands on a subnormal).
template <int kShift, int kByteSel>
QPROF_HDI void DecodeE2M1Quad(uint32_t w, uint32_t& out_even, uint32_t& out_odd) {
  // Spread byte (2*kByteSel) to bits 8..15 and byte (2*kByteSel+1) to bits 24..31: nibble
  // n1 (resp. n3) now sits at bits 12..15 (28..31), n0 (n2) at 8..11 (24..27).
  constexpr uint32_t kSel = kByteSel == 0 ? 0x1404u : 0x3424u;
  const uint32_t x = BytePerm(w, 0u, kSel);
  constexpr uint32_t kSign = 0x80008000u;
  constexpr uint32_t kMag = 0x70007000u >> kShift;
  // (x & sign) | ((x >> shift) & mag), one LOP3 after the shift.
  out_odd = (x & kSign) | ((x >> kShift) & kMag);
  const uint32_t y = x << 4;
  out_even = (y & kSign) | ((y >> kShift) & kMag);
}

}  // namespace qprof::kernels::reg

#endif  // QPROF_KERNELS_COMMON_REG_OPS_H_
