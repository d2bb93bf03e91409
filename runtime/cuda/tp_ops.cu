// The routed-expert id remap of tensor parallel (runtime/cuda/tp_ops.h): a few hundred
// ids per step, one thread each. extern "C" so its name in traces is exactly
// qprof_tp_local_expert_ids (the registry's naming rule for our kernels).
#include <cuda_runtime_api.h>

#include <cstdint>

extern "C" __global__ void qprof_tp_local_expert_ids(const int32_t* ids, int n, int begin,
                                                     int end, int32_t* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int32_t e = ids[i];
  out[i] = e >= begin && e < end ? e - begin : -1;
}

namespace qprof::runtime::cuda {

cudaError_t LaunchLocalExpertIds(const int32_t* ids, int n, int begin, int end, int32_t* out,
                                 cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  constexpr int kThreads = 128;
  qprof_tp_local_expert_ids<<<(n + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      ids, n, begin, end, out);
  return cudaGetLastError();
}

}  // namespace qprof::runtime::cuda
