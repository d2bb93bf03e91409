// Bit-exact tests of the scalar codecs against values written out from the formats'
// definitions (docs/formats.md): every code decodes to its table value, every RNE tie
// rounds to the even code, saturation, subnormals and signs.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"

namespace qprof::fp4 {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Plain-definition decoders used as the oracle (no bit tricks).
double RefE4M3(int code) {
  const int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return std::nan("");
  const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return s ? -mag : mag;
}

TEST(E2M1, AllSixteenCodesDecode) {
  const float expect[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                            -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(Bits(E2M1ToFloat(static_cast<uint8_t>(c))), Bits(expect[c])) << "code " << c;
    // Every representable value encodes back to its own code (-0 included).
    EXPECT_EQ(FloatToE2M1(expect[c]), c) << "value " << expect[c];
  }
}

TEST(E2M1, EveryTieRoundsToEvenMantissa) {
  struct Case { float in; uint8_t code; };
  const Case cases[] = {
      {0.25f, 0x0}, {0.75f, 0x2}, {1.25f, 0x2}, {1.75f, 0x4}, {2.5f, 0x4},
      {3.5f, 0x6},  {5.0f, 0x6},  {-0.25f, 0x8}, {-0.75f, 0xA}, {-1.25f, 0xA},
      {-1.75f, 0xC}, {-2.5f, 0xC}, {-3.5f, 0xE}, {-5.0f, 0xE}};
  for (const Case& c : cases) EXPECT_EQ(FloatToE2M1(c.in), c.code) << c.in;
}

TEST(E2M1, OneUlpAroundTiesRoundToNearest) {
  struct Case { float tie, below, above; };
  const Case cases[] = {{0.25f, 0.0f, 0.5f}, {0.75f, 0.5f, 1.0f}, {1.25f, 1.0f, 1.5f},
                        {1.75f, 1.5f, 2.0f}, {2.5f, 2.0f, 3.0f},  {3.5f, 3.0f, 4.0f},
                        {5.0f, 4.0f, 6.0f}};
  for (const Case& c : cases) {
    EXPECT_EQ(E2M1ToFloat(FloatToE2M1(std::nextafter(c.tie, 0.0f))), c.below) << c.tie;
    EXPECT_EQ(E2M1ToFloat(FloatToE2M1(std::nextafter(c.tie, 10.0f))), c.above) << c.tie;
    EXPECT_EQ(E2M1ToFloat(FloatToE2M1(-std::nextafter(c.tie, 10.0f))), -c.above) << c.tie;
  }
}

TEST(E2M1, SaturatesAndSignsFromSignBit) {
  EXPECT_EQ(FloatToE2M1(6.0f), 0x7);
  EXPECT_EQ(FloatToE2M1(std::nextafter(6.0f, 7.0f)), 0x7);
  EXPECT_EQ(FloatToE2M1(1e30f), 0x7);
  EXPECT_EQ(FloatToE2M1(std::numeric_limits<float>::infinity()), 0x7);
  EXPECT_EQ(FloatToE2M1(-std::numeric_limits<float>::infinity()), 0xF);
  EXPECT_EQ(FloatToE2M1(-7.0f), 0xF);
  EXPECT_EQ(FloatToE2M1(-0.1f), 0x8);  // small negatives round to -0
  EXPECT_EQ(FloatToE2M1(-1e-45f), 0x8);
  EXPECT_EQ(FloatToE2M1(1e-45f), 0x0);
  EXPECT_EQ(FloatToE2M1(0.2499999f), 0x0);
  EXPECT_EQ(FloatToE2M1(0.2500001f), 0x1);
  EXPECT_EQ(FloatToE2M1(std::nextafter(1.0f, 0.0f)), 0x2);
}

// Exhaustive-ish: for a dense sweep of inputs the chosen code is a nearest representable
// value, and among two equally near ones the even code (mantissa bit 0).
TEST(E2M1, SweepPicksNearestEven) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  for (int i = 0; i < 200000; ++i) {
    const float v = i < 1600 ? (i - 800) / 100.0f : dist(rng);
    const uint8_t c = FloatToE2M1(v);
    const double err = std::abs(double(E2M1ToFloat(c)) - std::min(std::abs(double(v)), 6.0) *
                                                              (std::signbit(v) ? -1 : 1));
    for (int o = 0; o < 16; ++o) {
      if ((o >> 3) != (std::signbit(v) ? 1 : 0)) continue;
      const double e2 = std::abs(double(E2M1ToFloat(o)) - std::clamp(double(v), -6.0, 6.0));
      ASSERT_LE(err, e2) << v;
      if (err == e2 && o != c) {
        ASSERT_EQ(c & 1, 0) << "tie not to even at " << v;
      }
    }
  }
}

