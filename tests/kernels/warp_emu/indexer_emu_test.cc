// Warp emulation of the indexer kernels (qprof_attn_indexer_score, qprof_attn_indexer_topk):
// the kernels' own bodies (IndexerScoreBody, IndexerTopkBody, indexer.cuh) run for every
// thread of every block of the launcher's plan (IndexerPlan), blocks interleaved at their
// barriers, against IndexerTopkReferenceCpu:
//  - scores: within 1e-4 relative per token (the kernel sums each head's dot with FMA in
//    16 groups and a butterfly, the reference in index order), NaN exactly where the
//    reference has NaN, and no score written past a sequence's length;
//  - selection: the top-k body runs on the reference's own scores, so its output (chosen
//    tokens ascending, -1 padded, and the counts) must equal the reference exactly.
// Every shape holds: a sequence whose keys repeat five rows (many exact ties, so the
// index_topk boundary cuts through a tie: the lower index must win), a sequence with NaN
// scores on some tokens (NaN ranks as -inf: kernels/mla/indexer_rule.h), a sequence whose
// head weights are NaN (every score NaN: all tied at -inf), an empty sequence (length 0:
// nothing chosen, all -1) and partial score tiles (lengths not multiples of 16).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/mla/cuda/indexer.cuh"
#include "kernels/mla/mla_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the kernels under test

struct Shape {
  int heads, dim, stride, index_topk, window, out_topk;
};

// Sequences: 0 random (full stride), 1 repeated keys (ties), 2 NaN scores on some tokens,
// 3 NaN head weights (all NaN), 4 empty.
constexpr int kBatch = 5;

struct Problem {
  kernels::IndexerParams p;
  std::vector<float> q, w, scores;
  std::vector<uint16_t> keys;
  std::vector<int32_t> lens, indices, counts;
};

void MakeProblem(const Shape& sh, uint32_t seed, Problem* pr) {
  std::mt19937 rng(seed);
  pr->q = RandomFloats(static_cast<size_t>(kBatch) * sh.heads * sh.dim, rng);
  pr->w = RandomFloats(static_cast<size_t>(kBatch) * sh.heads, rng);
  std::vector<float> kf = RandomFloats(static_cast<size_t>(kBatch) * sh.stride * sh.dim, rng);
  pr->lens = {sh.stride, sh.stride - 7, sh.stride - 19, sh.stride / 2 + 3, 0};
  auto key = [&](int b, int t) { return &kf[(static_cast<size_t>(b) * sh.stride + t) * sh.dim]; };
  for (int t = 5; t < sh.stride; ++t) std::copy(key(1, t % 5), key(1, t % 5) + sh.dim, key(1, t));  // ties
  // Sequence 2: heads 0 and 1 see +inf (q > 0 at column 3) with weights of opposite signs,
  // so tokens with an infinite key element score inf - inf = NaN, on the CPU and the GPU.
  float* q2 = &pr->q[static_cast<size_t>(2) * sh.heads * sh.dim];
  q2[3] = 1.f;
  q2[sh.dim + 3] = 1.f;
  pr->w[2 * sh.heads] = 1.5f;
  pr->w[2 * sh.heads + 1] = -0.5f;
  for (int t = 2; t < pr->lens[2]; t += 9) key(2, t)[3] = INFINITY;
  for (int h = 0; h < sh.heads; ++h) pr->w[3 * sh.heads + h] = NAN;
  pr->keys.resize(kf.size());
  kernels::FloatToBf16N(kf.data(), static_cast<int64_t>(kf.size()), pr->keys.data());
  pr->scores.assign(static_cast<size_t>(kBatch) * sh.stride, -7.f);
  pr->indices.assign(static_cast<size_t>(kBatch) * sh.out_topk, -7);
  pr->counts.assign(kBatch, -7);
  kernels::IndexerParams& p = pr->p;
  p.batch = kBatch;
  p.index_heads = sh.heads;
  p.index_dim = sh.dim;
  p.index_topk = sh.index_topk;
  p.window = sh.window;
  p.kv_seq_stride = sh.stride;
  p.out_topk = sh.out_topk;
  p.q = pr->q.data();
  p.head_weights = pr->w.data();
  p.keys = pr->keys.data();
  p.seq_lens = pr->lens.data();
  p.scores = pr->scores.data();
  p.indices = pr->indices.data();
  p.counts = pr->counts.data();
}

