// Host launchers of the CUDA sparse-MLA decode kernels and the indexer (params and formulas
// in kernels/mla/params.h; CPU oracles SparseMlaDecodeReferenceCpu / IndexerTopkReferenceCpu).
// All pointers are device pointers. Shapes the kernels do not support -> InvalidArgument.
//  - LaunchSparseMlaSimt (qprof_attn_sparse_mla_simt): SIMT FP32, 8 heads per block.
//  - LaunchSparseMlaMma (qprof_attn_sparse_mla_mma): BF16 mma.sync, 16 heads per block.
//    Both need d_v = 512, d_qk = 576 (the DeepSeek latent); any heads, topk, batch.
//  - LaunchIndexerTopk (qprof_attn_indexer_score + qprof_attn_indexer_topk): index_dim
//    <= 128 and a multiple of 8, index_heads <= 64, kv_seq_stride <= 12288. seq_lens are
//    read on the device; `counts` is written when set.
#ifndef QPROF_KERNELS_MLA_CUDA_MLA_CUDA_H_
#define QPROF_KERNELS_MLA_CUDA_MLA_CUDA_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "kernels/mla/params.h"

namespace qprof::kernels::cuda {

absl::Status LaunchSparseMlaSimt(const SparseMlaParams& p, cudaStream_t stream);
absl::Status LaunchSparseMlaMma(const SparseMlaParams& p, cudaStream_t stream);
// With a workspace of SparseMlaMmaWorkspaceBytes(p) bytes (0 = not needed) the token tiles
// are split over several blocks per (sequence, 16 heads) when the batch is too small to
// fill the GPU (flash-decoding), merged by qprof_attn_sparse_mla_mma_combine. Without one
// (or a smaller one) it runs unsplit.
size_t SparseMlaMmaWorkspaceBytes(const SparseMlaParams& p);
// Blocks the token tiles are split over on a GPU with `sm_count` SMs (1: unsplit, no
// combine kernel). Pure: lists of launches are made with it without a GPU.
int SparseMlaMmaSplitsFor(const SparseMlaParams& p, int sm_count);
absl::Status LaunchSparseMlaMma(const SparseMlaParams& p, void* workspace, size_t workspace_bytes,
                                cudaStream_t stream);
absl::Status LaunchIndexerTopk(const IndexerParams& p, cudaStream_t stream);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_MLA_CUDA_H_
