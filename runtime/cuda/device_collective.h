// The collective the tensor-parallel ranks all-reduce through on their GPUs (NCCL), behind
// an interface so that no NCCL type and no preprocessor test reaches the rank code: a
// build with nccl.h compiles nccl_comms.cc, one without compiles nccl_unavailable.cc
// (runtime/cuda/CMakeLists.txt). Rank r's calls come from rank r's own thread only
// (runtime/cuda/host/rank_group.h).
#ifndef QPROF_RUNTIME_CUDA_DEVICE_COLLECTIVE_H_
#define QPROF_RUNTIME_CUDA_DEVICE_COLLECTIVE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qprof::runtime::cuda {

class DeviceCollective {
 public:
  virtual ~DeviceCollective() = default;
  // "NCCL <version> (<library path>)".
  virtual std::string name() const = 0;
  // In-place FP32 sum of `n` values over the ranks, enqueued on `stream` (a cudaStream_t).
  virtual absl::Status AllReduceSum(int rank, float* buf, size_t n, void* stream) = 0;
  // An error the collective hit asynchronously on rank's communicator.
  virtual absl::Status AsyncError(int rank) = 0;
  // Gives up rank's communicator (idempotent); later calls return FailedPrecondition.
  virtual void Abort(int rank) = 0;
};

// The ranks' communicators over `devices` (rank r on devices[r]), or why there are none
// (the library was not found; this build has no NCCL header: Unimplemented).
absl::StatusOr<std::unique_ptr<DeviceCollective>> OpenDeviceCollective(
    const std::vector<int>& devices);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_DEVICE_COLLECTIVE_H_
