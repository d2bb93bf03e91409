// The SIMT sparse-MLA decode kernel and the indexer kernels on the CPU, per lane / per
// thread, with the kernels' own math (mla_mma_lanes.h: MlaOnlineRescale, MlaProb, MlaInvSum,
// MlaLse; indexer_math.h: IndexerHeadShare, IndexerChosen), compared with
// SparseMlaDecodeReferenceCpu (1e-4, the GPU test's bound) and IndexerTopkReferenceCpu.
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/mla/cuda/indexer_math.h"
#include "kernels/mla/cuda/mla_mma_lanes.h"
#include "kernels/mla/mla_cpu.h"
#include "kernels/moe/cuda/slot_gemv_math.h"  // WarpSumButterfly

namespace qprof {
namespace {

using namespace kernels::cuda;

constexpr int kTile = 16;  // kSimtTile: tokens per staged tile

// SparseMlaSimtBody for one (sequence b, head h): lane holds dims lane + 32 i.
void EmulateSimtHead(const kernels::SparseMlaParams& p, int b, int h) {
  const float* q = p.q + (static_cast<int64_t>(b) * p.heads + h) * kMlaDqk;
  float acc[32][kMlaDv / 32] = {};
  float m = -INFINITY, l = 0.f;
  const int32_t* idx = p.indices + static_cast<int64_t>(b) * p.topk;
  for (int t0 = 0; t0 < p.topk; t0 += kTile) {
    float kvs[kTile][kMlaDqk] = {};
    bool valid[kTile];
    for (int r = 0; r < kTile; ++r) {
      const int t = t0 + r < p.topk ? idx[t0 + r] : -1;
      valid[r] = t >= 0;
      if (t >= 0)
        kernels::Bf16ToFloatN(p.kv + (static_cast<int64_t>(b) * p.kv_seq_stride + t) * kMlaDqk, kMlaDqk, kvs[r]);
    }
    float ssc[kTile], tmax = -INFINITY;
    for (int r = 0; r < kTile; ++r) {
      float part[32];
      for (int lane = 0; lane < 32; ++lane) {
        float d = 0.f;
        for (int i = 0; i < kMlaDqk / 32; ++i) d = fmaf(q[lane + 32 * i], kvs[r][lane + 32 * i], d);
        part[lane] = d;
      }
      const float d = WarpSumButterfly(part, 0) * p.softmax_scale;
      ssc[r] = valid[r] ? d : -INFINITY;
      tmax = fmaxf(tmax, ssc[r]);
    }
    const MlaRescale rs = MlaOnlineRescale(m, tmax);
    if (rs.none) continue;
    l *= rs.alpha;
    for (int lane = 0; lane < 32; ++lane)
      for (int i = 0; i < kMlaDv / 32; ++i) acc[lane][i] *= rs.alpha;
    for (int r = 0; r < kTile; ++r) {
      const float pr = MlaProb(ssc[r], rs);
      l += pr;
      for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < kMlaDv / 32; ++i) acc[lane][i] = fmaf(pr, kvs[r][lane + 32 * i], acc[lane][i]);
    }
    m = rs.m_new;
  }
  float* o = p.out + (static_cast<int64_t>(b) * p.heads + h) * kMlaDv;
  const float inv = MlaInvSum(l);
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < kMlaDv / 32; ++i) o[lane + 32 * i] = acc[lane][i] * inv;
  if (p.lse) p.lse[static_cast<int64_t>(b) * p.heads + h] = MlaLse(m, l);
}

double RelError(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isinf(want[i]) && got[i] == want[i]) continue;  // -inf lse of an empty selection
    if (!std::isfinite(got[i])) return INFINITY;
    num += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    den += static_cast<double>(want[i]) * want[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

TEST(MlaSimtHostTest, KernelMathMatchesReference) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int batch = 3, heads = 5, topk = 37, stride = 60;
  kernels::SparseMlaParams p;
  p.batch = batch;
  p.heads = heads;
  p.topk = topk;
  p.kv_seq_stride = stride;
  p.softmax_scale = 1.f / 24.f;
  std::vector<float> q(static_cast<size_t>(batch) * heads * kMlaDqk), kvf(static_cast<size_t>(batch) * stride * kMlaDqk);
  for (float& v : q) v = nd(rng);
  for (float& v : kvf) v = nd(rng);
  std::vector<uint16_t> kv(kvf.size());
  kernels::FloatToBf16N(kvf.data(), static_cast<int64_t>(kvf.size()), kv.data());
  std::vector<int32_t> lens(batch, stride), idx(static_cast<size_t>(batch) * topk);
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < topk; ++i) idx[b * topk + i] = (b == 2) ? -1 : (i * 7 + b) % stride;  // b 2: empty
  idx[topk - 1] = -1;
  std::vector<float> want(static_cast<size_t>(batch) * heads * kMlaDv), want_lse(batch * heads);
  p.q = q.data();
  p.kv = kv.data();
  p.seq_lens = lens.data();
  p.indices = idx.data();
  p.out = want.data();
  p.lse = want_lse.data();
  ASSERT_TRUE(kernels::SparseMlaDecodeReferenceCpu(p).ok());
  std::vector<float> got(want.size(), NAN), got_lse(want_lse.size(), NAN);
  p.out = got.data();
  p.lse = got_lse.data();
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) EmulateSimtHead(p, b, h);
  EXPECT_LT(RelError(got, want), 1e-4);
  EXPECT_LT(RelError(got_lse, want_lse), 1e-4);
  EXPECT_EQ(got_lse[2 * heads], -INFINITY);  // empty selection
}

