#include "kernels/moe/moe_cpu.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "tests/kernels/test_util.h"

namespace qprof::kernels {
namespace {

using testing::RandomFloats;
using testing::RelError;

// Stacked expert weights in one format, plus the FP32 originals.
struct Experts {
  std::vector<uint8_t> w13p, w13s, w2p, w2s;
  std::vector<float> w13s2, w2s2;
  std::vector<float> w13f, w2f;  // unquantized [E, 2I, D], [E, D, I]
};

void Append(Fp4Format f, const float* w, int rows, int cols, std::vector<uint8_t>& p,
            std::vector<uint8_t>& s, std::vector<float>& s2) {
  if (f == Fp4Format::kMxfp4) {
    auto m = fp4::QuantizeMxfp4(w, rows, cols, "w");
    ASSERT_TRUE(m.ok());
    p.insert(p.end(), m->packed.begin(), m->packed.end());
    s.insert(s.end(), m->scales.begin(), m->scales.end());
  } else {
    auto m = fp4::QuantizeNvfp4(w, rows, cols, "w");
    ASSERT_TRUE(m.ok());
    p.insert(p.end(), m->packed.begin(), m->packed.end());
    s.insert(s.end(), m->scales.begin(), m->scales.end());
    s2.push_back(m->scale2);
  }
}

Experts MakeExperts(Fp4Format f, int E, int D, int I, uint32_t seed) {
  Experts x;
  x.w13f = RandomFloats(size_t(E) * 2 * I * D, seed, 0.05f);
  x.w2f = RandomFloats(size_t(E) * D * I, seed + 1, 0.05f);
  for (int e = 0; e < E; ++e) {
    Append(f, &x.w13f[size_t(e) * 2 * I * D], 2 * I, D, x.w13p, x.w13s, x.w13s2);
    Append(f, &x.w2f[size_t(e) * D * I], D, I, x.w2p, x.w2s, x.w2s2);
  }
  return x;
}

struct Case {
  int tokens, dim, inter, experts, topk;
};

class MoePathsTest : public ::testing::TestWithParam<std::tuple<Fp4Format, Case>> {};

TEST_P(MoePathsTest, SlotGroupedAndReferenceAgree) {
  auto [fmt, c] = GetParam();
  Experts w = MakeExperts(fmt, c.experts, c.dim, c.inter, 11);
  auto x = RandomFloats(size_t(c.tokens) * c.dim, 12);
  std::mt19937 rng(13);
  std::vector<int32_t> ids(size_t(c.tokens) * c.topk);
  std::vector<float> wts(ids.size());
  for (int t = 0; t < c.tokens; ++t) {
    std::vector<int> perm(c.experts);
    for (int e = 0; e < c.experts; ++e) perm[e] = e;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int j = 0; j < c.topk; ++j) {
      ids[t * c.topk + j] = perm[j];
      wts[t * c.topk + j] = 0.25f + 0.5f * j;
    }
  }
  if (ids.size() > 2) ids[1] = -1;  // a skipped slot
  MoeParams p;
  p.format = fmt;
  p.tokens = c.tokens;
  p.dim = c.dim;
  p.inter = c.inter;
  p.experts = c.experts;
  p.topk = c.topk;
  p.swiglu_limit = 0.5f;  // low enough that the clamp is exercised
  p.x = x.data();
  p.topk_ids = ids.data();
  p.topk_weights = wts.data();
  p.w13 = {w.w13p.data(), w.w13s.data(), w.w13s2.empty() ? nullptr : w.w13s2.data()};
  p.w2 = {w.w2p.data(), w.w2s.data(), w.w2s2.empty() ? nullptr : w.w2s2.data()};
  const size_t n = size_t(c.tokens) * c.dim;
  std::vector<float> ref(n, 1.0f), slot(n, 1.0f), grouped(n, 1.0f);  // out is accumulated
  p.out = ref.data();
  ASSERT_TRUE(MoeReferenceCpu(p).ok());
  ThreadPool pool(2);
  p.pool = &pool;
  p.out = slot.data();
  ASSERT_TRUE(MoeSlotGemvCpu(p).ok());
  p.out = grouped.data();
  ASSERT_TRUE(MoeGroupedCpu(p).ok());
  EXPECT_LT(RelError(slot, ref), 1e-5);
  EXPECT_LT(RelError(grouped, ref), 1e-5);
  EXPECT_LT(RelError(grouped, slot), 1e-5);
  double moved = 0;
  for (size_t i = 0; i < n; ++i) moved += std::abs(ref[i] - 1.0f);
  EXPECT_GT(moved, 0.0);

  // The quantized result is close to the unquantized expert maths (FP4 error only).
  std::vector<float> exact(n, 1.0f);
  for (int t = 0; t < c.tokens; ++t) {
    for (int j = 0; j < c.topk; ++j) {
      int e = ids[t * c.topk + j];
      if (e < 0) continue;
      std::vector<double> h(c.inter);
      for (int i = 0; i < c.inter; ++i) {
        double g = 0, u = 0;
        for (int k = 0; k < c.dim; ++k) {
          g += double(w.w13f[(size_t(e) * 2 * c.inter + i) * c.dim + k]) * x[t * c.dim + k];
          u += double(w.w13f[(size_t(e) * 2 * c.inter + c.inter + i) * c.dim + k]) *
               x[t * c.dim + k];
        }
        g = std::min(g, 0.5);
        u = std::clamp(u, -0.5, 0.5);
        h[i] = g / (1 + std::exp(-g)) * u;
      }
      for (int d = 0; d < c.dim; ++d) {
        double acc = 0;
        for (int i = 0; i < c.inter; ++i) {
          acc += double(w.w2f[(size_t(e) * c.dim + d) * c.inter + i]) * h[i];
        }
        exact[t * c.dim + d] += wts[t * c.topk + j] * acc;
      }
    }
  }
  std::vector<float> ref_delta(n), exact_delta(n);
  for (size_t i = 0; i < n; ++i) {
    ref_delta[i] = ref[i] - 1.0f;
    exact_delta[i] = exact[i] - 1.0f;
  }
  EXPECT_LT(RelError(ref_delta, exact_delta), 0.25);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, MoePathsTest,
    ::testing::Combine(::testing::Values(Fp4Format::kMxfp4, Fp4Format::kNvfp4),
                       ::testing::Values(Case{1, 64, 32, 4, 1}, Case{3, 96, 64, 5, 2},
                                         Case{17, 128, 96, 8, 3})));

TEST(MoeAlignTest, GroupsSlotsByExpertStably) {
  std::vector<int32_t> ids = {2, 0, -1, 2, 1, 0};
  std::vector<int32_t> sorted(6), offsets(4);
  MoeAlignCpu(ids.data(), 3, 2, 3, sorted.data(), offsets.data());
  EXPECT_EQ(offsets, (std::vector<int32_t>{0, 2, 3, 5}));
  EXPECT_EQ(sorted, (std::vector<int32_t>{1, 5, 4, 0, 3, -1}));
  EXPECT_EQ(CountUniqueExperts(ids.data(), 3, 2, 3), 3);
}

TEST(MoeValidateTest, RejectsBadParams) {
  MoeParams p;
  EXPECT_FALSE(ValidateMoeParams(p).ok());
  p.tokens = 1;
  p.dim = 48;  // not a multiple of 32
  p.inter = 32;
  p.experts = 1;
  p.topk = 1;
  absl::Status s = ValidateMoeParams(p);
  EXPECT_NE(std::string(s.message()).find("multiples of the block 32"), std::string::npos);
}

}  // namespace
}  // namespace qprof::kernels
