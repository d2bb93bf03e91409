#include "kernels/formats/nvfp4.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "tests/kernels/formats/reference_quant.h"

namespace qprof::fp4 {
namespace {

using testing::RefNvfp4;
using testing::Unpack;

std::vector<float> RandomMatrix(int64_t n, uint32_t seed, float spread_log2 = 6.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> expo(-spread_log2, spread_log2);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng) * std::exp2(expo(rng));
  return x;
}

float AbsMax(const std::vector<float>& x) {
  float a = 0;
  for (float v : x) a = std::max(a, std::abs(v));
  return a;
}

void ExpectMatchesReference(const std::vector<float>& x, int64_t rows, int64_t cols,
                            int threads) {
  const float scale2 = AbsMax(x) == 0 ? 1.0f : AbsMax(x) / 2688.0f;
  auto m = threads == 2 ? QuantizeNvfp4(x.data(), rows, cols, "w")
                        : QuantizeNvfp4WithScale2(x.data(), rows, cols, scale2, "w", threads);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->scale2, scale2);
  const auto ref = RefNvfp4(x, scale2);
  ASSERT_EQ(m->scales, ref.scales);
  ASSERT_EQ(Unpack(m->packed), ref.codes);
  std::vector<float> out(x.size(), -1234.0f);  // poisoned
  DequantizeNvfp4(*m, out.data(), threads);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = E2M1ToFloat(ref.codes[i]) * E4M3ToFloat(ref.scales[i / 16]) * scale2;
    ASSERT_EQ(out[i], want) << i;
  }
}

TEST(Nvfp4, MatchesReferenceOnAwkwardShapes) {
  const int64_t shapes[][2] = {{1, 16}, {3, 48}, {7, 4112}, {0, 16}, {11, 176}};
  uint32_t seed = 3;
  for (auto& s : shapes) {
    const auto x = RandomMatrix(s[0] * s[1], seed++);
    ExpectMatchesReference(x, s[0], s[1], 1);
  }
}

TEST(Nvfp4, TwoThreadsGiveTheSameBits) {
  const int64_t rows = 129, cols = 4096;  // 33024 blocks
  const auto x = RandomMatrix(rows * cols, 42, 12.0f);
  ExpectMatchesReference(x, rows, cols, 2);
}

TEST(Nvfp4, Scale2FromTensorAmax) {
  EXPECT_EQ(Nvfp4Scale2ForAmax(2688.0f), 1.0f);
  EXPECT_EQ(Nvfp4Scale2ForAmax(0.0f), 1.0f);  // all-zero tensor
  EXPECT_EQ(Nvfp4Scale2ForAmax(1.0f), 1.0f / 2688.0f);
  EXPECT_GT(Nvfp4Scale2ForAmax(1e-44f), 0.0f);  // never 0 (would divide by zero)
}

TEST(Nvfp4, ZeroTensorAndZeroBlocks) {
  std::vector<float> x(64, 0.0f);
  auto m = QuantizeNvfp4(x.data(), 2, 32, "z");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->scale2, 1.0f);
  for (uint8_t s : m->scales) EXPECT_EQ(s, 0x38);  // 1.0
  for (uint8_t p : m->packed) EXPECT_EQ(p, 0);
  x[20] = 5.0f;  // block 1 non-zero; blocks 0, 2, 3 zero
  m = QuantizeNvfp4(x.data(), 2, 32, "z");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->scales[0], 0x38);
  EXPECT_EQ(m->scales[1], 0x7E);  // its amax is the tensor amax: 448
  EXPECT_EQ(m->scales[2], 0x38);
  EXPECT_EQ(m->packed[10] & 0xF, 0x7);  // element 20 -> 6 * 448 * ws2 = 5 (exactly)
  std::vector<float> y(64);
  DequantizeNvfp4(*m, y.data());
  EXPECT_EQ(y[20], 6.0f * 448.0f * (5.0f / 2688.0f));
}

