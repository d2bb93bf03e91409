// Host launchers of the small CUDA kernels of a decode step (params and formulas in
// kernels/common/params.h; CPU oracles in kernels/common/common_cpu.h). All pointers are
// device pointers. Each launcher checks its arguments (InvalidArgument naming the field),
// launches on `stream` and returns the launch status. Kernel names: qprof_<op>.
//
//  - Embedding, RMSNorm (block per row, FP32 sum of squares), rope (interleaved pairs;
//    angles from double-precision sincos like the CPU), router top-k (warp per token,
//    sigmoid + bias, k rounds of a warp arg-max, ties to the lower index), argmax (block per
//    row, lowest index on ties).
//  - Dense BF16 GEMM (y = W x): mma.sync m16n8k16 BF16 (qprof_gemm_dense; the LM head
//    launches the same body as qprof_gemm_lm_head, the router gate as
//    qprof_moe_router_gemm). k must be a multiple of 32.
//  - KV append (qprof_attn_kv_append): the new latent row and index key into the caches.
#ifndef QPROF_KERNELS_COMMON_CUDA_COMMON_CUDA_H_
#define QPROF_KERNELS_COMMON_CUDA_COMMON_CUDA_H_

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "kernels/common/params.h"

namespace qprof::kernels::cuda {

absl::Status LaunchEmbedding(const EmbeddingParams& p, cudaStream_t stream);
absl::Status LaunchRmsNorm(const RmsNormParams& p, cudaStream_t stream);
absl::Status LaunchRope(const RopeParams& p, cudaStream_t stream);
absl::Status LaunchDenseGemm(const DenseGemmParams& p, cudaStream_t stream);
absl::Status LaunchLmHead(const DenseGemmParams& p, cudaStream_t stream);
// The router's gate projection (same kernel body, named qprof_moe_router_gemm).
absl::Status LaunchRouterGemm(const DenseGemmParams& p, cudaStream_t stream);
// kv[(b*stride + positions[b]) * d_qk ..] = bf16(kv_new[b]); index_keys likewise.
absl::Status LaunchKvAppend(const float* kv_new, const float* ik_new, const int32_t* positions,
                            int batch, int stride, int d_qk, int index_dim, uint16_t* kv,
                            uint16_t* index_keys, cudaStream_t stream);
absl::Status LaunchRouterTopk(const RouterTopkParams& p, cudaStream_t stream);
absl::Status LaunchArgmax(const ArgmaxParams& p, cudaStream_t stream);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_COMMON_CUDA_H_
