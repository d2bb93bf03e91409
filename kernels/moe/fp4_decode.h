// Fast FP4 row decoding for the CPU MoE kernels: E2M1 nibbles through a 256-entry
// byte -> (low, high) table, times the block's scale (UE8M0, or E4M3 * weight_scale_2 for
// NVFP4, both through 256-entry tables). Bit-identical elements to the format references
// in kernels/formats for MXFP4 (power-of-two scales are exact); for NVFP4 the product
// e2m1 * (e4m3 * scale2) may differ from (e2m1 * e4m3) * scale2 in the last bit.
#ifndef QPROF_KERNELS_MOE_FP4_DECODE_H_
#define QPROF_KERNELS_MOE_FP4_DECODE_H_

#include <array>
#include <cstdint>

#include "kernels/common/params.h"
#include "kernels/formats/fp4_codecs.h"

namespace qprof::kernels {

struct Fp4Tables {
  std::array<float, 512> pair;   // [byte*2] = E2M1(low nibble), [byte*2+1] = E2M1(high)
  std::array<float, 256> ue8m0;  // MX scale values
  std::array<float, 256> e4m3;   // NVFP4 block-scale values
};

inline const Fp4Tables& GetFp4Tables() {
  static const Fp4Tables tables = [] {
    Fp4Tables t;
    for (int b = 0; b < 256; ++b) {
      t.pair[2 * b] = fp4::E2M1ToFloat(static_cast<uint8_t>(b & 0xF));
      t.pair[2 * b + 1] = fp4::E2M1ToFloat(static_cast<uint8_t>(b >> 4));
      t.ue8m0[b] = fp4::Ue8m0ToFloat(static_cast<uint8_t>(b));
      t.e4m3[b] = fp4::E4M3ToFloat(static_cast<uint8_t>(b));
    }
    return t;
  }();
  return tables;
}

// Decodes one row of k FP4 elements (k a multiple of the block) into out[k].
inline void DecodeFp4Row(const Fp4Tables& t, Fp4Format f, const uint8_t* __restrict packed,
                         const uint8_t* __restrict scales, float scale2, int64_t k,
                         float* __restrict out) {
  const int block = BlockSize(f);
  const int64_t blocks = k / block;
  for (int64_t b = 0; b < blocks; ++b) {
    const float s = f == Fp4Format::kMxfp4 ? t.ue8m0[scales[b]] : t.e4m3[scales[b]] * scale2;
    const uint8_t* p = packed + b * (block / 2);
    float* o = out + b * block;
    for (int i = 0; i < block / 2; ++i) {
      o[2 * i] = t.pair[2 * p[i]] * s;
      o[2 * i + 1] = t.pair[2 * p[i] + 1] * s;
    }
  }
}

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MOE_FP4_DECODE_H_
