// CPU sparse-MLA decode and indexer kernels (params and formulas in kernels/mla/params.h).
// *ReferenceCpu: the plainest loops, FP32 accumulation in index order (the oracles for the
// CUDA kernels); the others: the same maths with batch x head work items on the pool,
// KV rows converted from BF16 once per (sequence, token) and reused for all heads.
#ifndef QPROF_KERNELS_MLA_MLA_CPU_H_
#define QPROF_KERNELS_MLA_MLA_CPU_H_

#include "absl/status/status.h"
#include "kernels/mla/params.h"

namespace qprof::kernels {

absl::Status ValidateSparseMlaParams(const SparseMlaParams& p);
absl::Status SparseMlaDecodeReferenceCpu(const SparseMlaParams& p);
absl::Status SparseMlaDecodeCpu(const SparseMlaParams& p);

absl::Status ValidateIndexerParams(const IndexerParams& p);
absl::Status IndexerTopkReferenceCpu(const IndexerParams& p);
absl::Status IndexerTopkCpu(const IndexerParams& p);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MLA_MLA_CPU_H_
