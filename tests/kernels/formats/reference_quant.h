// Plain reference quantizers for the tests: the formats' recipes written as directly as
// possible (double arithmetic where the recipe is exact, nearest-value search instead of
// bit tricks), to compare with the optimised code bit for bit.
#ifndef QPROF_TESTS_FORMATS_REFERENCE_QUANT_H_
#define QPROF_TESTS_FORMATS_REFERENCE_QUANT_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace qprof::fp4::testing {

inline const double kE2M1Mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

// Nearest E2M1 code by search; ties to the even code; saturates; sign from the sign bit.
inline uint8_t RefE2M1(float v) {
  const double a = std::min(std::abs(static_cast<double>(v)), 6.0);
  int best = 0;
  for (int c = 1; c < 8; ++c) {
    const double d = std::abs(kE2M1Mag[c] - a), db = std::abs(kE2M1Mag[best] - a);
    if (d < db || (d == db && (c & 1) == 0)) best = c;
  }
  return static_cast<uint8_t>(best | (std::signbit(v) ? 8 : 0));
}

inline double RefE4M3Value(int c) {
  const int e = (c >> 3) & 15, m = c & 7;
  return e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
}

// Non-negative E4M3 by search over codes 0..0x7E; ties to even; saturates at 448.
inline uint8_t RefE4M3Positive(float v) {
  const double a = std::min(static_cast<double>(v), 448.0);
  int best = 0;
  for (int c = 1; c <= 0x7E; ++c) {
    const double d = std::abs(RefE4M3Value(c) - a), db = std::abs(RefE4M3Value(best) - a);
    if (d < db || (d == db && (c & 1) == 0)) best = c;
  }
  return static_cast<uint8_t>(best);
}

struct RefQuant {
  std::vector<uint8_t> codes;   // one E2M1 code per element (unpacked)
  std::vector<uint8_t> scales;  // one per block
  float scale2 = 1.0f;
};

// OCP MX v1.0: shared_exp = floor(log2(amax)) - 2 via frexp (amax = f * 2^e, f in [0.5, 1)
// so floor(log2(amax)) = e - 1), clamped to [-127, 127]; v / 2^shared_exp by ldexp.
inline RefQuant RefMxfp4(const std::vector<float>& x) {
  RefQuant r;
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::abs(x[b * 32 + i]));
    int shared = -127;
    if (amax > 0) {
      int e;
      std::frexp(amax, &e);
      shared = std::clamp(e - 1 - 2, -127, 127);
    }
    r.scales.push_back(amax > 0 ? static_cast<uint8_t>(shared + 127) : 0);
    for (int i = 0; i < 32; ++i) {
      r.codes.push_back(RefE2M1(amax > 0 ? std::ldexp(x[b * 32 + i], -shared) : 0.0f));
    }
  }
  return r;
}

// ModelOpt NVFP4 with every product/division in fp32 as the recipe states.
inline RefQuant RefNvfp4(const std::vector<float>& x, float scale2) {
  RefQuant r;
  r.scale2 = scale2;
  const float six_s2 = 6.0f * scale2;
  for (size_t b = 0; b < x.size() / 16; ++b) {
    float amax = 0;
    for (int i = 0; i < 16; ++i) amax = std::max(amax, std::abs(x[b * 16 + i]));
    const uint8_t sc = amax == 0 ? 0x38 : RefE4M3Positive(std::max(amax / six_s2, 0x1p-9f));
    r.scales.push_back(sc);
    const float denom = static_cast<float>(RefE4M3Value(sc)) * scale2;
    for (int i = 0; i < 16; ++i) r.codes.push_back(RefE2M1(x[b * 16 + i] / denom));
  }
  return r;
}

inline std::vector<uint8_t> Unpack(const std::vector<uint8_t>& packed) {
  std::vector<uint8_t> codes;
  for (uint8_t p : packed) {
    codes.push_back(p & 15);
    codes.push_back(p >> 4);
  }
  return codes;
}

}  // namespace qprof::fp4::testing

#endif  // QPROF_TESTS_FORMATS_REFERENCE_QUANT_H_
