// Per-instantiation launch entry points (one .cu each, compiled in parallel) behind
// moe_cuda.h. Arguments are already checked by LaunchMoeCuda.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_CUDA_INTERNAL_H_
#define QPROF_KERNELS_MOE_CUDA_MOE_CUDA_INTERNAL_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

// Device grouping produced by the paths' *_align kernel, shared by the grouped paths.
struct MoeGrouping {
  int32_t* sorted_slots;     // [slots]
  int32_t* expert_offsets;   // [experts + 1]
  int32_t* active_experts;   // [experts]
  int32_t* num_active;       // [1]
};

absl::Status LaunchSlotGemvMxfp4(const MoeParams& p, float* hidden, float* slot_out,
                                 cudaStream_t s);
absl::Status LaunchSlotGemvNvfp4(const MoeParams& p, float* hidden, float* slot_out,
                                 cudaStream_t s);

// `path`: 0 slot_gemv, 1 w4a16_mma, 2 fp4_mma (the kernels carry the path's name prefix).
absl::Status LaunchMoeAlign(const MoeParams& p, int path, const MoeGrouping& g, cudaStream_t s);
absl::Status LaunchMoePermuteBf16(const MoeParams& p, int path, const MoeGrouping& g,
                                  uint16_t* act, cudaStream_t s);
absl::Status LaunchMoeCombine(const MoeParams& p, int path, const float* slot_out,
                              cudaStream_t s);

// GEMM1 (W13 + SwiGLU) and GEMM2 (W2) of the W4A16 path.
absl::Status LaunchW4a16Mxfp4(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                              uint16_t* hidden, float* slot_out, cudaStream_t s);
absl::Status LaunchW4a16Nvfp4(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                              uint16_t* hidden, float* slot_out, cudaStream_t s);

struct Fp4ActBuffers {
  uint8_t* packed;    // [slots, max(dim, inter)/2]
  uint8_t* scales;    // [slots, max(dim, inter)/16]
  float* scale2;      // [slots]
  float* hidden;      // [slots, inter]
};
absl::Status LaunchFp4MmaMxfp4(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                               float* slot_out, cudaStream_t s);
absl::Status LaunchFp4MmaNvfp4(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                               float* slot_out, cudaStream_t s);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_CUDA_INTERNAL_H_
