#include "kernels/formats/mxfp4.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "tests/kernels/formats/reference_quant.h"

namespace qprof::fp4 {
namespace {

using testing::RefMxfp4;
using testing::Unpack;

std::vector<float> RandomMatrix(int64_t n, uint32_t seed, float spread_log2 = 6.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> expo(-spread_log2, spread_log2);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng) * std::exp2(expo(rng));
  return x;
}

void ExpectMatchesReference(const std::vector<float>& x, int64_t rows, int64_t cols,
                            int threads) {
  auto m = QuantizeMxfp4(x.data(), rows, cols, "w", threads);
  ASSERT_TRUE(m.ok()) << m.status();
  const auto ref = RefMxfp4(x);
  ASSERT_EQ(m->scales, ref.scales);
  ASSERT_EQ(Unpack(m->packed), ref.codes);
  // Dequantization is code * 2^(scale - 127).
  std::vector<float> out(x.size(), -1234.0f);  // poisoned
  DequantizeMxfp4(*m, out.data(), threads);
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = std::ldexp(E2M1ToFloat(ref.codes[i]), ref.scales[i / 32] - 127);
    ASSERT_EQ(out[i], want) << i;
  }
}

TEST(Mxfp4, MatchesReferenceOnAwkwardShapes) {
  const int64_t shapes[][2] = {{1, 32}, {3, 96}, {7, 4128}, {1, 0}, {0, 64}, {13, 352}};
  uint32_t seed = 1;
  for (auto& s : shapes) {
    const auto x = RandomMatrix(s[0] * s[1], seed++);
    ExpectMatchesReference(x, s[0], s[1], 1);
  }
}

TEST(Mxfp4, TwoThreadsGiveTheSameBits) {
  const int64_t rows = 257, cols = 4096;  // 32896 blocks: enough to split
  const auto x = RandomMatrix(rows * cols, 99, 20.0f);
  ExpectMatchesReference(x, rows, cols, 2);
  auto a = QuantizeMxfp4(x.data(), rows, cols, "w", 1);
  auto b = QuantizeMxfp4(x.data(), rows, cols, "w", 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->packed, b->packed);
  EXPECT_EQ(a->scales, b->scales);
}

TEST(Mxfp4, ZeroBlockGetsScaleCodeZero) {
  std::vector<float> x(64, 0.0f);
  x[40] = 3.0f;  // second block non-zero
  x[5] = -0.0f;
  auto m = QuantizeMxfp4(x.data(), 1, 64, "w");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->scales[0], 0);
  EXPECT_EQ(m->scales[1], 127 + 1 - 2);  // floor(log2 3) = 1
  for (int i = 0; i < 16; ++i) EXPECT_EQ(m->packed[i] & 0x77, 0) << i;  // magnitudes 0
  EXPECT_EQ(m->packed[2] >> 4, 0x8);  // element 5: -0 keeps its sign
}

TEST(Mxfp4, AmaxMantissaAboveOnePointFiveClipsToSix) {
  // amax = 1.75 * 2^3 = 14: shared_exp = 3 - 2 = 1, 14 / 2 = 7 -> saturates to 6 (= 12).
  std::vector<float> x(32, 1.0f);
  x[9] = -14.0f;
  x[10] = 13.0f;  // 6.5 -> 6 too
  x[11] = 11.0f;  // 5.5 -> nearest is 6
  uint8_t packed[16];
  const uint8_t code = QuantizeMxfp4Block(x.data(), packed);
  EXPECT_EQ(code, 128);
  EXPECT_EQ(packed[4] >> 4, 0xF);   // element 9: -6
  EXPECT_EQ(packed[5] & 0xF, 0x7);  // element 10: 6
  EXPECT_EQ(packed[5] >> 4, 0x7);   // element 11: 6
  // amax mantissa exactly 1.5 is representable: 12 = 1.5 * 2^3 -> 6 * 2, no clipping.
  x[9] = 12.0f; x[10] = 0.0f; x[11] = 0.0f;
  QuantizeMxfp4Block(x.data(), packed);
  EXPECT_EQ(packed[4] >> 4, 0x7);
}

