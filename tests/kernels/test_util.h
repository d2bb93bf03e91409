// Helpers for the kernel tests: seeded data and relative error.
#ifndef QPROF_TESTS_KERNELS_TEST_UTIL_H_
#define QPROF_TESTS_KERNELS_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/common/common_cpu.h"
#include "tests/kernels/rel_error.h"

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

// ||got - want|| / ||want|| (tests/kernels/rel_error.h: +inf for a non-finite result, and
// for a non-zero result against an all-zero reference unless within a stated bound).
using ::qprof::kernel_test::RelError;

}  // namespace qprof::kernels::testing

#endif  // QPROF_TESTS_KERNELS_TEST_UTIL_H_
