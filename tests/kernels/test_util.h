// Helpers for the kernel tests: seeded data and relative error.
#ifndef QPROF_TESTS_KERNELS_TEST_UTIL_H_
#define QPROF_TESTS_KERNELS_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/common/common_cpu.h"

namespace qprof::kernels::testing {

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::vector<uint16_t> RandomBf16(size_t n, uint32_t seed, float scale = 1.0f) {
  std::vector<float> f = RandomFloats(n, seed, scale);
  std::vector<uint16_t> b(n);
  FloatToBf16N(f.data(), static_cast<int64_t>(n), b.data());
  return b;
}

// ||a - b|| / ||b|| (0 when both are zero).
inline double RelError(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

}  // namespace qprof::kernels::testing

#endif  // QPROF_TESTS_KERNELS_TEST_UTIL_H_
