// The kernel tests' error metric (rel_error.h) on hand-made vectors: it measures what it
// says, and it cannot pass by accident: NaN/Inf results, size mismatches and a near-zero
// result against an all-zero reference (the case that used to return the bare norm and
// so passed any bound) all give +inf unless the test states an absolute bound.
#include "tests/kernels/rel_error.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace qprof::kernel_test {
namespace {

TEST(RelErrorTest, IsTheRelativeTwoNormError) {
  EXPECT_EQ(RelError({3.f, 4.f}, {3.f, 4.f}), 0.0);
  EXPECT_DOUBLE_EQ(RelError({3.f, 4.5f}, {3.f, 4.f}), 0.5 / 5.0);  // ||(0, .5)|| / ||(3, 4)||
  EXPECT_DOUBLE_EQ(RelError({0.f, 0.f}, {3.f, 4.f}), 1.0);
  EXPECT_EQ(RelError({}, {}), 0.0);  // nothing to compare: zero reference, zero result
}

TEST(RelErrorTest, NonFiniteResultsAndSizeMismatchesFail) {
  EXPECT_EQ(RelError({1.f, NAN}, {1.f, 2.f}), INFINITY);
  EXPECT_EQ(RelError({1.f, INFINITY}, {1.f, 2.f}), INFINITY);
  EXPECT_EQ(RelError({1.f}, {1.f, 2.f}), INFINITY);
  EXPECT_EQ(RelError({1.f, 2.f, 3.f}, {1.f, 2.f}), INFINITY);
}

TEST(RelErrorTest, InfiniteReferenceEntriesMustMatchExactly) {
  // The lse of an empty selection is -inf; the other entries are measured as usual.
  EXPECT_DOUBLE_EQ(RelError({-INFINITY, 3.f, 4.5f}, {-INFINITY, 3.f, 4.f}), 0.1);
  EXPECT_EQ(RelError({-1e30f, 3.f, 4.f}, {-INFINITY, 3.f, 4.f}), INFINITY);
  EXPECT_EQ(RelError({INFINITY, 3.f, 4.f}, {-INFINITY, 3.f, 4.f}), INFINITY);
  EXPECT_EQ(RelError({NAN}, {-INFINITY}), INFINITY);
  EXPECT_EQ(RelError({-INFINITY}, {-INFINITY}), 0.0);
}

TEST(RelErrorTest, NearZeroResultAgainstAllZeroReferenceFailsUnlessWithinStatedBound) {
  const std::vector<float> zero(4, 0.f);
  EXPECT_EQ(RelError(zero, zero), 0.0);
  EXPECT_EQ(RelError({0.f, -0.f, 0.f, 0.f}, zero), 0.0);
  // A collapsed output (what an FP4 mutant's second GEMM gave): tiny but not zero.
  const std::vector<float> tiny = {1e-30f, 0.f, -2e-30f, 0.f};
  EXPECT_EQ(RelError(tiny, zero), INFINITY);
  EXPECT_EQ(RelError(tiny, zero, 1e-30), INFINITY);  // |-2e-30| > 1e-30
  EXPECT_EQ(RelError(tiny, zero, 3e-30), 0.0);       // within the bound the test states
  EXPECT_EQ(RelError({1e-3f, 0.f, 0.f, 0.f}, zero, 1e-6), INFINITY);
  EXPECT_EQ(RelError({NAN, 0.f, 0.f, 0.f}, zero, 1.0), INFINITY);
}

}  // namespace
}  // namespace qprof::kernel_test