class IndexerEmuTest : public ::testing::TestWithParam<Shape> {};

TEST_P(IndexerEmuTest, MatchesReference) {
  const Shape sh = GetParam();
  Problem ref;
  MakeProblem(sh, 13 + sh.stride, &ref);
  ASSERT_TRUE(kernels::IndexerTopkReferenceCpu(ref.p).ok());
  int nan_scores = 0;
  for (float s : ref.scores) nan_scores += std::isnan(s);
  ASSERT_GT(nan_scores, ref.lens[3]) << "the shape must produce NaN scores in sequences 2 and 3";

  Problem emu_pr;
  MakeProblem(sh, 13 + sh.stride, &emu_pr);
  const kernels::IndexerParams& p = emu_pr.p;
  const IndexerLaunch l = IndexerPlan(p);
  WarpEmu emu;
  emu.set_resident_blocks(4);
  emu.AddGlobal(emu_pr.q, "q");
  emu.AddGlobal(emu_pr.w, "head_weights");
  emu.AddGlobal(emu_pr.keys, "keys");
  emu.AddGlobal(emu_pr.lens, "seq_lens");
  emu.AddGlobal(emu_pr.scores, "scores");
  emu.AddGlobal(emu_pr.indices, "indices");
  emu.AddGlobal(emu_pr.counts, "counts");
  emu.AddGlobal(ref.scores, "reference scores");
  emu.Launch("indexer_score", l.score_grid, kIdxScoreThreads, 0, [&] {
    IndexerScoreBody(p.q, p.head_weights, p.keys, p.seq_lens, p.index_heads, p.index_dim, p.kv_seq_stride,
                     p.scores);
  });
  // The selection on the reference's scores: the same input as the CPU's selection.
  emu.Launch("indexer_topk", l.topk_grid, kIdxTopkThreads, l.topk_smem, [&] {
    IndexerTopkBody(ref.scores.data(), p.seq_lens, p.kv_seq_stride, p.index_topk, p.window, p.out_topk,
                    p.indices, p.counts);
  });
  EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();

  double worst = 0;
  for (int b = 0; b < kBatch; ++b) {
    for (int t = 0; t < sh.stride; ++t) {
      const size_t i = static_cast<size_t>(b) * sh.stride + t;
      const float got = emu_pr.scores[i], want = ref.scores[i];
      if (t >= ref.lens[b]) {
        ASSERT_EQ(got, -7.f) << "score past the length written: b " << b << " t " << t;
      } else if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << "b " << b << " t " << t << ": " << got;
      } else {
        ASSERT_TRUE(std::isfinite(got)) << "b " << b << " t " << t;
        worst = std::fmax(worst, std::fabs(got - want) / (1.0 + std::fabs(want)));
      }
    }
  }
  EXPECT_LT(worst, 1e-4);
  EXPECT_EQ(emu_pr.indices, ref.indices);
  EXPECT_EQ(emu_pr.counts, ref.counts);
  EXPECT_EQ(ref.counts[4], 0);  // the empty sequence
  std::printf("[ emu      ] indexer heads %d dim %d stride %d topk %d: score error %.3g, %d NaN scores,"
              " counts %d %d %d %d %d (%lld warp collectives, %lld barriers)\n", sh.heads, sh.dim, sh.stride,
              sh.index_topk, worst, nan_scores, ref.counts[0], ref.counts[1], ref.counts[2], ref.counts[3],
              ref.counts[4], static_cast<long long>(emu.counters().warp_collectives),
              static_cast<long long>(emu.counters().barriers));
}

// heads 20 (groups 0-3 hold two heads, 4-15 one), 36 (three groups of three) and 64 (the
// kernel's maximum); strides 150 and 203 leave partial tiles of 6 and 11 tokens.
INSTANTIATE_TEST_SUITE_P(Shapes, IndexerEmuTest,
                         ::testing::Values(Shape{20, 64, 150, 40, 8, 48}, Shape{36, 32, 203, 64, 16, 96}));

}  // namespace
}  // namespace qprof::warp
