#include "kernels/common/common_cpu.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "tests/kernels/test_util.h"

namespace qprof::kernels {
namespace {

using testing::RandomBf16;
using testing::RandomFloats;
using testing::RelError;

TEST(Bf16Test, RoundsToNearestEvenAndRoundTrips) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
  // 1 + 2^-8 is exactly half an ulp of BF16 above 1: ties to even -> 1.0.
  EXPECT_EQ(FloatToBf16(1.00390625f), 0x3F80);
  // 1 + 3*2^-8 is half an ulp above 1+2^-7 (odd mantissa): rounds up to 1 + 2^-6.
  EXPECT_EQ(FloatToBf16(1.01171875f), 0x3F82);
  EXPECT_EQ(Bf16ToFloat(0xC000), -2.0f);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(NAN))));
}

TEST(DenseGemmTest, FastMatchesReferenceAtAwkwardSizes) {
  ThreadPool pool(2);
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {3, 17, 33}, {16, 130, 257}, {5, 8, 1000}}) {
    auto x = RandomFloats(size_t(m) * k, 1 + m);
    auto w = RandomBf16(size_t(n) * k, 2 + n);
    std::vector<float> ref(size_t(m) * n, 0.5f), fast(size_t(m) * n, 0.5f);
    DenseGemmParams p{m, n, k, x.data(), w.data(), ref.data(), /*accumulate=*/true};
    ASSERT_TRUE(DenseGemmReferenceCpu(p).ok());
    p.y = fast.data();
    p.pool = &pool;
    ASSERT_TRUE(DenseGemmCpu(p).ok());
    EXPECT_LT(RelError(fast, ref), 1e-5) << m << "x" << n << "x" << k;
  }
  DenseGemmParams bad;
  EXPECT_FALSE(DenseGemmCpu(bad).ok());
}

TEST(RmsNormTest, MatchesFormula) {
  const int cols = 37;
  auto x = RandomFloats(2 * cols, 3);
  auto w = RandomBf16(cols, 4);
  std::vector<float> out(2 * cols, NAN);
  ASSERT_TRUE(RmsNormCpu({2, cols, 0, 0, 1e-6f, x.data(), w.data(), out.data()}).ok());
  for (int r = 0; r < 2; ++r) {
    double ss = 0;
    for (int c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
    double inv = 1 / std::sqrt(ss / cols + 1e-6);
    for (int c = 0; c < cols; ++c) {
      EXPECT_NEAR(out[r * cols + c], x[r * cols + c] * inv * Bf16ToFloat(w[c]), 1e-5);
    }
  }
}

TEST(RopeTest, PositionZeroIsIdentityAndNormIsKept) {
  auto x = RandomFloats(2 * 3 * 64, 5);
  auto y = x;
  int32_t pos[2] = {0, 1234};
  RopeParams p{2, 3, 64, 64, 3 * 64, 10000.0f, pos, y.data()};
  ASSERT_TRUE(RopeCpu(p).ok());
  for (int i = 0; i < 3 * 64; ++i) EXPECT_FLOAT_EQ(y[i], x[i]);
  bool changed = false;
  for (int i = 0; i < 32; ++i) {
    int o = 3 * 64 + 2 * i;
    double n0 = x[o] * x[o] + x[o + 1] * x[o + 1], n1 = y[o] * y[o] + y[o + 1] * y[o + 1];
    EXPECT_NEAR(n0, n1, 1e-4 * (1 + n0));
    changed |= std::abs(y[o] - x[o]) > 1e-3;
  }
  EXPECT_TRUE(changed);
}

TEST(RouterTest, TopkByScoreRenormalisedAndScaled) {
  // Token 0: expert 2 highest, then 0. Bias lifts expert 3 above 0 for selection only.
  std::vector<float> logits = {1.0f, -2.0f, 3.0f, 0.5f};
  std::vector<float> bias = {0.0f, 0.0f, 0.0f, 0.2f};
  int32_t ids[2];
  float wts[2];
  RouterTopkParams p{1, 4, 2, 2.5f, logits.data(), nullptr, ids, wts};
  ASSERT_TRUE(RouterTopkCpu(p).ok());
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 0);
  EXPECT_NEAR(wts[0] + wts[1], 2.5f, 1e-6);
  auto sig = [](float v) { return 1 / (1 + std::exp(-v)); };
  EXPECT_NEAR(wts[0] / wts[1], sig(3.0f) / sig(1.0f), 1e-5);
  p.bias = bias.data();
  ASSERT_TRUE(RouterTopkCpu(p).ok());
  EXPECT_EQ(ids[1], 3);
  p.topk = 5;
  EXPECT_FALSE(RouterTopkCpu(p).ok());
}

TEST(ArgmaxTest, LowestIndexWinsTies) {
  std::vector<float> l = {1, 5, 5, 2, -1, -3, -1, -2};
  int32_t ids[2] = {-7, -7};
  ASSERT_TRUE(ArgmaxCpu({2, 4, l.data(), ids}).ok());
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 0);
}

TEST(EmbeddingTest, CopiesRowsAndRejectsBadIds) {
  auto table = RandomBf16(10 * 8, 6);
  int32_t ids[2] = {7, 0};
  std::vector<float> out(16);
  ASSERT_TRUE(EmbeddingCpu({2, 8, 10, ids, table.data(), out.data()}).ok());
  EXPECT_EQ(out[0], Bf16ToFloat(table[7 * 8]));
  ids[1] = 10;
  EXPECT_FALSE(EmbeddingCpu({2, 8, 10, ids, table.data(), out.data()}).ok());
}

TEST(ThreadPoolTest, CoversEveryIndexOnceAndNestsInline) {
  ThreadPool pool(2);
  std::vector<int> hits(1001, 0);
  pool.ParallelFor(1001, 7, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[i];
    pool.ParallelFor(3, 1, [](int64_t, int64_t) {});  // nested: inline
  });
  for (int h : hits) EXPECT_EQ(h, 1);
  EXPECT_EQ(pool.size(), 2);
}

}  // namespace
}  // namespace qprof::kernels
