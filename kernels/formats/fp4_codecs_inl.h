// Inline definitions for fp4_codecs.h. Include fp4_codecs.h, not this file.
//
// Encoders work on the IEEE-754 bit pattern of the input so they are loop-free and
// branch-light (the compiler turns the few selects into blends and vectorises callers):
//  - normal range: round the fp32 mantissa to the target width with the classic
//    "add (half ulp - 1) + lsb, then shift" RNE trick; a mantissa carry correctly bumps
//    the exponent (1.75 -> 2.0);
//  - subnormal range: add a power of two whose ulp equals the target's smallest
//    subnormal, letting the FPU round (ties to even: the default rounding mode on host and
//    device), and read the rounded multiple from the bit difference.
// Both tricks are exact: every value involved is representable in fp32.
#ifndef QPROF_KERNELS_FORMATS_FP4_CODECS_INL_H_
#define QPROF_KERNELS_FORMATS_FP4_CODECS_INL_H_

#include <cstdint>
#include <cstring>

namespace qprof::fp4 {
namespace internal {

QPROF_HD uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

QPROF_HD float BitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}

inline constexpr uint32_t kF32AbsMask = 0x7FFFFFFFu;
inline constexpr uint32_t kF32ExpMask = 0x7F800000u;
// fp32 bit patterns of the thresholds used below.
inline constexpr uint32_t kF32One = 0x3F800000u;       // 1.0: smallest E2M1 normal
inline constexpr uint32_t kF32Six = 0x40C00000u;       // 6.0: E2M1 max
inline constexpr uint32_t kF32TwoPow22 = 0x4A800000u;  // 2^22: ulp 0.5 = E2M1 subnormal
inline constexpr uint32_t kF32TwoPowM6 = 0x3C800000u;  // 2^-6: smallest E4M3 normal
inline constexpr uint32_t kF32E4M3Max = 0x43E00000u;   // 448.0
inline constexpr uint32_t kF32TwoPow14 = 0x46800000u;  // 2^14: ulp 2^-9 = E4M3 subnormal

}  // namespace internal

QPROF_HD float E2M1ToFloat(uint8_t code) {
  // s eem: e == 0 -> m * 0.5 (0 or 0.5); else (1 + m/2) * 2^(e-1) = fp32 with biased
  // exponent e + 126 and mantissa MSB m.
  const uint32_t c = code;
  const uint32_t e = (c >> 1) & 3u;
  const uint32_t m = c & 1u;
  const uint32_t sign = (c & 8u) << 28;
  const uint32_t normal = ((e + 126u) << 23) | (m << 22);
  const uint32_t sub = m ? 0x3F000000u : 0u;  // 0.5 or 0
  return internal::BitsToFloat(sign | (e ? normal : sub));
}

QPROF_HD uint8_t FloatToE2M1(float v) {
  using namespace internal;
  const uint32_t b = FloatBits(v);
  const uint32_t sign = (b >> 28) & 8u;
  // |v| as a non-negative int32: signed compares map to single SIMD instructions (SSE2 has
  // no unsigned 32-bit compare), which lets callers' loops vectorise well.
  const int32_t a = static_cast<int32_t>(b & kF32AbsMask);
  // Normal range [1, 6): keep 1 mantissa bit with RNE; (biased_exp << 1 | m) minus
  // (126 << 1) is the E2M1 code (1.0 = 0b010). A carry out of 5.x lands on code 7 (6.0).
  const int32_t r = a + 0x1FFFFF + ((a >> 22) & 1);
  const int32_t normal = (r >> 22) - 252;
  // [0, 1): multiples of 0.5 are codes 0, 1, 2 (2 = 1.0, the first normal).
  const int32_t small = a < static_cast<int32_t>(kF32One) ? a : 0;
  const float f = BitsToFloat(static_cast<uint32_t>(small)) + BitsToFloat(kF32TwoPow22);
  const int32_t sub = static_cast<int32_t>(FloatBits(f) - kF32TwoPow22);
  // >= 6, Inf and NaN saturate to 6 (code 7): E2M1 has no Inf/NaN.
  const int32_t mag = a >= static_cast<int32_t>(kF32Six)
                          ? 7
                          : (a >= static_cast<int32_t>(kF32One) ? normal : sub);
  return static_cast<uint8_t>(sign | static_cast<uint32_t>(mag));
}

QPROF_HD float Ue8m0ToFloat(uint8_t code) {
  // 2^(e-127). e = 0 is 2^-127, an fp32 subnormal (bit 22). 0xFF is NaN.
  const uint32_t e = code;
  const uint32_t bits = e == 0xFFu ? 0x7FC00000u : (e == 0 ? 0x00400000u : (e << 23));
  return internal::BitsToFloat(bits);
}

QPROF_HD float E4M3ToFloat(uint8_t code) {
  const uint32_t c = code;
  const uint32_t sign = (c & 0x80u) << 24;
  const uint32_t e = (c >> 3) & 0xFu;
  const uint32_t m = c & 7u;
  if (e == 15u && m == 7u) return internal::BitsToFloat(sign | 0x7FC00000u);  // NaN
  if (e == 0) {
    // Subnormal: m * 2^-9 (exact in fp32).
    const float mag = static_cast<float>(m) * 0.001953125f;
    return internal::BitsToFloat(sign | internal::FloatBits(mag));
  }
  // (1 + m/8) * 2^(e-7): fp32 biased exponent e + 120, mantissa m in the top 3 bits.
  return internal::BitsToFloat(sign | ((e + 120u) << 23) | (m << 20));
}

QPROF_HD uint8_t FloatToE4M3(float v) {
  using namespace internal;
  const uint32_t b = FloatBits(v);
  const uint32_t sign = (b >> 24) & 0x80u;
  const uint32_t a = b & kF32AbsMask;
  if (a > kF32ExpMask) return static_cast<uint8_t>(sign | 0x7Fu);  // NaN
  // Normal range [2^-6, 448]: 3 mantissa bits with RNE; (biased_exp << 3 | m) minus
  // (120 << 3) is the code. Everything above 448 (Inf included) saturates to 0x7E.
  const uint32_t r = a + 0x7FFFFu + ((a >> 20) & 1u);
  const uint32_t normal = (r >> 20) - 960u;
  // [0, 2^-6): multiples of 2^-9; a result of 8 is code 0x08 = 2^-6, the first normal.
  const float f = BitsToFloat(a < kF32TwoPowM6 ? a : 0u) + BitsToFloat(kF32TwoPow14);
  const uint32_t sub = FloatBits(f) - kF32TwoPow14;
  const uint32_t mag = a > kF32E4M3Max ? 0x7Eu : (a >= kF32TwoPowM6 ? normal : sub);
  return static_cast<uint8_t>(sign | mag);
}

}  // namespace qprof::fp4

#endif  // QPROF_KERNELS_FORMATS_FP4_CODECS_INL_H_
