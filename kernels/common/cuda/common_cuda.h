// Host launchers of the small CUDA kernels of a decode step (params and formulas in
// kernels/common/params.h; CPU oracles in kernels/common/common_cpu.h). All pointers are
// device pointers. Each launcher checks its arguments (InvalidArgument naming the field),
// launches on `stream` and returns the launch status. Kernel names: qprof_<op>.
//
//  - Embedding, RMSNorm (block per row, FP32 sum of squares), rope (interleaved pairs;
//    angles from double-precision sincos like the CPU), router top-k (warp per token,
//    sigmoid + bias, k rounds of a warp arg-max, ties to the lower index), argmax (block per
//    row, lowest index on ties).
//  - Dense BF16 GEMM (y = W x): SIMT, one warp per output feature, 16-byte weight loads,
//    x tiles of up to 8 rows in registers. Memory-bound at decode sizes; used for the
//    projections and the LM head.
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
absl::Status LaunchRouterTopk(const RouterTopkParams& p, cudaStream_t stream);
absl::Status LaunchArgmax(const ArgmaxParams& p, cudaStream_t stream);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_COMMON_CUDA_H_
