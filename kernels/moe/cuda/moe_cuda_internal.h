// Internals of moe_cuda.h: the workspace every path carves, the per-instantiation launch
// entry points (one .cu each, compiled in parallel) and the paths' host halves. Arguments
// are already checked by LaunchMoeCuda.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_CUDA_INTERNAL_H_
#define QPROF_KERNELS_MOE_CUDA_MOE_CUDA_INTERNAL_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "kernels/moe/cuda/moe_grouping.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

// Hands out 256-byte aligned pieces of a workspace in call order; a null base only counts.
class MoeWorkspaceCarver {
 public:
  explicit MoeWorkspaceCarver(void* base) : base_(static_cast<char*>(base)) {}
  template <typename T>
  T* Take(size_t count) {
    T* p = reinterpret_cast<T*>(base_ != nullptr ? base_ + used_ : nullptr);
    used_ += (count * sizeof(T) + 255) / 256 * 256;
    return p;
  }
  size_t used() const { return used_; }

 private:
  char* base_;
  size_t used_ = 0;
};

// What a path may use of the workspace; each path's layout() fills its own pieces after
// the common slot_out.
struct MoeWorkspace {
  float* slot_out = nullptr;          // [slots, dim]: every path's partial outputs
  MoeGrouping g{};                    // grouped paths
  float* hidden = nullptr;            // slot_gemv: [slots, inter] fp32
  uint16_t* act = nullptr;            // w4a16: [slots, dim] bf16
  uint16_t* hidden_bf16 = nullptr;    // w4a16: [slots, inter]
  Fp4ActBuffers fp4{};                // fp4_mma
  size_t bytes = 0;
};

// The grouping kernels (align, permute, combine) compiled under one path's name prefix
// ("qprof_moe_w4a16_mma_nvfp4"): the kernels of `path` for `p.format`, or null when
// moe_group.cu has no instantiation for it.
struct MoeGroupKernels;
const MoeGroupKernels* FindMoeGroupKernels(const char* path, Fp4Format format);

// The paths' host halves (moe_<name>_path.cc).
const MoeCudaPath& SlotGemvPath();
const MoeCudaPath& W4a16MmaPath();
const MoeCudaPath& Fp4MmaPath();

absl::Status LaunchSlotGemvMxfp4(const MoeParams& p, float* hidden, float* slot_out,
                                 cudaStream_t s);
absl::Status LaunchSlotGemvNvfp4(const MoeParams& p, float* hidden, float* slot_out,
                                 cudaStream_t s);

// The grouping kernels of `k` (FindMoeGroupKernels).
absl::Status LaunchMoeAlign(const MoeParams& p, const MoeGroupKernels& k, const MoeGrouping& g,
                            cudaStream_t s);
absl::Status LaunchMoePermuteBf16(const MoeParams& p, const MoeGroupKernels& k,
                                  const MoeGrouping& g, uint16_t* act, cudaStream_t s);
absl::Status LaunchMoeCombine(const MoeParams& p, const MoeGroupKernels& k,
                              const float* slot_out, cudaStream_t s);

// GEMM1 (W13 + SwiGLU) and GEMM2 (W2) of the W4A16 path.
absl::Status LaunchW4a16Mxfp4(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                              uint16_t* hidden, float* slot_out, cudaStream_t s);
absl::Status LaunchW4a16Nvfp4(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                              uint16_t* hidden, float* slot_out, cudaStream_t s);

absl::Status LaunchFp4MmaMxfp4(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                               float* slot_out, cudaStream_t s);
absl::Status LaunchFp4MmaNvfp4(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                               float* slot_out, cudaStream_t s);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_CUDA_INTERNAL_H_
