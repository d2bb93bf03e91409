// Host launcher of the w4a16_mma GEMMs, shared by the per-format .cu files: the grids and
// arguments come from the launch plans next to the body (moe_w4a16_mma.cuh), which the warp
// emulation uses too.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_W4A16_MMA_LAUNCH_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_W4A16_MMA_LAUNCH_CUH_

#include "absl/status/status.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"
#include "kernels/moe/cuda/moe_w4a16_mma.cuh"

namespace qprof::kernels::cuda {

template <typename K1, typename K2>
absl::Status LaunchW4a16Impl(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                             uint16_t* hidden, float* slot_out, cudaStream_t stream, K1 gemm1,
                             K2 gemm2, const char* name) {
  const W4a16Launch l1 = W4a16Gemm1Launch(p, g, act, hidden);
  gemm1<<<dim3(l1.grid.x, l1.grid.y, l1.grid.z), kW4Threads, 0, stream>>>(l1.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  const W4a16Launch l2 = W4a16Gemm2Launch(p, g, hidden, slot_out);
  gemm2<<<dim3(l2.grid.x, l2.grid.y, l2.grid.z), kW4Threads, 0, stream>>>(l2.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_W4A16_MMA_LAUNCH_CUH_
