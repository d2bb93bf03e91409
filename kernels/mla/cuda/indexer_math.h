// Per-thread math of the indexer kernels (indexer.cuh), host-callable: the score share of one
// thread and the selection rule of one token. The warp emulation runs the kernel bodies that
// call them (tests/kernels/warp_emu/indexer_emu_test.cc) against IndexerTopkReferenceCpu.
#ifndef QPROF_KERNELS_MLA_CUDA_INDEXER_MATH_H_
#define QPROF_KERNELS_MLA_CUDA_INDEXER_MATH_H_

#include <math.h>

#include "kernels/common/reg_ops.h"
#include "kernels/mla/indexer_rule.h"

namespace qprof::kernels::cuda {

inline constexpr int kIdxTile = 16;      // tokens per score block
inline constexpr int kIdxGroups = 16;    // lanes per token: head groups h = grp, grp+16, ...
inline constexpr int kIdxMaxDim = 128;
inline constexpr int kIdxMaxHeads = 64;
inline constexpr int kIdxMaxLen = 12288;

// Score thread (token tok, group grp)'s share: sum over its heads h = grp, grp+16, ... of
// w_h * relu(q_h . k) with the dot in index order (FMA); the 16 shares of a token are then
// summed by a butterfly over lanes xor 1, 2, 4, 8. ldq(h, c), ldw(h), ldk(c) load q_h[c],
// w_h and k[c]. The FMA is written out (nvcc contracts `acc += w * r` into the same FFMA),
// so the host emulation rounds as the GPU does.
template <typename LdQ, typename LdW, typename LdK>
QPROF_HDI float IndexerHeadShare(LdQ ldq, LdW ldw, LdK ldk, int heads, int dim, int grp) {
  float acc = 0.f;
  for (int h = grp; h < heads; h += kIdxGroups) {
    float d = 0.f;
    for (int c = 0; c < dim; ++c) d = fmaf(ldq(h, c), ldk(c), d);
    acc = fmaf(ldw(h), IndexerRelu(d), acc);
  }
  return acc;
}

// Whether token t (< len) is selected: in the window (t >= len - window), or ranked below
// index_topk, where rank = #{u : s_u > s_t or (s_u == s_t and u < t)} (the CPU's tie rule:
// higher score first, then the lower index). ld(u) loads s_u, already a rank key
// (IndexerRankKey: never NaN). Counting stops at index_topk.
template <typename LdScore>
QPROF_HDI bool IndexerChosen(LdScore ld, int len, int t, int index_topk, int window) {
  if (t >= len - window) return true;
  const float s = ld(t);
  int rank = 0;
  for (int u = 0; u < len && rank < index_topk; ++u) {
    const float su = ld(u);
#if QPROF_MUTANT(TIE_ORDER)  // body mutation: equal scores go to the higher index
    rank += (su > s) || (su == s && u > t);
#else
    rank += (su > s) || (su == s && u < t);
#endif
  }
  return rank < index_topk;
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_INDEXER_MATH_H_
