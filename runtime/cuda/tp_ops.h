// Device helpers of tensor parallel (runtime/tp_partition.h) for the CUDA backend:
// the routed-expert id remap and the NCCL communicators with a checked all-reduce.
// Internal to runtime/cuda (CUDA and NCCL types appear here, never in public headers).
#ifndef QPROF_RUNTIME_CUDA_TP_OPS_H_
#define QPROF_RUNTIME_CUDA_TP_OPS_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qprof::runtime {

// out[i] = ids[i] - begin when begin <= ids[i] < end, else -1 (the MoE kernels skip
// ids < 0): the GPU twin of LocalExpertIds. Returns the launch error, if any.
cudaError_t LaunchLocalExpertIds(const int32_t* ids, int n, int begin, int end, int32_t* out,
                                 cudaStream_t stream);

// ncclResult_t -> Status ("<what>: <NCCL error string>"); Internal for NCCL's own faults,
// FailedPrecondition for system/usage errors.
absl::Status NcclStatus(ncclResult_t r, const char* what);

#define QPROF_NCCL_RETURN_IF_ERROR(expr)                                   \
  do {                                                                     \
    ::absl::Status qprof_nccl_s_ = ::qprof::runtime::NcclStatus((expr), #expr); \
    if (!qprof_nccl_s_.ok()) return qprof_nccl_s_;                         \
  } while (0)

// One communicator per local GPU 0..n-1 of this process (ncclCommInitAll); destroyed
// with the object. Rank r drives comm(r) from its own host thread.
class NcclComms {
 public:
  static absl::StatusOr<std::unique_ptr<NcclComms>> Create(int n);
  ~NcclComms();
  ncclComm_t comm(int rank) const { return comms_[rank]; }
  // Aborts every communicator (unblocks ranks waiting on a peer that failed).
  void Abort();

 private:
  std::vector<ncclComm_t> comms_;
};

// In-place sum of `n` FP32 values across the ranks of `comm`, on `stream`.
absl::Status AllReduceSum(ncclComm_t comm, float* buf, size_t n, cudaStream_t stream);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CUDA_TP_OPS_H_
