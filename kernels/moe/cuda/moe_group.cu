// Align, permute and combine kernels of the grouped MoE paths (see moe_group.cuh).
#include <cuda_runtime.h>

#include "kernels/moe/cuda/moe_group.cuh"
#include "kernels/moe/params.h"

using namespace qprof::kernels::cuda;

// The helpers run as part of a MoE path, so each path gets its own copies named with the
// path's registry prefix (qprof_moe_<path>_<fmt>_align ...): traces attribute their time to
// the path (role moe.experts) like the GEMMs themselves.
#define QPROF_MOE_GROUP_KERNELS(prefix)                                                        \
  extern "C" __global__ void __launch_bounds__(kAlignThreads)                                  \
      prefix##_align(const int32_t* ids, int slots, int experts, int32_t* sorted,              \
                     int32_t* offsets, int32_t* active, int32_t* num_active) {                 \
    AlignBody(ids, slots, experts, sorted, offsets, active, num_active);                       \
  }                                                                                            \
  extern "C" __global__ void __launch_bounds__(kPermuteThreads)                                \
      prefix##_permute_bf16(const float* x, const int32_t* sorted, const int32_t* offsets,     \
                            int experts, int topk, int dim, uint16_t* act) {                   \
    PermuteBody(x, sorted, offsets, experts, topk, dim, act);                                  \
  }                                                                                            \
  extern "C" __global__ void __launch_bounds__(kCombineThreads)                                \
      prefix##_combine(const float* slot_out, const int32_t* ids, const float* w, int topk,    \
                       int dim, float* out) {                                                  \
    CombineBody(slot_out, ids, w, topk, dim, out);                                             \
  }

QPROF_MOE_GROUP_KERNELS(qprof_moe_slot_gemv_mxfp4)
QPROF_MOE_GROUP_KERNELS(qprof_moe_slot_gemv_nvfp4)
QPROF_MOE_GROUP_KERNELS(qprof_moe_w4a16_mma_mxfp4)
QPROF_MOE_GROUP_KERNELS(qprof_moe_w4a16_mma_nvfp4)
QPROF_MOE_GROUP_KERNELS(qprof_moe_fp4_mma_mxfp4)
QPROF_MOE_GROUP_KERNELS(qprof_moe_fp4_mma_nvfp4)

#include <cstring>

#include "absl/status/status.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/smem_opt_in.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"

namespace qprof::kernels::cuda {

using AlignFn = void (*)(const int32_t*, int, int, int32_t*, int32_t*, int32_t*, int32_t*);
using PermuteFn = void (*)(const float*, const int32_t*, const int32_t*, int, int, int, uint16_t*);
using CombineFn = void (*)(const float*, const int32_t*, const float*, int, int, float*);

struct MoeGroupKernels {
  const char* path;     // "w4a16_mma"
  Fp4Format format;
  AlignFn align;
  PermuteFn permute;
  CombineFn combine;
  const char* name;     // "qprof_moe_w4a16_mma_nvfp4"
  SmemOptInState* align_smem;  // the align kernel's shared-memory opt-in, per device
};

namespace {

#define QPROF_GK(path, fmt, prefix)                                                         \
  MoeGroupKernels {                                                                         \
    path, fmt, prefix##_align, prefix##_permute_bf16, prefix##_combine, #prefix,            \
        new SmemOptInState()                                                                \
  }
const MoeGroupKernels* const kGroupKernels = new MoeGroupKernels[6]{
    QPROF_GK("slot_gemv", Fp4Format::kMxfp4, qprof_moe_slot_gemv_mxfp4),
    QPROF_GK("slot_gemv", Fp4Format::kNvfp4, qprof_moe_slot_gemv_nvfp4),
    QPROF_GK("w4a16_mma", Fp4Format::kMxfp4, qprof_moe_w4a16_mma_mxfp4),
    QPROF_GK("w4a16_mma", Fp4Format::kNvfp4, qprof_moe_w4a16_mma_nvfp4),
    QPROF_GK("fp4_mma", Fp4Format::kMxfp4, qprof_moe_fp4_mma_mxfp4),
    QPROF_GK("fp4_mma", Fp4Format::kNvfp4, qprof_moe_fp4_mma_nvfp4)};
constexpr int kGroupKernelCount = 6;

}  // namespace

const MoeGroupKernels* FindMoeGroupKernels(const char* path, Fp4Format format) {
  for (int i = 0; i < kGroupKernelCount; ++i) {
    const MoeGroupKernels& k = kGroupKernels[i];
    if (k.format == format && std::strcmp(k.path, path) == 0) return &k;
  }
  return nullptr;
}

absl::Status LaunchMoeAlign(const MoeParams& p, const MoeGroupKernels& k, const MoeGrouping& g,
                            cudaStream_t s) {
  const int slots = p.tokens * p.topk;
  const size_t smem = MoeAlignSmemBytes(slots, p.experts);
  // Per device and kernel (one state per align kernel), static + dynamic vs 48 KiB.
  RETURN_IF_ERROR_STATUS(
      EnsureDynamicSmem(reinterpret_cast<const void*>(k.align), smem, *k.align_smem));
  k.align<<<1, kAlignThreads, smem, s>>>(p.topk_ids, slots, p.experts, g.sorted_slots,
                                         g.expert_offsets, g.active_experts, g.num_active);
  RETURN_IF_CUDA_LAUNCH_ERROR(k.name);
  return absl::OkStatus();
}

absl::Status LaunchMoePermuteBf16(const MoeParams& p, const MoeGroupKernels& k,
                                  const MoeGrouping& g, uint16_t* act, cudaStream_t s) {
  const LaunchDims grid = MoePermuteGrid(p);
  k.permute<<<dim3(grid.x, grid.y, grid.z), kPermuteThreads, 0, s>>>(p.x, g.sorted_slots, g.expert_offsets, p.experts,
                                               p.topk, p.dim, act);
  RETURN_IF_CUDA_LAUNCH_ERROR(k.name);
  return absl::OkStatus();
}

absl::Status LaunchMoeCombine(const MoeParams& p, const MoeGroupKernels& k,
                              const float* slot_out, cudaStream_t s) {
  const LaunchDims grid = MoeCombineGrid(p);
  k.combine<<<dim3(grid.x, grid.y, grid.z), kCombineThreads, 0, s>>>(slot_out, p.topk_ids, p.topk_weights, p.topk, p.dim, p.out);
  RETURN_IF_CUDA_LAUNCH_ERROR(k.name);
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
