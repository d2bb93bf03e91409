#include "runtime/cuda/tp_ops.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/cuda_status.h"

namespace qprof::runtime {

absl::Status NcclStatus(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return absl::OkStatus();
  std::string msg = absl::StrCat(what, ": ", ncclGetErrorString(r));
  if (r == ncclSystemError || r == ncclInvalidUsage || r == ncclInvalidArgument) {
    return absl::FailedPreconditionError(msg);
  }
  return absl::InternalError(msg);
}

absl::StatusOr<std::unique_ptr<NcclComms>> NcclComms::Create(int n) {
  auto c = std::unique_ptr<NcclComms>(new NcclComms());
  std::vector<int> devices(n);
  for (int i = 0; i < n; ++i) devices[i] = i;
  c->comms_.assign(n, nullptr);
  absl::Status s = NcclStatus(ncclCommInitAll(c->comms_.data(), n, devices.data()),
                              "ncclCommInitAll");
  if (!s.ok()) {
    c->comms_.clear();  // nothing to destroy after a failed init
    return s;
  }
  return c;
}

NcclComms::~NcclComms() {
  for (ncclComm_t comm : comms_) {
    if (comm != nullptr) ncclCommDestroy(comm);
  }
}

void NcclComms::Abort() {
  for (ncclComm_t& comm : comms_) {
    if (comm != nullptr) ncclCommAbort(comm);
    comm = nullptr;
  }
}

absl::Status AllReduceSum(ncclComm_t comm, float* buf, size_t n, cudaStream_t stream) {
  QPROF_NCCL_RETURN_IF_ERROR(ncclAllReduce(buf, buf, n, ncclFloat32, ncclSum, comm, stream));
  return absl::OkStatus();
}

}  // namespace qprof::runtime