TEST(IndexerHostTest, KernelScoresAndSelectionMatchReference) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  kernels::IndexerParams p;
  p.batch = 3;
  p.index_heads = 20;  // two head groups per lane for groups 0..3
  p.index_dim = 64;
  p.index_topk = 40;
  p.window = 8;
  p.kv_seq_stride = 301;
  p.out_topk = 48;
  std::vector<float> q(p.batch * p.index_heads * p.index_dim), w(p.batch * p.index_heads),
      kf(p.batch * p.kv_seq_stride * p.index_dim);
  for (float& v : q) v = nd(rng);
  for (float& v : w) v = nd(rng);
  for (float& v : kf) v = nd(rng);
  std::vector<uint16_t> keys(kf.size());
  kernels::FloatToBf16N(kf.data(), static_cast<int64_t>(kf.size()), keys.data());
  std::vector<int32_t> lens = {301, 37, 120};
  std::vector<float> scores(p.batch * p.kv_seq_stride, 0.f);
  std::vector<int32_t> want(p.batch * p.out_topk), counts(p.batch);
  p.q = q.data();
  p.head_weights = w.data();
  p.keys = keys.data();
  p.seq_lens = lens.data();
  p.scores = scores.data();
  p.indices = want.data();
  p.counts = counts.data();
  ASSERT_TRUE(kernels::IndexerTopkReferenceCpu(p).ok());
  for (int b = 0; b < p.batch; ++b) {
    // qprof_attn_indexer_score: 16 lanes per token, butterfly over xor 1, 2, 4, 8.
    std::vector<float> sc(lens[b]);
    for (int t = 0; t < lens[b]; ++t) {
      std::vector<float> key(p.index_dim);
      kernels::Bf16ToFloatN(&keys[(static_cast<size_t>(b) * p.kv_seq_stride + t) * p.index_dim], p.index_dim, key.data());
      float share[kIdxGroups];
      for (int grp = 0; grp < kIdxGroups; ++grp)
        share[grp] = IndexerHeadShare(&q[static_cast<size_t>(b) * p.index_heads * p.index_dim], p.index_dim,
                                      &w[static_cast<size_t>(b) * p.index_heads], key.data(), p.index_heads,
                                      p.index_dim, grp);
      for (int o = 1; o < kIdxGroups; o <<= 1) {
        float next[kIdxGroups];
        for (int g = 0; g < kIdxGroups; ++g) next[g] = share[g] + share[g ^ o];
        for (int g = 0; g < kIdxGroups; ++g) share[g] = next[g];
      }
      sc[t] = share[0];
      EXPECT_NEAR(sc[t], scores[static_cast<size_t>(b) * p.kv_seq_stride + t],
                  1e-4f * (1.f + std::fabs(sc[t])));
    }
    // qprof_attn_indexer_topk on the reference's scores: chosen tokens in increasing order.
    const float* ref_sc = &scores[static_cast<size_t>(b) * p.kv_seq_stride];
    std::vector<int32_t> got;
    for (int t = 0; t < lens[b]; ++t)
      if (IndexerChosen(ref_sc, lens[b], t, p.index_topk, p.window) && static_cast<int>(got.size()) < p.out_topk)
        got.push_back(t);
    const int n = static_cast<int>(got.size());
    EXPECT_EQ(n, counts[b]);
    got.resize(p.out_topk, -1);
    EXPECT_EQ(got, std::vector<int32_t>(want.begin() + b * p.out_topk, want.begin() + (b + 1) * p.out_topk));
  }
}

}  // namespace
}  // namespace qprof
