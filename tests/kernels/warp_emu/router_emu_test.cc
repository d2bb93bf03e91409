// Warp emulation of the MoE router top-k kernel (qprof_moe_router_topk): the kernel's own
// body (RouterTopkBody, router_topk.cuh) runs for every thread of every block of the
// launcher's plan (RouterTopkPlan), against RouterTopkCpu. Checked: the per-warp `taken`
// map in shared memory (zeroed, then lane 0's marks ordered by __syncwarp before the next
// round reads them), the butterfly arg-max over int and float shuffles, the tie rule
// (lower index first), NaN logits and keys (-inf, chosen last, weight 0), in-range
// distinct ids. Ids and weights must equal the CPU's exactly: the kernel calls the same
// functions (router_math.h) and sums the chosen scores in the same order; on a GPU,
// expf's last bits differ from the host's, which the GPU test allows for (1e-5).
//
// Every shape has a partial last block (tokens % 4 != 0), a partial lane pass (experts %
// 32 != 0) and these tokens: 0 some NaN logits and a NaN bias, 1 all NaN, 2 fewer finite
// experts than topk, 3 all logits equal (ties), 4 the best expert on lanes 16-31, 5 the
// last expert best, then random ones.
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/router_topk.cuh"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the kernel under test

struct Shape {
  int tokens, experts, topk;
};

class RouterEmuTest : public ::testing::TestWithParam<Shape> {};

TEST_P(RouterEmuTest, MatchesCpu) {
  const auto [tokens, experts, topk] = GetParam();
  std::mt19937 rng(9 + experts);
  std::vector<float> logits = RandomFloats(static_cast<size_t>(tokens) * experts, rng);
  std::vector<float> bias = RandomFloats(experts, rng, 0.1f);
  auto row = [&](int t) { return &logits[static_cast<size_t>(t) * experts]; };
  for (int e = 0; e < experts; e += 5) row(0)[e] = NAN;
  bias[7] = NAN;  // a NaN key for expert 7 in every token
  for (int e = 0; e < experts; ++e) row(1)[e] = NAN;
  for (int e = 0; e < experts; ++e) row(2)[e] = e < experts - topk + 2 ? NAN : 0.f;
  for (int e = 0; e < experts; ++e) row(3)[e] = 0.25f;
  row(4)[20] = 8.f;
  row(5)[experts - 1] = 8.f;

  auto run = [&](const std::vector<float>& b, std::vector<int32_t>* ids, std::vector<float>* w, WarpEmu* emu) {
    kernels::RouterTopkParams p{tokens, experts, topk, 2.5f, logits.data(), b.data(), ids->data(), w->data()};
    const RouterTopkLaunch l = RouterTopkPlan(p);
    emu->AddGlobal(logits, "logits");
    emu->AddGlobal(b, "bias");
    emu->AddGlobal(*ids, "ids");
    emu->AddGlobal(*w, "weights");
    emu->Launch("router_topk", l.grid, kRouterThreads, l.smem, [&] {
      RouterTopkBody(p.logits, p.bias, p.tokens, p.experts, p.topk, p.route_scale, p.topk_ids, p.topk_weights);
    });
  };
  // With the bias, then without: token 3's keys tie only without it, and tokens 4 and 5's
  // planted logits are the best keys only without it.
  const std::vector<float> zero_bias(experts, 0.f);
  const std::vector<float>* const biases[] = {&bias, &zero_bias};
  for (const std::vector<float>* b : biases) {
    std::vector<int32_t> want_ids(static_cast<size_t>(tokens) * topk, -7), got_ids(want_ids);
    std::vector<float> want_w(want_ids.size(), -7.f), got_w(want_w);
    kernels::RouterTopkParams cpu{tokens, experts, topk, 2.5f, logits.data(), b->data(), want_ids.data(),
                                  want_w.data()};
    ASSERT_TRUE(kernels::RouterTopkCpu(cpu).ok());
    WarpEmu emu;
    emu.set_resident_blocks(2);
    run(*b, &got_ids, &got_w, &emu);
    EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();
    EXPECT_EQ(got_ids, want_ids) << (b == &bias ? "with bias" : "zero bias");
    EXPECT_EQ(got_w, want_w) << (b == &bias ? "with bias" : "zero bias");
    for (int t = 0; t < tokens; ++t) {
      const std::set<int> distinct(got_ids.begin() + t * topk, got_ids.begin() + (t + 1) * topk);
      EXPECT_EQ(distinct.size(), static_cast<size_t>(topk)) << "token " << t;
      EXPECT_GE(*distinct.begin(), 0);
      EXPECT_LT(*distinct.rbegin(), experts);
    }
    for (int j = 0; j < topk; ++j) EXPECT_EQ(want_ids[1 * topk + j], j) << "all NaN: lowest ids";
    if (b == &zero_bias) {
      for (int j = 0; j < topk; ++j) EXPECT_EQ(want_ids[3 * topk + j], j) << "ties: lower index first";
      EXPECT_EQ(want_ids[4 * topk], 20);
      EXPECT_EQ(want_ids[5 * topk], experts - 1);
    }
    int id_mismatches = 0, weight_mismatches = 0;
    for (size_t i = 0; i < want_ids.size(); ++i) {
      id_mismatches += got_ids[i] != want_ids[i];
      weight_mismatches += got_w[i] != want_w[i];
    }
    std::printf("[ emu      ] router_topk tokens %d experts %d topk %d %s: %d of %zu ids and %d weights differ"
                " from the CPU (%lld warp collectives)\n", tokens, experts, topk, b == &bias ? "with bias" : "zero bias",
                id_mismatches, want_ids.size(), weight_mismatches,
                static_cast<long long>(emu.counters().warp_collectives));
  }
}

// 9 tokens (3 blocks, the last with one warp working), 37 experts (lanes 0-4 take a
// second expert); 14 tokens, 70 experts (lanes 0-5 take a third); 7 tokens, 256 experts
// top-8 (the v4-flash router's width, 8 experts per lane).
INSTANTIATE_TEST_SUITE_P(Shapes, RouterEmuTest,
                         ::testing::Values(Shape{9, 37, 6}, Shape{14, 70, 4}, Shape{7, 256, 8}));

}  // namespace
}  // namespace qprof::warp
