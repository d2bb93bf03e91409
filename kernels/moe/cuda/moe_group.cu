// Align, permute and combine kernels of the grouped MoE paths (see moe_group.cuh).
#include <cuda_runtime.h>

#include "kernels/common/cuda/device_helpers.cuh"
#include "kernels/moe/cuda/moe_group.cuh"

using namespace qprof::kernels::cuda;

// One block. ids staged in shared memory; thread e counts and then fills expert e in slot
// order (stable). O(S) per thread: fine for decode (S = tokens * topk <= 8192).
extern "C" __global__ void __launch_bounds__(kAlignThreads)
    qprof_moe_align(const int32_t* __restrict__ topk_ids, int slots, int experts,
                    int32_t* __restrict__ sorted_slots, int32_t* __restrict__ expert_offsets,
                    int32_t* __restrict__ active_experts, int32_t* __restrict__ num_active) {
  extern __shared__ int32_t sh[];
  int32_t* ids = sh;                   // [slots]
  int32_t* offs = sh + slots;          // [experts + 1]
  for (int s = threadIdx.x; s < slots; s += blockDim.x) ids[s] = topk_ids[s];
  __syncthreads();
  for (int e = threadIdx.x; e < experts; e += blockDim.x) {
    int c = 0;
    for (int s = 0; s < slots; ++s) c += ids[s] == e;
    offs[e + 1] = c;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    offs[0] = 0;
    int active = 0;
    for (int e = 0; e < experts; ++e) {
      if (offs[e + 1] > 0) active_experts[active++] = e;
      offs[e + 1] += offs[e];
    }
    *num_active = active;
  }
  __syncthreads();
  for (int e = threadIdx.x; e <= experts; e += blockDim.x) expert_offsets[e] = offs[e];
  for (int e = threadIdx.x; e < experts; e += blockDim.x) {
    int pos = offs[e];
    for (int s = 0; s < slots; ++s)
      if (ids[s] == e) sorted_slots[pos++] = s;
  }
  for (int i = offs[experts] + threadIdx.x; i < slots; i += blockDim.x) sorted_slots[i] = -1;
}

// Row i of the grouped activations = x[sorted_slots[i] / topk] as BF16, k-permuted (PermK4).
extern "C" __global__ void __launch_bounds__(256)
    qprof_moe_permute_bf16(const float* __restrict__ x, const int32_t* __restrict__ sorted_slots,
                           const int32_t* __restrict__ expert_offsets, int experts, int topk,
                           int dim, uint16_t* __restrict__ act) {
  const int i = blockIdx.x;
  if (i >= expert_offsets[experts]) return;
  const int token = sorted_slots[i] / topk;
  const float* xr = x + static_cast<int64_t>(token) * dim;
  uint2* out = reinterpret_cast<uint2*>(act + static_cast<int64_t>(i) * dim);
  for (int g = threadIdx.x; g < dim / 4; g += blockDim.x) {
    const float4 v = *reinterpret_cast<const float4*>(xr + 4 * g);
    out[g] = make_uint2(PackBf16x2(v.x, v.z), PackBf16x2(v.y, v.w));
  }
}

extern "C" __global__ void __launch_bounds__(256)
    qprof_moe_combine(const float* __restrict__ slot_out, const int32_t* __restrict__ topk_ids,
                      const float* __restrict__ topk_weights, int topk, int dim,
                      float* __restrict__ out) {
  const int t = blockIdx.x;
  for (int n = threadIdx.x; n < dim; n += blockDim.x) {
    float acc = 0.f;
    for (int j = 0; j < topk; ++j) {
      const int s = t * topk + j;
      if (topk_ids[s] < 0) continue;
      acc += topk_weights[s] * slot_out[static_cast<int64_t>(s) * dim + n];
    }
    out[static_cast<int64_t>(t) * dim + n] += acc;
  }
}

#include "absl/status/status.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"

namespace qprof::kernels::cuda {

absl::Status LaunchMoeAlign(const MoeParams& p, const MoeGrouping& g, cudaStream_t s) {
  const int slots = p.tokens * p.topk;
  const size_t smem = static_cast<size_t>(slots + p.experts + 1) * sizeof(int32_t);
  if (smem > 48 * 1024) {
    QPROF_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(
        qprof_moe_align, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  }
  qprof_moe_align<<<1, kAlignThreads, smem, s>>>(p.topk_ids, slots, p.experts, g.sorted_slots,
                                                 g.expert_offsets, g.active_experts, g.num_active);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_moe_align");
  return absl::OkStatus();
}

absl::Status LaunchMoePermuteBf16(const MoeParams& p, const MoeGrouping& g, uint16_t* act,
                                  cudaStream_t s) {
  qprof_moe_permute_bf16<<<p.tokens * p.topk, 256, 0, s>>>(p.x, g.sorted_slots, g.expert_offsets,
                                                            p.experts, p.topk, p.dim, act);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_moe_permute_bf16");
  return absl::OkStatus();
}

absl::Status LaunchMoeCombine(const MoeParams& p, const float* slot_out, cudaStream_t s) {
  qprof_moe_combine<<<p.tokens, 256, 0, s>>>(slot_out, p.topk_ids, p.topk_weights, p.topk, p.dim,
                                             p.out);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_moe_combine");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
