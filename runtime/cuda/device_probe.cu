// The probe behind CheckKernelImage (runtime/cuda/device_probe.h): an empty kernel in the
// same build as every other, so the driver's answer for it is the answer for all of them.
#include <cuda_runtime_api.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/cuda/device_probe.h"

#ifndef QPROF_CUDA_ARCHS
#define QPROF_CUDA_ARCHS "unknown"
#endif

extern "C" __global__ void qprof_arch_probe() {}

namespace qprof::runtime::cuda {

std::string BuiltCudaArchitectures() { return QPROF_CUDA_ARCHS; }

absl::Status CheckKernelImage(int device) {
  cudaDeviceProp prop{};
  cudaError_t e = cudaGetDeviceProperties(&prop, device);
  if (e != cudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("GPU ", device, ": ", cudaGetErrorString(e)));
  }
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(device);
  cudaFuncAttributes attr{};
  e = cudaFuncGetAttributes(&attr, qprof_arch_probe);
  cudaSetDevice(previous);
  if (e == cudaSuccess) return absl::OkStatus();
  cudaGetLastError();  // not sticky, but keep it out of the next launch check
  const int cc = prop.major * 10 + prop.minor;
  return absl::FailedPreconditionError(absl::StrCat(
      "GPU ", device, " (", prop.name, ", sm_", cc, "): this build has GPU code for ",
      QPROF_CUDA_ARCHS, " only (", cudaGetErrorString(e), "); rebuild with "
      "-DCMAKE_CUDA_ARCHITECTURES=", cc, "-real, or run --backend cpu"));
}

}  // namespace qprof::runtime::cuda
