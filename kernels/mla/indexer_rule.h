// The indexer's scoring and ranking rule where it meets NaN, shared by the CPU kernels
// (mla_cpu.cc: IndexerTopkCpu, IndexerTopkReferenceCpu) and the CUDA kernels
// (cuda/indexer.cuh), host- and device-callable:
//   score_t = sum_h w_h * relu(q_h . k_t), where relu is fmaxf(d, 0): a NaN dot product
//     counts as 0 (what the CUDA kernel's fmaxf has always done);
//   ranking: a NaN score counts as -inf, so it never displaces a number, and equal keys go
//     to the lower token index. Without this a NaN score ranked first and did not count
//     against the others on the GPU (more than index_topk tokens chosen), and the CPU's
//     sort comparator was not a strict weak order.
#ifndef QPROF_KERNELS_MLA_INDEXER_RULE_H_
#define QPROF_KERNELS_MLA_INDEXER_RULE_H_

#include <math.h>

#include "kernels/common/reg_ops.h"  // QPROF_HDI

namespace qprof::kernels {

QPROF_HDI float IndexerRelu(float d) { return fmaxf(d, 0.f); }
QPROF_HDI float IndexerRankKey(float score) { return score != score ? -INFINITY : score; }

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MLA_INDEXER_RULE_H_
