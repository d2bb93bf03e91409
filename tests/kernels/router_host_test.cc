// The router top-k kernel (qprof_moe_router_topk) on the CPU: one warp per token, k rounds of
// "each lane proposes its best untaken expert, butterfly arg-max over the warp", with the
// kernel's own rule (router_math.h), compared with RouterTopkCpu. Includes the NaN cases of
// bug 4: a NaN logit counts as -inf (score 0), every id stays in range and distinct.
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/router_math.h"

namespace qprof {
namespace {

using kernels::RouterBetter;

// The kernel's warp, token by token.
void EmulateRouterWarp(const kernels::RouterTopkParams& p) {
  for (int t = 0; t < p.tokens; ++t) {
    const float* lg = p.logits + static_cast<int64_t>(t) * p.experts;
    std::vector<char> taken(p.experts, 0);
    float sum = 0.f;
    for (int j = 0; j < p.topk; ++j) {
      float best[32];
      int bi[32];
      for (int lane = 0; lane < 32; ++lane) {
        best[lane] = -INFINITY;
        bi[lane] = 0x7fffffff;
        for (int e = lane; e < p.experts; e += 32) {
          if (taken[e]) continue;
          const float key = kernels::RouterKey(lg[e], p.bias ? p.bias[e] : 0.f);
          if (RouterBetter(key, e, best[lane], bi[lane])) best[lane] = key, bi[lane] = e;
        }
      }
      for (int o = 16; o > 0; o >>= 1) {  // __shfl_xor_sync butterfly
        float nb[32];
        int ni[32];
        for (int lane = 0; lane < 32; ++lane) {
          nb[lane] = best[lane], ni[lane] = bi[lane];
          if (RouterBetter(best[lane ^ o], bi[lane ^ o], best[lane], bi[lane]))
            nb[lane] = best[lane ^ o], ni[lane] = bi[lane ^ o];
        }
        for (int lane = 0; lane < 32; ++lane) best[lane] = nb[lane], bi[lane] = ni[lane];
      }
      ASSERT_GE(bi[0], 0);
      ASSERT_LT(bi[0], p.experts) << "token " << t << " round " << j;  // bug 4: was 0x7fffffff
      taken[bi[0]] = 1;
      p.topk_ids[t * p.topk + j] = bi[0];
      p.topk_weights[t * p.topk + j] = kernels::RouterScore(lg[bi[0]]);
      sum += p.topk_weights[t * p.topk + j];
    }
    for (int j = 0; j < p.topk; ++j)
      p.topk_weights[t * p.topk + j] = kernels::RouterWeight(p.topk_weights[t * p.topk + j], sum, p.route_scale);
  }
}

struct Result {
  std::vector<int32_t> ids;
  std::vector<float> weights;
};
Result RunRouter(bool kernel, int tokens, int experts, int topk, const std::vector<float>& logits,
           const std::vector<float>& bias) {
  Result r{std::vector<int32_t>(tokens * topk, -7), std::vector<float>(tokens * topk, -7.f)};
  kernels::RouterTopkParams p{tokens, experts, topk, 2.5f, logits.data(), bias.data(), r.ids.data(), r.weights.data()};
  if (kernel) {
    EmulateRouterWarp(p);
  } else {
    EXPECT_TRUE(kernels::RouterTopkCpu(p).ok());
  }
  return r;
}

TEST(RouterHostTest, KernelWarpMatchesCpuWithNaNAndTies) {
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.f, 1.f);
  const int tokens = 9, experts = 37, topk = 6;
  std::vector<float> logits(tokens * experts), bias(experts);
  for (float& v : logits) v = d(rng);
  for (float& v : bias) v = 0.1f * d(rng);
  for (int e = 0; e < experts; e += 5) logits[1 * experts + e] = NAN;        // some NaN
  for (int e = 0; e < experts; ++e) logits[2 * experts + e] = NAN;           // all NaN
  for (int e = 0; e < experts; ++e) logits[3 * experts + e] = e < 33 ? NAN : 0.f;  // 4 finite < topk
  for (int e = 0; e < experts; ++e) logits[4 * experts + e] = 0.25f;         // all ties
  logits[5 * experts + 3] = INFINITY;
  logits[5 * experts + 4] = -INFINITY;
  bias[7] = NAN;                                                              // NaN key
  const Result cpu = RunRouter(false, tokens, experts, topk, logits, bias);
  const Result gpu = RunRouter(true, tokens, experts, topk, logits, bias);
  EXPECT_EQ(gpu.ids, cpu.ids);
  for (size_t i = 0; i < cpu.weights.size(); ++i) {
    EXPECT_TRUE(std::isfinite(gpu.weights[i])) << i;
    EXPECT_NEAR(gpu.weights[i], cpu.weights[i], 1e-6f) << i;
  }
  for (int t = 0; t < tokens; ++t) {
    std::set<int> distinct(cpu.ids.begin() + t * topk, cpu.ids.begin() + (t + 1) * topk);
    EXPECT_EQ(distinct.size(), static_cast<size_t>(topk)) << "token " << t;
    for (int id : distinct) {
      EXPECT_GE(id, 0);
      EXPECT_LT(id, experts);
    }
  }
  // All-NaN token: the lowest ids in order, weights 0 (no finite score to renormalise).
  for (int j = 0; j < topk; ++j) {
    EXPECT_EQ(cpu.ids[2 * topk + j], j);
    EXPECT_EQ(cpu.weights[2 * topk + j], 0.f);
  }
  // Four finite experts (33..36) come first, then NaN ones by index with weight 0.
  for (int j = 0; j < 4; ++j) EXPECT_GE(cpu.ids[3 * topk + j], 33);
  EXPECT_EQ(cpu.ids[3 * topk + 4], 0);
  EXPECT_EQ(cpu.weights[3 * topk + 4], 0.f);
  // Equal keys (no bias): the lower index first, on both sides.
  const std::vector<float> flat(2 * experts, 0.25f), zero(experts, 0.f);
  const Result tie_cpu = RunRouter(false, 2, experts, topk, flat, zero);
  EXPECT_EQ(RunRouter(true, 2, experts, topk, flat, zero).ids, tie_cpu.ids);
  for (int j = 0; j < topk; ++j) EXPECT_EQ(tie_cpu.ids[j], j);
}

}  // namespace
}  // namespace qprof
