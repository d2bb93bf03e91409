// w4a16_mma kernels for MXFP4 (see moe_w4a16_mma.cuh).
#include "kernels/moe/cuda/moe_w4a16_mma_launch.cuh"

using namespace qprof::kernels::cuda;

// 4 warps; the register cap (128 for 2+ blocks per SM with 35 KB of shared memory each)
// leaves room for the decoded fragments of both rows and kW4NT accumulator tiles.
extern "C" __global__ void __launch_bounds__(kW4Threads, 4)
    qprof_moe_w4a16_mma_mxfp4_w13(W4a16Args a) {
  W4a16Body<false, true>(a);
}
extern "C" __global__ void __launch_bounds__(kW4Threads, 4)
    qprof_moe_w4a16_mma_mxfp4_w2(W4a16Args a) {
  W4a16Body<false, false>(a);
}

namespace qprof::kernels::cuda {
absl::Status LaunchW4a16Mxfp4(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                              uint16_t* hidden, float* slot_out, cudaStream_t s) {
  return LaunchW4a16Impl(p, g, act, hidden, slot_out, s, qprof_moe_w4a16_mma_mxfp4_w13,
                         qprof_moe_w4a16_mma_mxfp4_w2, "qprof_moe_w4a16_mma_mxfp4");
}
}  // namespace qprof::kernels::cuda
