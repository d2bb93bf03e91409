// fp4_mma kernels for NVFP4 (see moe_fp4_mma.cuh). Real bodies on sm_120a only.
#include "kernels/moe/cuda/moe_fp4_mma_launch.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(kQuantActThreads)
    qprof_moe_fp4_mma_nvfp4_quant_act(QuantActArgs a) {
  QuantActBody<true>(a);
}
extern "C" __global__ void __launch_bounds__(kF4Threads)
    qprof_moe_fp4_mma_nvfp4_w13(Fp4MmaArgs a) {
  Fp4MmaBody<true, true>(a);
}
extern "C" __global__ void __launch_bounds__(kF4Threads)
    qprof_moe_fp4_mma_nvfp4_w2(Fp4MmaArgs a) {
  Fp4MmaBody<true, false>(a);
}

namespace qprof::kernels::cuda {
absl::Status LaunchFp4MmaNvfp4(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                               float* slot_out, cudaStream_t s) {
  return LaunchFp4MmaImpl(p, g, b, slot_out, s, qprof_moe_fp4_mma_nvfp4_quant_act,
                          qprof_moe_fp4_mma_nvfp4_w13, qprof_moe_fp4_mma_nvfp4_w2,
                          "qprof_moe_fp4_mma_nvfp4");
}
}  // namespace qprof::kernels::cuda