TEST(Mxfp4, ExtremeExponentsClamp) {
  std::vector<float> x(32, 0.0f);
  x[0] = std::numeric_limits<float>::denorm_min();  // floor(log2) = -149 -> -127
  EXPECT_EQ(Mxfp4ScaleCodeForAmax(x[0]), 0);
  EXPECT_EQ(Mxfp4ScaleCodeForAmax(std::ldexp(1.0f, -125)), 0);      // -125 - 2 = -127
  EXPECT_EQ(Mxfp4ScaleCodeForAmax(std::ldexp(1.0f, -124)), 1);
  EXPECT_EQ(Mxfp4ScaleCodeForAmax(std::numeric_limits<float>::max()), 127 + 125);
  EXPECT_EQ(Mxfp4ScaleCodeForAmax(6.0f), 127);
  EXPECT_EQ(Mxfp4ScaleCodeForAmax(std::nextafter(4.0f, 0.0f)), 126);
  // Subnormal inputs: block scale 2^-127, elements v * 2^127.
  std::vector<float> y(32);
  for (int i = 0; i < 32; ++i) y[i] = std::ldexp(static_cast<float>(i % 7) - 3.0f, -130);
  ExpectMatchesReference(y, 1, 32, 1);
  std::vector<float> big(32, std::numeric_limits<float>::max());
  big[3] = -1e38f;
  ExpectMatchesReference(big, 1, 32, 1);
}

TEST(Mxfp4, RejectsNonFiniteNamingTensorAndIndex) {
  const int64_t rows = 300, cols = 4096;
  auto x = RandomMatrix(rows * cols, 5);
  x[250 * cols + 77] = std::numeric_limits<float>::quiet_NaN();  // in the second half
  x[260 * cols + 1] = std::numeric_limits<float>::infinity();
  for (int threads : {1, 2}) {
    auto m = QuantizeMxfp4(x.data(), rows, cols, "layers.3.w1", threads);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string msg(m.status().message());
    EXPECT_NE(msg.find("layers.3.w1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("element 1024077 (row 250, col 77) is NaN"), std::string::npos) << msg;
  }
  std::vector<float> y(32, 1.0f);
  y[31] = -std::numeric_limits<float>::infinity();
  auto m = QuantizeMxfp4(y.data(), 1, 32, "t");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(std::string(m.status().message()).find("element 31 (row 0, col 31) is -Inf"),
            std::string::npos);
}

TEST(Mxfp4, RejectsColsNotMultipleOf32) {
  std::vector<float> x(48, 1.0f);
  auto m = QuantizeMxfp4(x.data(), 1, 48, "odd");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(m.status().message()).find("odd"), std::string::npos);
}

TEST(Mxfp4, RoundTripIsStableAndBounded) {
  const int64_t rows = 5, cols = 320;
  const auto x = RandomMatrix(rows * cols, 17);
  auto m = QuantizeMxfp4(x.data(), rows, cols, "w");
  ASSERT_TRUE(m.ok());
  std::vector<float> y(x.size());
  DequantizeMxfp4(*m, y.data());
  for (size_t i = 0; i < x.size(); ++i) {
    // The largest gap between E2M1 magnitudes is 2 (4 -> 6); elements beyond 6 * X clip,
    // at most to amax - 6X < 2X. So |error| <= 2X in every case.
    const float X = Ue8m0ToFloat(m->scales[i / 32]);
    ASSERT_LE(std::abs(y[i] - x[i]), 2.0f * X) << i;
  }
  // Dequantized values are representable: quantizing them again reproduces them.
  auto m2 = QuantizeMxfp4(y.data(), rows, cols, "w");
  ASSERT_TRUE(m2.ok());
  std::vector<float> z(x.size());
  DequantizeMxfp4(*m2, z.data());
  EXPECT_EQ(y, z);
}

}  // namespace
}  // namespace qprof::fp4
