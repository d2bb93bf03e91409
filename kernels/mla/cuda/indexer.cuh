// Indexer (DeepSeek-V3.2 lightning indexer) on CUDA: scoring then top-k selection.
//  qprof_attn_indexer_score: block = 16 cached tokens x all index heads of one sequence;
//    the tile's keys (BF16 -> FP32) and the sequence's queries sit in shared memory; thread
//    (token, group of 16 heads) accumulates sum_h w_h * relu(q_h . k_t), reduced over the 16
//    lanes of a token. index_dim <= 128, index_heads <= 64 (checked by the launcher).
//  qprof_attn_indexer_topk: block per sequence; rank of token t = #{u: s_u > s_t or (s_u ==
//    s_t and u < t)} (the CPU's tie rule; NaN scores rank as -inf: kernels/mla/indexer_rule.h),
//    chosen if rank < index_topk or t is in the window; a block-wide prefix count writes the
//    chosen tokens in increasing order, -1 padded. O(len^2) comparisons from shared memory:
//    fine for decode contexts (len <= 12288).
//
// The bodies are written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles them into the kernels of indexer.cu, and the CPU warp emulation
// (tests/kernels/warp_emu/indexer_emu_test.cc) runs these same functions for every thread of
// every block of the launch plans below.
#ifndef QPROF_KERNELS_MLA_CUDA_INDEXER_CUH_
#define QPROF_KERNELS_MLA_CUDA_INDEXER_CUH_

#include <stddef.h>
#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/mla/cuda/indexer_math.h"  // constants and the per-thread math
#include "kernels/mla/params.h"

