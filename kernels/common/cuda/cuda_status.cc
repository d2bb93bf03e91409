#include "kernels/common/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace qprof::kernels::cuda {

absl::Status CudaStatus(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", cudaGetErrorName(err), " (",
                                 cudaGetErrorString(err), ")");
  switch (err) {
    case cudaErrorMemoryAllocation:
      return absl::ResourceExhaustedError(msg);
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
      return absl::FailedPreconditionError(msg);
    case cudaErrorInvalidValue:
      return absl::InvalidArgumentError(msg);
    default:
      return absl::InternalError(msg);
  }
}

absl::Status LastLaunchStatus(const char* kernel_name) {
  return CudaStatus(cudaGetLastError(), kernel_name);
}

absl::Status CurrentDeviceArch(int* arch) {
  int dev = 0;
  QPROF_CUDA_RETURN_IF_ERROR(cudaGetDevice(&dev));
  int major = 0, minor = 0;
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  *arch = major * 10 + minor;
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
