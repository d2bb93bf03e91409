#include "kernels/common/cuda/smem_opt_in.h"

#include "kernels/common/cuda/cuda_status.h"

namespace qprof::kernels::cuda {

absl::Status EnsureDynamicSmem(const void* func, size_t dynamic_bytes, SmemOptInState& state) {
  int dev = 0;
  QPROF_CUDA_RETURN_IF_ERROR(cudaGetDevice(&dev));
  const absl::StatusOr<int> static_bytes = state.static_bytes.GetOrCompute(dev, [&]() -> absl::StatusOr<int> {
    cudaFuncAttributes attr;
    QPROF_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, func));
    return static_cast<int>(attr.sharedSizeBytes);
  });
  if (!static_bytes.ok()) return static_bytes.status();
  if (!NeedsSmemOptIn(*static_bytes, static_cast<long long>(dynamic_bytes))) return absl::OkStatus();
  return state.opted_in.Ensure(dev, static_cast<int>(dynamic_bytes), [&](int bytes) {
    return CudaStatus(cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                      "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
  });
}

int CurrentDeviceSmCount(int fallback) {
  static PerDeviceMax* const sms = new PerDeviceMax();  // never destroyed: any thread may ask
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return fallback;
  const absl::StatusOr<int> n = sms->GetOrCompute(dev, [&]() -> absl::StatusOr<int> {
    int v = 0;
    QPROF_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
    if (v <= 0) return absl::InternalError("no multiprocessors");
    return v;
  });
  return n.ok() ? *n : fallback;
}

}  // namespace qprof::kernels::cuda
