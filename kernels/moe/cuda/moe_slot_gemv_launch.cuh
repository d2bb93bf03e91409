// Host launcher of the slot_gemv kernels, shared by the per-format .cu files: grids, shared
// memory and arguments come from the launch plans next to the bodies (moe_slot_gemv.cuh),
// which the warp emulation uses too.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_LAUNCH_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_LAUNCH_CUH_

#include "absl/status/status.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"
#include "kernels/moe/cuda/moe_slot_gemv.cuh"

namespace qprof::kernels::cuda {

template <typename W13Kernel, typename W2Kernel>
absl::Status LaunchSlotGemvImpl(const MoeParams& p, float* hidden, float* slot_out,
                                cudaStream_t stream, W13Kernel w13, W2Kernel w2,
                                const char* name) {
  const SlotGemvW13Launch l1 = SlotGemvW13Plan(p, hidden);
  w13<<<dim3(l1.grid.x, l1.grid.y, l1.grid.z), kSlotGemvThreads, l1.smem, stream>>>(l1.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  const SlotGemvW2Launch l2 = SlotGemvW2Plan(p, hidden, slot_out);
  w2<<<dim3(l2.grid.x, l2.grid.y, l2.grid.z), kSlotGemvThreads, l2.smem, stream>>>(l2.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_SLOT_GEMV_LAUNCH_CUH_