TEST(Nvfp4, TinyBlockScaleClampsToSmallestSubnormal) {
  // One huge element makes the other block's amax / (6 * ws2) fall below 2^-9; the recipe
  // clamps it to 2^-9 (E4M3 code 0x01) instead of rounding the scale to zero.
  std::vector<float> x(32, 0.0f);
  x[0] = 1e6f;
  x[16] = 1e-3f;
  auto m = QuantizeNvfp4(x.data(), 1, 32, "w");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->scales[1], 0x01);
  ExpectMatchesReference(x, 1, 32, 1);
}

TEST(Nvfp4, SubnormalInputs) {
  std::vector<float> x(48);
  for (int i = 0; i < 48; ++i) x[i] = std::ldexp(static_cast<float>(i % 9) - 4.0f, -135);
  ExpectMatchesReference(x, 3, 16, 1);
  x.assign(16, std::numeric_limits<float>::denorm_min());
  auto m = QuantizeNvfp4(x.data(), 1, 16, "w");
  ASSERT_TRUE(m.ok());
  for (int i = 0; i < 8; ++i) EXPECT_NE(m->packed[i], 0) << "tiny values must not vanish";
}

TEST(Nvfp4, SharedScale2ForW1AndW3) {
  const auto w1 = RandomMatrix(4 * 64, 8), w3 = RandomMatrix(4 * 64, 9, 2.0f);
  auto a1 = AbsMaxFinite(w1.data(), w1.size(), "w1");
  auto a3 = AbsMaxFinite(w3.data(), w3.size(), "w3");
  ASSERT_TRUE(a1.ok() && a3.ok());
  const float s2 = Nvfp4Scale2ForAmax(std::max(*a1, *a3));
  auto m3 = QuantizeNvfp4WithScale2(w3.data(), 4, 64, s2, "w3");
  ASSERT_TRUE(m3.ok());
  EXPECT_EQ(m3->scale2, s2);
  const auto ref = RefNvfp4(w3, s2);
  EXPECT_EQ(m3->scales, ref.scales);
  EXPECT_EQ(Unpack(m3->packed), ref.codes);
  EXPECT_FALSE(QuantizeNvfp4WithScale2(w3.data(), 4, 64, 0.0f, "w3").ok());
  EXPECT_FALSE(
      QuantizeNvfp4WithScale2(w3.data(), 4, 64, std::numeric_limits<float>::infinity(), "w3")
          .ok());
}

TEST(Nvfp4, RejectsNonFiniteNamingTensorAndIndex) {
  const int64_t rows = 200, cols = 4096;
  auto x = RandomMatrix(rows * cols, 5);
  x[199 * cols + 4095] = -std::numeric_limits<float>::infinity();
  auto m = QuantizeNvfp4(x.data(), rows, cols, "experts.w2");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string msg(m.status().message());
  EXPECT_NE(msg.find("experts.w2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("element 819199 (row 199, col 4095) is -Inf"), std::string::npos) << msg;
  x[199 * cols + 4095] = 0.0f;
  x[3] = std::nanf("");
  m = QuantizeNvfp4WithScale2(x.data(), rows, cols, 1.0f, "experts.w2", 2);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("element 3 (row 0, col 3) is NaN"),
            std::string::npos);
}

TEST(Nvfp4, RejectsColsNotMultipleOf16) {
  std::vector<float> x(24, 1.0f);
  EXPECT_EQ(QuantizeNvfp4(x.data(), 1, 24, "w").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Nvfp4, RoundTripErrorIsSmall) {
  const auto x = RandomMatrix(8 * 256, 23, 1.0f);
  auto m = QuantizeNvfp4(x.data(), 8, 256, "w");
  ASSERT_TRUE(m.ok());
  std::vector<float> y(x.size());
  DequantizeNvfp4(*m, y.data());
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += x[i] * x[i];
  }
  // FP4 with fine block scales: a relative RMS error around 0.1 for Gaussian data.
  EXPECT_LT(std::sqrt(num / den), 0.15);
  EXPECT_GT(std::sqrt(num / den), 0.01);
}

}  // namespace
}  // namespace qprof::fp4
