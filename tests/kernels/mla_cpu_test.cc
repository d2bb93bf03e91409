#include "kernels/mla/mla_cpu.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "tests/kernels/test_util.h"

namespace qprof::kernels {
namespace {

using testing::RandomBf16;
using testing::RandomFloats;
using testing::RelError;

TEST(SparseMlaTest, FastMatchesReferenceWithPaddingAndEmptySelection) {
  const int B = 3, H = 5, dv = 64, dqk = 80, stride = 40, topk = 12;
  auto q = RandomFloats(size_t(B) * H * dqk, 1);
  auto kv = RandomBf16(size_t(B) * stride * dqk, 2);
  std::vector<int32_t> lens = {40, 7, 0};
  std::vector<int32_t> idx(B * topk, -1);
  for (int i = 0; i < topk; ++i) idx[i] = 3 * i;                  // 0..33
  for (int i = 0; i < 7; ++i) idx[topk + i] = i;                  // all 7, then padding
  SparseMlaParams p;
  p.batch = B;
  p.heads = H;
  p.d_v = dv;
  p.d_qk = dqk;
  p.topk = topk;
  p.kv_seq_stride = stride;
  p.softmax_scale = 1.0f / std::sqrt(float(dqk));
  p.q = q.data();
  p.kv = kv.data();
  p.seq_lens = lens.data();
  p.indices = idx.data();
  std::vector<float> ref(size_t(B) * H * dv, NAN), fast(ref.size(), NAN);
  std::vector<float> lse_ref(B * H), lse_fast(B * H);
  p.out = ref.data();
  p.lse = lse_ref.data();
  ASSERT_TRUE(SparseMlaDecodeReferenceCpu(p).ok());
  ThreadPool pool(2);
  p.pool = &pool;
  p.out = fast.data();
  p.lse = lse_fast.data();
  ASSERT_TRUE(SparseMlaDecodeCpu(p).ok());
  EXPECT_LT(RelError(fast, ref), 1e-5);
  for (int i = 0; i < 2 * H; ++i) EXPECT_NEAR(lse_fast[i], lse_ref[i], 1e-4);
  for (int h = 0; h < H; ++h) {
    EXPECT_TRUE(std::isinf(lse_fast[2 * H + h]));
    EXPECT_EQ(fast[(size_t(2) * H + h) * dv], 0.0f);
  }
  // A single selected token: the output is that token's latent row.
  std::vector<int32_t> one(B * topk, -1);
  one[0] = 5;
  one[topk] = 6;
  p.indices = one.data();
  ASSERT_TRUE(SparseMlaDecodeCpu(p).ok());
  EXPECT_NEAR(fast[3], Bf16ToFloat(kv[size_t(5) * dqk + 3]), 1e-6);
  idx[0] = 40;  // out of range
  p.indices = idx.data();
  EXPECT_FALSE(SparseMlaDecodeCpu(p).ok());
}

TEST(IndexerTest, FastMatchesReferenceAndKeepsTheWindow) {
  const int B = 2, Hi = 3, Di = 24, stride = 50;
  auto q = RandomFloats(size_t(B) * Hi * Di, 3);
  auto w = RandomFloats(size_t(B) * Hi, 4);
  for (float& v : w) v = std::abs(v);
  auto keys = RandomBf16(size_t(B) * stride * Di, 5);
  std::vector<int32_t> lens = {50, 9};
  IndexerParams p;
  p.batch = B;
  p.index_heads = Hi;
  p.index_dim = Di;
  p.index_topk = 10;
  p.window = 4;
  p.kv_seq_stride = stride;
  p.out_topk = 14;
  p.q = q.data();
  p.head_weights = w.data();
  p.keys = keys.data();
  p.seq_lens = lens.data();
  std::vector<float> s_ref(B * stride), s_fast(B * stride);
  std::vector<int32_t> i_ref(B * 14), i_fast(B * 14), c_ref(B), c_fast(B);
  p.scores = s_ref.data();
  p.indices = i_ref.data();
  p.counts = c_ref.data();
  ASSERT_TRUE(IndexerTopkReferenceCpu(p).ok());
  ThreadPool pool(2);
  p.pool = &pool;
  p.scores = s_fast.data();
  p.indices = i_fast.data();
  p.counts = c_fast.data();
  ASSERT_TRUE(IndexerTopkCpu(p).ok());
  EXPECT_EQ(c_ref[1], 9);  // short sequence: everything
  EXPECT_GE(c_ref[0], 10);
  EXPECT_LE(c_ref[0], 14);
  for (int t = 46; t < 50; ++t) {
    EXPECT_NE(std::find(i_ref.begin(), i_ref.begin() + 14, t), i_ref.begin() + 14) << t;
  }
  EXPECT_TRUE(std::is_sorted(i_ref.begin(), i_ref.begin() + c_ref[0]));
  // Scores agree to summation order; selections agree unless scores nearly tie.
  for (int t = 0; t < 50; ++t) EXPECT_NEAR(s_fast[t], s_ref[t], 1e-4 * (1 + std::abs(s_ref[t])));
  EXPECT_EQ(i_fast, i_ref);
  // Every kept non-window token scores at least as high as every dropped one.
  float min_kept = INFINITY, max_dropped = -INFINITY;
  std::vector<char> kept(50, 0);
  for (int i = 0; i < c_ref[0]; ++i) kept[i_ref[i]] = 1;
  for (int t = 0; t < 46; ++t) {
    if (kept[t]) min_kept = std::min(min_kept, s_ref[t]);
    else max_dropped = std::max(max_dropped, s_ref[t]);
  }
  EXPECT_GE(min_kept, max_dropped);
  p.out_topk = 5;
  EXPECT_FALSE(IndexerTopkCpu(p).ok());
}

// NaN (kernels/mla/indexer_rule.h): a NaN dot product counts as 0 under the ReLU (fmax), and
// a NaN score ranks as -inf (after every number; equal keys by index), in both CPU kernels.
// Sequence 0: keys 3 and 7 hold a NaN element (their scores stay finite); keys 10..19 hold
// +inf where heads 0 and 1 (weights of opposite sign) see it: score inf - inf = NaN.
// Sequence 1: NaN head weights, every score NaN: the lowest indices win, then the window.
TEST(IndexerTest, NanDotsCountAsZeroAndNanScoresRankLast) {
  const int B = 2, Hi = 2, Di = 4, stride = 30;
  std::vector<float> q(size_t(B) * Hi * Di, 0.5f), w = {1.5f, -0.5f, NAN, NAN};
  std::vector<float> kf(size_t(B) * stride * Di);
  for (size_t i = 0; i < kf.size(); ++i) kf[i] = 0.01f * static_cast<float>(i % 97);
  kf[3 * Di + 1] = NAN;
  kf[7 * Di + 2] = NAN;
  for (int t = 10; t < 20; ++t) kf[t * Di] = INFINITY;
  for (int i = 28 * Di; i < 30 * Di; ++i) kf[i] = 0.f;  // the window scores 0: never in the top 12
  std::vector<uint16_t> keys(kf.size());
  FloatToBf16N(kf.data(), static_cast<int64_t>(kf.size()), keys.data());
  std::vector<int32_t> lens = {30, 25};
  IndexerParams p;
  p.batch = B;
  p.index_heads = Hi;
  p.index_dim = Di;
  p.index_topk = 12;
  p.window = 2;
  p.kv_seq_stride = stride;
  p.out_topk = 14;
  p.q = q.data();
  p.head_weights = w.data();
  p.keys = keys.data();
  p.seq_lens = lens.data();
  for (const bool fast : {false, true}) {
    std::vector<float> scores(B * stride, -7.f);
    std::vector<int32_t> idx(B * 14, -7), counts(B, -7);
    p.scores = scores.data();
    p.indices = idx.data();
    p.counts = counts.data();
    ASSERT_TRUE((fast ? IndexerTopkCpu(p) : IndexerTopkReferenceCpu(p)).ok());
    EXPECT_TRUE(std::isfinite(scores[3]) && std::isfinite(scores[7])) << "fast " << fast;
    for (int t = 10; t < 20; ++t) EXPECT_TRUE(std::isnan(scores[t])) << t;
    // Sequence 0: 16 positive finite scores (3 and 7 score 0), so the 12 chosen by score are
    // all finite and below 28; then the window 28, 29.
    EXPECT_EQ(counts[0], 14);
    for (int i = 0; i < 14; ++i) {
      const int t = idx[i];
      EXPECT_TRUE(t < 10 || t >= 20) << "a NaN score was chosen: token " << t << " fast " << fast;
    }
    EXPECT_EQ(idx[12], 28);
    EXPECT_EQ(idx[13], 29);
    // Sequence 1: all NaN: tokens 0..11 by index, then the window 23, 24.
    const std::vector<int32_t> all_nan = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 23, 24};
    EXPECT_EQ(std::vector<int32_t>(idx.begin() + 14, idx.end()), all_nan) << "fast " << fast;
  }
}

}  // namespace
}  // namespace qprof::kernels
