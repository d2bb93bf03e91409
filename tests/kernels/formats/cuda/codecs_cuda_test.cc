// The device build of the codecs gives the same bits as the host build.
#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "tests/kernels/formats/cuda/codecs_cuda.h"

namespace qprof::fp4::testing {
namespace {

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(CodecsCuda, DeviceMatchesHost) {
  if (DeviceCount() == 0) GTEST_SKIP() << "no CUDA device: the device codecs were compiled only";
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> expo(-20.0f, 12.0f);
  std::vector<float> in;
  for (int i = 0; i < 100000; ++i) in.push_back(std::exp2(expo(rng)) * ((i & 1) ? -1.f : 1.f));
  for (float t : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 464.0f, 0x1p-10f, 0.0f, -0.0f,
                  INFINITY, -INFINITY, 0x1p-140f}) {
    in.push_back(t);
    in.push_back(-t);
  }
  std::vector<uint8_t> e2m1, e4m3;
  std::vector<float> decoded;
  ASSERT_EQ(RunCodecsOnDevice(in, &e2m1, &e4m3, &decoded), "");
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_EQ(e2m1[i], FloatToE2M1(in[i])) << in[i];
    ASSERT_EQ(e4m3[i], FloatToE4M3(in[i])) << in[i];
  }
  for (int c = 0; c < 256; ++c) {
    const float h = E4M3ToFloat(static_cast<uint8_t>(c));
    if (!std::isnan(h)) {
      EXPECT_EQ(Bits(decoded[c]), Bits(h)) << c;
    }
    const float u = Ue8m0ToFloat(static_cast<uint8_t>(c));
    // 2^-127 is an fp32 subnormal: the device must not flush it (no -ftz for this code).
    if (!std::isnan(u)) {
      EXPECT_EQ(Bits(decoded[256 + c]), Bits(u)) << c;
    }
  }
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(Bits(decoded[512 + c]), Bits(E2M1ToFloat(static_cast<uint8_t>(c)))) << c;
  }
}

}  // namespace
}  // namespace qprof::fp4::testing
