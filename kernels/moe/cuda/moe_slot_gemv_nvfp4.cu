// slot_gemv kernels for NVFP4 (see moe_slot_gemv.cuh).
#include "kernels/moe/cuda/moe_slot_gemv_launch.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(kSlotGemvThreads, 2)
    qprof_moe_slot_gemv_nvfp4_w13(SlotGemvW13Args a) {
  SlotGemvW13Body<true>(a);
}
extern "C" __global__ void __launch_bounds__(kSlotGemvThreads, 2)
    qprof_moe_slot_gemv_nvfp4_w2(SlotGemvW2Args a) {
  SlotGemvW2Body<true>(a);
}

namespace qprof::kernels::cuda {
absl::Status LaunchSlotGemvNvfp4(const MoeParams& p, float* hidden, float* slot_out,
                               cudaStream_t s) {
  return LaunchSlotGemvImpl(p, hidden, slot_out, s, qprof_moe_slot_gemv_nvfp4_w13,
                            qprof_moe_slot_gemv_nvfp4_w2, "qprof_moe_slot_gemv_nvfp4");
}
}  // namespace qprof::kernels::cuda
