// One thin wrapper around the CUDA runtime's error codes: every CUDA call in kernels/*/cuda
// and runtime/cuda goes through QPROF_CUDA_RETURN_IF_ERROR, which turns a failure into an
// absl::Status naming the call ("cudaMalloc(kv): out of memory"). Library code never
// exits or aborts on a CUDA error; the caller decides whether it is fatal.
//
// This header includes the CUDA runtime API, so it may only be included from kernels/*/cuda
// and runtime/cuda (module rule: no CUDA types in public headers elsewhere).
#ifndef QPROF_KERNELS_COMMON_CUDA_CUDA_STATUS_H_
#define QPROF_KERNELS_COMMON_CUDA_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/status.h"

namespace qprof::kernels::cuda {

// Ok for cudaSuccess; otherwise Internal (or ResourceExhausted for allocation failures,
// FailedPrecondition for "no device") with "<what>: <cudaGetErrorString>".
absl::Status CudaStatus(cudaError_t err, const char* what);

// The launch error of the last kernel launched on this thread (cudaGetLastError): call
// right after each <<<>>> launch.
absl::Status LastLaunchStatus(const char* kernel_name);

// The current device's compute capability as major*10+minor (e.g. 90, 120), or an error.
absl::Status CurrentDeviceArch(int* arch);

}  // namespace qprof::kernels::cuda

#define QPROF_CUDA_RETURN_IF_ERROR(expr)                                            \
  do {                                                                              \
    ::absl::Status qprof_cuda_status_ = ::qprof::kernels::cuda::CudaStatus((expr), #expr); \
    if (!qprof_cuda_status_.ok()) return qprof_cuda_status_;                        \
  } while (0)

// RETURN_IF_ERROR for .cu files (which do not include base/status_macros.h).
#define RETURN_IF_ERROR_STATUS(expr)                         \
  do {                                                       \
    ::absl::Status qprof_s_ = (expr);                        \
    if (!qprof_s_.ok()) return qprof_s_;                     \
  } while (0)

// After a <<<>>> launch: returns the launch error (bad configuration, missing image for
// this arch) as a status naming the kernel.
#define RETURN_IF_CUDA_LAUNCH_ERROR(kernel_name)                                     \
  do {                                                                              \
    ::absl::Status qprof_launch_status_ = ::qprof::kernels::cuda::LastLaunchStatus(kernel_name); \
    if (!qprof_launch_status_.ok()) return qprof_launch_status_;                    \
  } while (0)

#endif  // QPROF_KERNELS_COMMON_CUDA_CUDA_STATUS_H_
