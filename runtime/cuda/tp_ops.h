// The routed-expert id remap of tensor parallel (runtime/tp_partition.h) on the GPU.
// Internal to runtime/cuda (CUDA types appear here, never in public headers).
#ifndef QPROF_RUNTIME_CUDA_TP_OPS_H_
#define QPROF_RUNTIME_CUDA_TP_OPS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace qprof::runtime::cuda {

// out[i] = ids[i] - begin when begin <= ids[i] < end, else -1 (the MoE kernels skip
// ids < 0): the GPU twin of LocalExpertIds. Kernel name qprof_tp_local_expert_ids.
// Returns the launch error, if any.
cudaError_t LaunchLocalExpertIds(const int32_t* ids, int n, int begin, int end, int32_t* out,
                                 cudaStream_t stream);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_TP_OPS_H_
