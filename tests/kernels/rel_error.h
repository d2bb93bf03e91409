// The error metric of every kernel test (CPU, warp emulation, GPU): the relative error
// ||got - want||_2 / ||want||_2, in double. One definition, because a metric that cannot
// fail is the easiest defect to miss:
//  - a non-finite `got` where `want` is finite (a NaN poison never overwritten, an overflow)
//    gives +inf; an infinite `want` (the lse of an empty selection is -inf) must be matched
//    exactly, and such entries stay out of the norms;
//  - different sizes give +inf;
//  - an all-zero reference has no relative error: the result passes (0) only when every
//    |got| <= zero_abs_bound, a bound the calling test states (default 0: exactly zero),
//    and is +inf otherwise. (The old versions returned the bare norm ||got|| there, so an
//    output collapsed to 1e-30 "matched" an all-zero reference at any bound.)
#ifndef QPROF_TESTS_KERNELS_REL_ERROR_H_
#define QPROF_TESTS_KERNELS_REL_ERROR_H_

#include <cmath>
#include <vector>

namespace qprof::kernel_test {

inline double RelError(const std::vector<float>& got, const std::vector<float>& want,
                       double zero_abs_bound = 0.0) {
  if (got.size() != want.size()) return INFINITY;
  double num = 0, den = 0, got_max = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i])) {
      if (got[i] != want[i]) return INFINITY;
      continue;
    }
    if (!std::isfinite(got[i])) return INFINITY;
    const double d = static_cast<double>(got[i]) - want[i];
    num += d * d;
    den += static_cast<double>(want[i]) * want[i];
    got_max = std::fmax(got_max, std::fabs(static_cast<double>(got[i])));
  }
  if (den > 0) return std::sqrt(num / den);
  return got_max <= zero_abs_bound ? 0.0 : INFINITY;
}

}  // namespace qprof::kernel_test

#endif  // QPROF_TESTS_KERNELS_REL_ERROR_H_
