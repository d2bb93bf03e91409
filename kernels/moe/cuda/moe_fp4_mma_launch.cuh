// Host launcher of the fp4_mma kernels, shared by the per-format .cu files: the grids and
// arguments come from the launch plans next to the bodies (moe_fp4_mma.cuh), which the warp
// emulation uses too.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_FP4_MMA_LAUNCH_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_FP4_MMA_LAUNCH_CUH_

#include "absl/status/status.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"
#include "kernels/moe/cuda/moe_fp4_mma.cuh"

namespace qprof::kernels::cuda {

template <typename Q, typename K1, typename K2>
absl::Status LaunchFp4MmaImpl(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                              float* slot_out, cudaStream_t stream, Q quant, K1 gemm1, K2 gemm2,
                              const char* name) {
  const Fp4QuantActLaunch q1 = Fp4QuantAct1Launch(p, g, b);
  quant<<<dim3(q1.grid.x, q1.grid.y, q1.grid.z), kQuantActThreads, 0, stream>>>(q1.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  const Fp4MmaLaunch a1 = Fp4Gemm1Launch(p, g, b);
  gemm1<<<dim3(a1.grid.x, a1.grid.y, a1.grid.z), kF4Threads, 0, stream>>>(a1.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  const Fp4QuantActLaunch q2 = Fp4QuantAct2Launch(p, g, b);
  quant<<<dim3(q2.grid.x, q2.grid.y, q2.grid.z), kQuantActThreads, 0, stream>>>(q2.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  const Fp4MmaLaunch a2 = Fp4Gemm2Launch(p, g, b, slot_out);
  gemm2<<<dim3(a2.grid.x, a2.grid.y, a2.grid.z), kF4Threads, 0, stream>>>(a2.args);
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_FP4_MMA_LAUNCH_CUH_