namespace qprof::kernels::cuda {

inline constexpr int kIdxScoreThreads = kIdxTile * kIdxGroups;  // 256
inline constexpr int kIdxTopkThreads = 1024;

QPROF_WARP_FN void IndexerScoreBody(const float* __restrict__ q, const float* __restrict__ w,
                                    const uint16_t* __restrict__ keys, const int32_t* __restrict__ lens,
                                    int heads, int dim, int stride, float* __restrict__ scores) {
  float (&qs)[kIdxMaxHeads][kIdxMaxDim + 1] = SharedStatic<float[kIdxMaxHeads][kIdxMaxDim + 1]>();
  float (&ks)[kIdxTile][kIdxMaxDim + 1] = SharedStatic<float[kIdxTile][kIdxMaxDim + 1]>();
  const int b = BlockIdxY(), t0 = BlockIdxX() * kIdxTile;
  const int len = LdGlobal<int32_t>(lens + b);
  if (t0 >= len) return;
  for (int p = ThreadIdxX(); p < heads * dim; p += BlockDimX())
    StShared<float>(&qs[p / dim][p % dim], LdGlobal<float>(q + ((static_cast<int64_t>(b) * heads) * dim + p)));
  for (int p = ThreadIdxX(); p < kIdxTile * dim; p += BlockDimX()) {
    const int r = p / dim, c = p % dim;
    StShared<float>(&ks[r][c], t0 + r < len ? Bf16BitsToFloat(LdGlobal<uint16_t>(
                                                  keys + ((static_cast<int64_t>(b) * stride + t0 + r) * dim + c)))
                                            : 0.f);
  }
  SyncThreads();
  const int tok = ThreadIdxX() >> 4, grp = ThreadIdxX() & 15;
  const float* qb = &qs[0][0];
  const float* wb = w + static_cast<int64_t>(b) * heads;
  const float* key = ks[tok];
  float acc = IndexerHeadShare([&](int h, int c) { return LdShared<float>(qb + (h * (kIdxMaxDim + 1) + c)); },
                               [&](int h) { return LdGlobal<float>(wb + h); },
                               [&](int c) { return LdShared<float>(key + c); }, heads, dim, grp);
  acc += ShflXor(acc, 1);
  acc += ShflXor(acc, 2);
  acc += ShflXor(acc, 4);
#if QPROF_MUTANT(WARP_SUM_LANE)  // body mutation: the last step adds the other token's lanes (xor 16)
  acc += ShflXor(acc, 16);
#else
  acc += ShflXor(acc, 8);
#endif
  if (grp == 0 && t0 + tok < len) StGlobal<float>(scores + (static_cast<int64_t>(b) * stride + t0 + tok), acc);
}

QPROF_WARP_FN void IndexerTopkBody(const float* __restrict__ scores, const int32_t* __restrict__ lens,
                                   int stride, int index_topk, int window, int out_topk,
                                   int32_t* __restrict__ indices, int32_t* __restrict__ counts) {
  float* sc = reinterpret_cast<float*>(DynamicShared());  // [len] rank keys
  int (&warp_counts)[32] = SharedStatic<int[32]>();
  int& base = SharedStatic<int>();
  const int b = BlockIdxX(), len = LdGlobal<int32_t>(lens + b);
  for (int t = ThreadIdxX(); t < len; t += BlockDimX())
    StShared<float>(sc + t, IndexerRankKey(LdGlobal<float>(scores + (static_cast<int64_t>(b) * stride + t))));
  if (ThreadIdxX() == 0) StShared<int>(&base, 0);
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: scores ranked before every thread staged its part
  SyncThreads();
#endif
  int32_t* out = indices + static_cast<int64_t>(b) * out_topk;
  const int lane = ThreadIdxX() & 31, warp = ThreadIdxX() >> 5;
  for (int t0 = 0; t0 < len; t0 += BlockDimX()) {
    const int t = t0 + ThreadIdxX();
    bool chosen = false;
#if QPROF_MUTANT(TAIL_ELEMENT)  // body mutation: the sequence's last token is never considered
    if (t + 1 < len) {
#else
    if (t < len) {
#endif
      chosen = IndexerChosen([&](int u) { return LdShared<float>(sc + u); }, len, t, index_topk, window);
    }
    const unsigned mask = Ballot(chosen);
    if (lane == 0) StShared<int>(&warp_counts[warp], Popc(mask));
    SyncThreads();
    int before = LdShared<int>(&base);
    for (int w = 0; w < warp; ++w) before += LdShared<int>(&warp_counts[w]);
    const int pos = before + Popc(mask & ((1u << lane) - 1u));
    if (chosen && pos < out_topk) StGlobal<int32_t>(out + pos, t);
    SyncThreads();
    if (ThreadIdxX() == 0) {
      int total = 0;
      for (int w = 0; w < static_cast<int>(BlockDimX() / 32); ++w) total += LdShared<int>(&warp_counts[w]);
      StShared<int>(&base, LdShared<int>(&base) + total);
    }
    SyncThreads();
  }
  const int chosen_total = LdShared<int>(&base);
  const int n = chosen_total < out_topk ? chosen_total : out_topk;
  for (int i = n + ThreadIdxX(); i < out_topk; i += BlockDimX()) StGlobal<int32_t>(out + i, -1);
  if (counts && ThreadIdxX() == 0) StGlobal<int32_t>(counts + b, n);
}

// Launch plans, shared by the launcher (indexer.cu) and the emulation. Score: blocks of
// kIdxScoreThreads over (token tiles of the stride, batch). Top-k: one block of
// kIdxTopkThreads per sequence, the stride's scores in dynamic shared memory.
struct IndexerLaunch {
  LaunchDims score_grid, topk_grid;
  size_t topk_smem;
};
inline IndexerLaunch IndexerPlan(const IndexerParams& p) {
  return {{static_cast<unsigned>((p.kv_seq_stride + kIdxTile - 1) / kIdxTile), static_cast<unsigned>(p.batch), 1},
          {static_cast<unsigned>(p.batch), 1, 1},
          static_cast<size_t>(p.kv_seq_stride) * sizeof(float)};
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_INDEXER_CUH_
