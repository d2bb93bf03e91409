// Per-device opt-in to large dynamic shared memory, and the device's SM count, both cached
// per device and thread-safe (kernels/common/per_device.h explains why a process-wide
// static is wrong with one host thread per GPU). Includes the CUDA runtime API: only for
// kernels/*/cuda and runtime/cuda.
#ifndef QPROF_KERNELS_COMMON_CUDA_SMEM_OPT_IN_H_
#define QPROF_KERNELS_COMMON_CUDA_SMEM_OPT_IN_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"
#include "kernels/common/per_device.h"

namespace qprof::kernels::cuda {

// Before launching `func` with `dynamic_bytes` of dynamic shared memory on the current
// device: reads the kernel's static shared memory (once per device) and, when static +
// dynamic exceeds 48 KiB, sets cudaFuncAttributeMaxDynamicSharedMemorySize to at least
// `dynamic_bytes` on this device (once per device and size increase). `state` is one
// object per kernel (a function-local static at the call site). Not inside a graph capture
// the first time on a device: the decoders' first step is eager.
struct SmemOptInState {
  PerDeviceMax static_bytes;   // cudaFuncAttributes::sharedSizeBytes (-1 = not read yet)
  PerDeviceMax opted_in;       // dynamic bytes the attribute allows
};
absl::Status EnsureDynamicSmem(const void* func, size_t dynamic_bytes, SmemOptInState& state);

// Multiprocessors of the current device (cached per device); `fallback` when it cannot be
// read.
int CurrentDeviceSmCount(int fallback);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_SMEM_OPT_IN_H_
