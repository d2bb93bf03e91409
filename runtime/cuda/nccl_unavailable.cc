// OpenDeviceCollective of a build without nccl.h (see device_collective.h): tensor
// parallel over NCCL is not available; the host all-reduce still checks the split.
#include "absl/strings/str_cat.h"
#include "runtime/cuda/device_collective.h"

namespace qprof::runtime::cuda {

absl::StatusOr<std::unique_ptr<DeviceCollective>> OpenDeviceCollective(
    const std::vector<int>& devices) {
  return absl::UnimplementedError(absl::StrCat(
      "--tp ", devices.size(), " needs NCCL, and this build has none (nccl.h was not found at "
      "configure time); QPROF_TP_ALLREDUCE=host checks the split through the host"));
}

}  // namespace qprof::runtime::cuda
