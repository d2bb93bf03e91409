// Warp emulation of the MoE `w4a16_mma` path: the kernels' own bodies (moe_group.cuh:
// AlignBody, PermuteBody, CombineBody; moe_w4a16_mma.cuh: W4a16Body for GEMM1 and GEMM2) run
// for every thread of every block of the launch plans the launcher uses (W4a16Gemm1Launch,
// W4a16Gemm2Launch), through the PTX model (mma.m16n8k16, cp.async groups, the shared-memory
// checks of the double buffer). The align kernel's grouping is compared with MoeAlignCpu and
// the path's output with MoeReferenceCpu within the GPU test's bound (1e-2: BF16
// activations and hidden state); the launches must record no emulation error.
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/moe/cuda/moe_group.cuh"
#include "kernels/moe/cuda/moe_w4a16_mma.cuh"
#include "kernels/moe/moe_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using kernels::Fp4Format;
using namespace kernels::cuda;  // the kernels under test

// The path as LaunchMoeCuda runs it for w4a16_mma: align, permute, GEMM1, GEMM2, combine.
template <bool kNv>
void RunW4a16(const MoeProblem& prob, WarpEmu* emu, MoeGroupBuffers* g, std::vector<float>* out) {
  const kernels::MoeParams& p = prob.params;
  const int slots = p.tokens * p.topk;
  AddMoeGlobals(prob, emu);
  ASSERT_TRUE(EmulateMoeAlign(p, emu, g)) << emu->ErrorReport();
  const MoeGrouping gr = g->grouping();
  std::vector<uint16_t> act(static_cast<size_t>(slots) * p.dim, 0xFFFF);         // BF16 NaN poison
  std::vector<uint16_t> hidden(static_cast<size_t>(slots) * p.inter, 0xFFFF);
  std::vector<float> slot_out(static_cast<size_t>(slots) * p.dim, NAN);
  out->assign(static_cast<size_t>(p.tokens) * p.dim, 0.f);
  emu->AddGlobal(act, "act");
  emu->AddGlobal(hidden, "hidden");
  emu->AddGlobal(slot_out, "slot_out");
  emu->AddGlobal(*out, "out");
  emu->Launch("permute_bf16", MoePermuteGrid(p), kPermuteThreads, 0, [&] {
    PermuteBody(p.x, gr.sorted_slots, gr.expert_offsets, p.experts, p.topk, p.dim, act.data());
  });
  const W4a16Launch l1 = W4a16Gemm1Launch(p, gr, act.data(), hidden.data());
  emu->Launch("w4a16_w13", l1.grid, kW4Threads, 0, [&] { W4a16Body<kNv, true>(l1.args); });
  const W4a16Launch l2 = W4a16Gemm2Launch(p, gr, hidden.data(), slot_out.data());
  emu->Launch("w4a16_w2", l2.grid, kW4Threads, 0, [&] { W4a16Body<kNv, false>(l2.args); });
  EmulateMoeCombine(p, slot_out.data(), emu, out->data());
}

struct Shape {
  int tokens, dim, inter;
};

class W4a16EmuTest : public ::testing::TestWithParam<std::tuple<Fp4Format, Shape>> {};

TEST_P(W4a16EmuTest, MatchesReference) {
  const auto [format, shape] = GetParam();
  MoeProblem prob;
  MakeMoeProblem(format, shape.tokens, shape.dim, shape.inter, 8, 3, 23 + shape.tokens, &prob);
  ASSERT_TRUE(kernels::MoeReferenceCpu(prob.params).ok());
  const kernels::MoeParams& p = prob.params;

  WarpEmu emu;
  MoeGroupBuffers g;
  std::vector<float> got;
  if (format == Fp4Format::kNvfp4) {
    RunW4a16<true>(prob, &emu, &g, &got);
  } else {
    RunW4a16<false>(prob, &emu, &g, &got);
  }
  EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();

  std::vector<int32_t> sorted(p.tokens * p.topk), offsets(p.experts + 1);
  kernels::MoeAlignCpu(p.topk_ids, p.tokens, p.topk, p.experts, sorted.data(), offsets.data());
  EXPECT_EQ(g.offsets, offsets) << "align kernel vs MoeAlignCpu";
  sorted.resize(offsets[p.experts]);
  EXPECT_EQ(std::vector<int32_t>(g.sorted.begin(), g.sorted.begin() + offsets[p.experts]), sorted);

  const double err = RelError(got, prob.out);
  const WarpEmu::Counters c = emu.counters();
  std::printf("[ emu      ] w4a16 %s tokens %d dim %d inter %d: rel error %.3g (%lld blocks, %lld warp "
              "collectives, %lld barriers, %lld cp.async bytes)\n",
              kernels::FormatName(format), shape.tokens, shape.dim, shape.inter, err,
              static_cast<long long>(c.blocks), static_cast<long long>(c.warp_collectives),
              static_cast<long long>(c.barriers), static_cast<long long>(c.cp_async_bytes));
  EXPECT_LT(err, 1e-2) << kernels::FormatName(format) << " tokens " << shape.tokens;
  EXPECT_GT(err, 0.0);  // BF16 activations cannot be exact
}

// Tokens 1, 3, 17 (17: a second 16-token pass with one real column); K = 768 is three
// 256-wide stages (an odd count: both buffers and the tail), inter 256 one stage, 512 two.
INSTANTIATE_TEST_SUITE_P(
    Shapes, W4a16EmuTest,
    ::testing::Combine(::testing::Values(Fp4Format::kMxfp4, Fp4Format::kNvfp4),
                       ::testing::Values(Shape{1, 768, 256}, Shape{3, 256, 512}, Shape{17, 768, 256})));

}  // namespace
}  // namespace qprof::warp
