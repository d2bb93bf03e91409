// Per-thread math of the indexer kernels (indexer.cu), host-callable so that the CPU tests
// (tests/kernels/mla_simt_host_test.cc) run the kernels' own selection rule and score order
// against IndexerTopkReferenceCpu.
#ifndef QPROF_KERNELS_MLA_CUDA_INDEXER_MATH_H_
#define QPROF_KERNELS_MLA_CUDA_INDEXER_MATH_H_

#include <math.h>

#include "kernels/common/reg_ops.h"

namespace qprof::kernels::cuda {

inline constexpr int kIdxTile = 16;      // tokens per score block
inline constexpr int kIdxGroups = 16;    // lanes per token: head groups h = grp, grp+16, ...
inline constexpr int kIdxMaxDim = 128;
inline constexpr int kIdxMaxHeads = 64;
inline constexpr int kIdxMaxLen = 12288;

// Score thread (token tok, group grp)'s share: sum over its heads h = grp, grp+16, ... of
// w_h * relu(q_h . k) with the dot in index order (FMA); the 16 shares of a token are then
// summed by a butterfly over lanes xor 1, 2, 4, 8.
QPROF_HDI float IndexerHeadShare(const float* q, int q_stride, const float* w, const float* key,
                                 int heads, int dim, int grp) {
  float acc = 0.f;
  for (int h = grp; h < heads; h += kIdxGroups) {
    float d = 0.f;
    for (int c = 0; c < dim; ++c) d = fmaf(q[h * q_stride + c], key[c], d);
    acc += w[h] * fmaxf(d, 0.f);
  }
  return acc;
}

// Whether token t (< len) is selected: in the window (t >= len - window), or ranked below
// index_topk, where rank = #{u : s_u > s_t or (s_u == s_t and u < t)} (the CPU's tie rule:
// higher score first, then the lower index). Counting stops at index_topk.
QPROF_HDI bool IndexerChosen(const float* sc, int len, int t, int index_topk, int window) {
  if (t >= len - window) return true;
  const float s = sc[t];
  int rank = 0;
  for (int u = 0; u < len && rank < index_topk; ++u) rank += (sc[u] > s) || (sc[u] == s && u < t);
  return rank < index_topk;
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_INDEXER_MATH_H_
