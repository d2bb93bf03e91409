// Block encoders of MXFP4 and NVFP4, usable from host (.cc) and device (.cu) code: the CPU
// quantizers (mxfp4.cc, nvfp4.cc) and the CUDA activation quantizer of the fp4_mma path
// call these same functions, so a GPU-quantised block has the CPU's bits (same scale code,
// same power of two built from bits, same division order).
#ifndef QPROF_KERNELS_FORMATS_FP4_BLOCKS_H_
#define QPROF_KERNELS_FORMATS_FP4_BLOCKS_H_

#include <cstdint>

#include "kernels/formats/fp4_codecs.h"

namespace qprof::fp4 {

// MXFP4 (OCP MX v1.0) shared-exponent code of a block whose largest |v| has FP32 bits
// `amax_bits` (sign cleared): floor(log2 amax) - 2 (2 = emax of E2M1), clamped to
// [-127, 127], biased by 127. An all-zero block gets 0 (2^-127, elements zero); an FP32
// subnormal amax is below 2^-126, so its exponent clamps to -127 whatever its log2.
QPROF_HD uint8_t Mxfp4ScaleCodeFromAmaxBits(uint32_t amax_bits) {
  if (amax_bits == 0) return 0;
  int se = static_cast<int>(amax_bits >> 23) - 127 - 2;
  se = se < -127 ? -127 : (se > 127 ? 127 : se);
  return static_cast<uint8_t>(se + 127);
}

// 1 / 2^(code-127) built from bits (exact): 2^127 for code 0 down to 2^-127 (an FP32
// subnormal) for code 254; NaN for 255.
QPROF_HD float Ue8m0Reciprocal(uint8_t code) {
  const uint32_t c = code;
  const uint32_t bits = c == 255u ? 0x7FC00000u : (c == 254u ? 0x00400000u : (254u - c) << 23);
  return internal::BitsToFloat(bits);
}

// Encodes 32 finite values with scale `code`: element = RNE_E2M1(v * 2^-(code-127)).
// v * 2^-e equals v / 2^e exactly rounded (both are exact powers of two in range), so this
// is the OCP division.
QPROF_HD void Mxfp4EncodeBlock(const float* v, uint8_t code, uint8_t* packed16) {
  const float inv = Ue8m0Reciprocal(code);
  for (int i = 0; i < 16; ++i) {
    packed16[i] = static_cast<uint8_t>(FloatToE2M1(v[2 * i] * inv) |
                                       (FloatToE2M1(v[2 * i + 1] * inv) << 4));
  }
}

// NVFP4 (ModelOpt) block of 16 finite values: scale = E4M3_RNE(max(amax / (6*scale2),
// 2^-9)), all-zero block 1.0 (0x38); elements RNE_E2M1(v / (float(scale) * scale2)), one
// FP32 division each (ModelOpt's order; a reciprocal-multiply would round differently).
// `six_scale2` = 6 * scale2 rounded to FP32 once. Returns the scale code.
QPROF_HD uint8_t Nvfp4EncodeBlock(const float* v, uint32_t amax_bits, float scale2,
                                  float six_scale2, uint8_t* packed8) {
  uint8_t code = 0x38;
  if (amax_bits != 0) {
    const float r = internal::BitsToFloat(amax_bits) / six_scale2;
    code = FloatToE4M3(r > 0.001953125f ? r : 0.001953125f);  // 2^-9, smallest subnormal
  }
  const float denom = E4M3ToFloat(code) * scale2;
  for (int i = 0; i < 8; ++i) {
    // denom == 0 only when scale2 is a tiny subnormal and the product underflows: the
    // values are then ~1e-40 themselves; w / 0 = +-Inf saturates to +-6, 0 stays 0.
    const float a = v[2 * i], b = v[2 * i + 1];
    const uint8_t lo = (denom > 0.0f || a != 0.0f) ? FloatToE2M1(a / denom) : FloatToE2M1(a);
    const uint8_t hi = (denom > 0.0f || b != 0.0f) ? FloatToE2M1(b / denom) : FloatToE2M1(b);
    packed8[i] = static_cast<uint8_t>(lo | (hi << 4));
  }
  return code;
}

// NVFP4 per-tensor (or per-row) scale for amax: amax / (6 * 448); 1 for an all-zero input;
// the smallest subnormal where the quotient underflows (never a division by zero later).
QPROF_HD float Nvfp4Scale2FromAmax(float amax) {
  if (!(amax > 0.0f)) return 1.0f;
  const float s = amax / 2688.0f;  // 6 * 448, exact in FP32
  return s > 0.0f ? s : internal::BitsToFloat(1u);
}

}  // namespace qprof::fp4

#endif  // QPROF_KERNELS_FORMATS_FP4_BLOCKS_H_
