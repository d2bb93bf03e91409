// Warp emulation of the MoE `slot_gemv` path (SIMT, the MXFP4 path of the user story): the
// kernels' own bodies (moe_slot_gemv.cuh: SlotGemvW13Body, SlotGemvW2Body; moe_group.cuh:
// CombineBody) run for every thread of every block of the launch plans the launcher uses
// (SlotGemvW13Plan, SlotGemvW2Plan, MoeCombineGrid), four blocks resident at a time
// (interleaved at their barriers). Checked: x and h staged in shared memory and read only
// after the barrier, the 16-byte weight loads and scale loads in bounds and aligned, the
// butterfly warp sums, SwiGLU, the unweighted slot_out contract, zeros for skipped slots,
// no race between blocks, and the path's output against MoeReferenceCpu within the GPU
// test's bound (1e-4: FP4 decodes exactly, FP32 sums; no BF16 anywhere).
//
// Shapes: dim 1056 = 33 chunks of 32 elements, so lane 0 takes a second pass over chunk 32
// (the tail of the K loop); inter 160: W13's 24 features per block leave a partial last
// block (16 features: warps 0-4 full, warp 5 one feature, warps 6-7 none), W2's K is 5
// chunks (lanes 5-31 idle); 5 tokens make token 4's last slot skipped (id -1).
#include <cmath>
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/moe/cuda/moe_group.cuh"
#include "kernels/moe/cuda/moe_slot_gemv.cuh"
#include "kernels/moe/moe_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using kernels::Fp4Format;
using namespace kernels::cuda;  // the kernels under test

constexpr int kDim = 1056, kInter = 160, kExperts = 6, kTopk = 3;

class SlotGemvEmuTest : public ::testing::TestWithParam<std::tuple<Fp4Format, int>> {};

TEST_P(SlotGemvEmuTest, MatchesReference) {
  const auto [format, tokens] = GetParam();
  const bool nv = format == Fp4Format::kNvfp4;
  MoeProblem prob;
  MakeMoeProblem(format, tokens, kDim, kInter, kExperts, kTopk, 41 + tokens, &prob);
  ASSERT_TRUE(kernels::MoeReferenceCpu(prob.params).ok());
  const kernels::MoeParams& p = prob.params;
  const int slots = tokens * kTopk;

  WarpEmu emu;
  emu.set_resident_blocks(4);
  AddMoeGlobals(prob, &emu);
  std::vector<float> hidden(static_cast<size_t>(slots) * kInter, NAN);  // poison: all written
  std::vector<float> slot_out(static_cast<size_t>(slots) * kDim, NAN);
  std::vector<float> out(static_cast<size_t>(tokens) * kDim, 0.f);
  emu.AddGlobal(hidden, "hidden");
  emu.AddGlobal(slot_out, "slot_out");
  emu.AddGlobal(out, "out");
  const SlotGemvW13Launch l1 = SlotGemvW13Plan(p, hidden.data());
  EXPECT_EQ(l1.grid.x, 7u);  // ceil(160 / 24): the last block partial
  emu.Launch("slot_gemv_w13", l1.grid, kSlotGemvThreads, l1.smem,
             [&] { nv ? SlotGemvW13Body<true>(l1.args) : SlotGemvW13Body<false>(l1.args); });
  const SlotGemvW2Launch l2 = SlotGemvW2Plan(p, hidden.data(), slot_out.data());
  emu.Launch("slot_gemv_w2", l2.grid, kSlotGemvThreads, l2.smem,
             [&] { nv ? SlotGemvW2Body<true>(l2.args) : SlotGemvW2Body<false>(l2.args); });
  EmulateMoeCombine(p, slot_out.data(), &emu, out.data());
  EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();

  // Skipped slots have defined (zero) outputs; every other value was written.
  int skipped = 0;
  for (int s = 0; s < slots; ++s) {
    if (prob.ids[s] >= 0) continue;
    ++skipped;
    for (int j = 0; j < kInter; ++j) ASSERT_EQ(hidden[static_cast<size_t>(s) * kInter + j], 0.f) << "slot " << s;
    for (int n = 0; n < kDim; ++n) ASSERT_EQ(slot_out[static_cast<size_t>(s) * kDim + n], 0.f) << "slot " << s;
  }
  EXPECT_EQ(skipped, tokens / 5);
  const double err = RelError(out, prob.out);
  const WarpEmu::Counters c = emu.counters();
  std::printf("[ emu      ] slot_gemv %s tokens %d: rel error %.3g (%lld blocks, %lld warp collectives, %lld barriers,"
              " %lld shared reads)\n", kernels::FormatName(format), tokens, err, static_cast<long long>(c.blocks),
              static_cast<long long>(c.warp_collectives), static_cast<long long>(c.barriers),
              static_cast<long long>(c.shared_reads));
  EXPECT_LT(err, 1e-4) << kernels::FormatName(format) << " tokens " << tokens;
}

INSTANTIATE_TEST_SUITE_P(Tokens, SlotGemvEmuTest,
                         ::testing::Combine(::testing::Values(Fp4Format::kMxfp4, Fp4Format::kNvfp4),
                                            ::testing::Values(1, 5)));

}  // namespace
}  // namespace qprof::warp
