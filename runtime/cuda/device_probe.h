// Whether this build's GPU code can run on a device. The kernels are compiled for the
// architectures of CMAKE_CUDA_ARCHITECTURES only (sm_90a, sm_100a, sm_120a by default:
// "a" targets run on exactly that compute capability, with no PTX to fall back on), so a
// GPU of another architecture would fail at its first launch with "no kernel image". One
// probe kernel, built like every other, answers before any weights are built. No CUDA
// types here.
#ifndef QPROF_RUNTIME_CUDA_DEVICE_PROBE_H_
#define QPROF_RUNTIME_CUDA_DEVICE_PROBE_H_

#include <string>

#include "absl/status/status.h"

namespace qprof::runtime::cuda {

// The architectures this build's kernels were compiled for, e.g. "90a-real 100a-real 120a-real".
std::string BuiltCudaArchitectures();

// OK when device `device` can run this build's kernels; FailedPrecondition otherwise, one
// line naming the device, its architecture and the build's ("GPU 0 (NVIDIA L40S, sm_89):
// this build has GPU code for 90a-real 100a-real 120a-real only; rebuild with
// -DCMAKE_CUDA_ARCHITECTURES=89-real, or run --backend cpu").
absl::Status CheckKernelImage(int device);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_DEVICE_PROBE_H_