TEST(E4M3, All256CodesDecode) {
  for (int c = 0; c < 256; ++c) {
    const double ref = RefE4M3(c);
    const float got = E4M3ToFloat(static_cast<uint8_t>(c));
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(got)) << c;
      continue;
    }
    EXPECT_EQ(Bits(got), Bits(static_cast<float>(ref))) << "code " << c;
    EXPECT_EQ(FloatToE4M3(got), c) << "code " << c;  // round trip, -0 included
  }
  EXPECT_EQ(E4M3ToFloat(0x7E), 448.0f);
  EXPECT_EQ(E4M3ToFloat(0x01), 0.001953125f);  // 2^-9
  EXPECT_EQ(E4M3ToFloat(0x08), 0.015625f);     // 2^-6
}

TEST(E4M3, TiesSaturationSubnormals) {
  EXPECT_EQ(FloatToE4M3(464.0f), 0x7E);   // tie between 448 (even) and 480 (not a value)
  EXPECT_EQ(FloatToE4M3(449.0f), 0x7E);
  EXPECT_EQ(FloatToE4M3(1e9f), 0x7E);
  EXPECT_EQ(FloatToE4M3(-1e9f), 0xFE);
  EXPECT_EQ(FloatToE4M3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(FloatToE4M3(std::nanf("")), 0x7F);
  EXPECT_EQ(FloatToE4M3(std::ldexp(1.0f, -10)), 0x00);          // tie 0 / 2^-9 -> 0
  EXPECT_EQ(FloatToE4M3(std::ldexp(3.0f, -10)), 0x02);          // tie 1 / 2 -> 2
  EXPECT_EQ(FloatToE4M3(std::ldexp(5.0f, -10)), 0x02);          // tie 2 / 3 -> 2
  EXPECT_EQ(FloatToE4M3(std::ldexp(15.0f, -10)), 0x08);         // tie 7 / 8 -> 8 = 2^-6
  EXPECT_EQ(FloatToE4M3(1.0625f), 0x38);                        // tie 1 / 1.125 -> 1
  EXPECT_EQ(FloatToE4M3(1.1875f), 0x3A);                        // tie 1.125 / 1.25 -> 1.25
  EXPECT_EQ(FloatToE4M3(1.9375f), 0x40);                        // carry into exponent -> 2
  EXPECT_EQ(FloatToE4M3(std::ldexp(1.0f, -11)), 0x00);
  EXPECT_EQ(FloatToE4M3(-std::ldexp(1.0f, -11)), 0x80);         // -0
  EXPECT_EQ(FloatToE4M3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
}

TEST(E4M3, SweepNearest) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> expo(-12.0f, 9.5f);
  for (int i = 0; i < 100000; ++i) {
    const float v = std::exp2(expo(rng)) * ((i & 1) ? -1.0f : 1.0f);
    const uint8_t c = FloatToE4M3(v);
    const double target = std::clamp(double(v), -448.0, 448.0);
    const double err = std::abs(double(E4M3ToFloat(c)) - target);
    for (int o = 0; o < 256; ++o) {
      const float ov = E4M3ToFloat(static_cast<uint8_t>(o));
      if (std::isnan(ov) || ((o >> 7) != (c >> 7))) continue;
      const double e2 = std::abs(double(ov) - target);
      ASSERT_LE(err, e2) << v;
      if (err == e2 && o != c) {
        ASSERT_EQ(c & 1, 0) << "tie not to even at " << v;
      }
    }
  }
}

TEST(Ue8m0, All256CodesDecode) {
  for (int c = 0; c < 255; ++c) {
    EXPECT_EQ(Ue8m0ToFloat(static_cast<uint8_t>(c)), std::ldexp(1.0f, c - 127)) << c;
  }
  EXPECT_TRUE(std::isnan(Ue8m0ToFloat(0xFF)));
  EXPECT_GT(Ue8m0ToFloat(0), 0.0f);  // 2^-127, not zero
  EXPECT_EQ(Ue8m0ToFloat(127), 1.0f);
}

}  // namespace
}  // namespace qprof::fp4
