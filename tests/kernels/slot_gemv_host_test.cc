// The MoE `slot_gemv` kernels' block-scale step on the CPU (slot_gemv_math.h, the function
// the kernel bodies call). The kernels themselves (staging, chunk decode, warp sums, SwiGLU,
// the unweighted slot_out contract and the combine) run in the warp emulation against
// MoeReferenceCpu: tests/kernels/warp_emu/slot_gemv_emu_test.cc.
#include <cmath>
#include <cstdint>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "kernels/moe/cuda/slot_gemv_math.h"

namespace qprof {
namespace {

using namespace kernels::cuda;

// Bug 5: 2^(e-127) * 2^14 overflows FP32 for UE8M0 codes e >= 241, although the chunk's
// contribution (a small partial sum times 2^(e-127+14)) is finite. The kernel now applies
// 2^14 to the partial sum.
TEST(SlotGemvHostTest, LargeMxfp4ScaleCodesDoNotOverflow) {
  const float s0 = 0.75f * 1.52587890625e-05f, s1 = -0.25f * 1.52587890625e-05f;  // FP16-decoded sums
  for (int e = 200; e <= 254; ++e) {
    const float got = SlotGemvAddChunk<false>(0.f, s0, s1, static_cast<uint32_t>(e));
    const double want = std::ldexp(1.0, e - 130);  // (s0 + s1) * 2^14 * 2^(e-127) = 2^-17 * 2^(e-113)
    EXPECT_TRUE(std::isfinite(got)) << "code " << e;
    EXPECT_EQ(static_cast<double>(got), want) << "code " << e;
  }
  // The old formula, for the record: the scale factor itself is inf from code 241 on.
  EXPECT_TRUE(std::isinf(fp4::Ue8m0ToFloat(241) * 16384.f));
}

}  // namespace
}  // namespace qprof
