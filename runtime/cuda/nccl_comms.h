// NCCL for tensor parallel, opened with dlopen the first time a run asks for --tp > 1
// (runtime/cuda/host/nccl_search.h says where it is looked for and why), and the
// communicators of one process (ncclCommInitAll over the ranks' GPUs). Only NCCL's header
// is needed at build time. Internal to runtime/cuda: NCCL and CUDA types appear here,
// never in public headers.
#ifndef QPROF_RUNTIME_CUDA_NCCL_COMMS_H_
#define QPROF_RUNTIME_CUDA_NCCL_COMMS_H_

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qprof::runtime::cuda {

// The NCCL entry points the CUDA backend uses, from the loaded library.
struct NcclApi {
  ncclResult_t (*comm_init_all)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*comm_destroy)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_abort)(ncclComm_t) = nullptr;
  ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t*) = nullptr;
  ncclResult_t (*all_reduce)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t,
                             ncclComm_t, cudaStream_t) = nullptr;
  const char* (*get_error_string)(ncclResult_t) = nullptr;
  int version = 0;    // ncclGetVersion, e.g. 22809
  std::string path;   // the file that was opened
};

// Opens NCCL once per process (thread-safe; the handle stays open for the life of the
// process, like any loaded library) and returns its entry points, or FailedPrecondition
// listing every place tried and how to point at the library (QPROF_NCCL_LIBRARY).
absl::StatusOr<const NcclApi*> LoadNccl();

// ncclResult_t -> Status ("<what>: <NCCL error string>"); FailedPrecondition for system
// and usage errors, Internal otherwise.
absl::Status NcclStatus(const NcclApi& api, ncclResult_t r, const char* what);

// One communicator per rank of this process. Rank r's communicator is used, polled and
// aborted only from rank r's own thread (runtime/cuda/host/rank_group.h); after an abort
// it is gone and every later use returns FailedPrecondition instead of touching freed
// NCCL state.
class NcclComms {
 public:
  // devices[r] is rank r's GPU (distinct GPUs: NCCL refuses two ranks on one device).
  static absl::StatusOr<std::unique_ptr<NcclComms>> Create(const NcclApi* api,
                                                           const std::vector<int>& devices);
  ~NcclComms();  // destroys the communicators that were not aborted

  int size() const { return static_cast<int>(comms_.size()); }
  // In-place FP32 sum of `n` values over the ranks, enqueued on `stream`.
  absl::Status AllReduceSum(int rank, float* buf, size_t n, cudaStream_t stream);
  // ncclCommGetAsyncError of rank's communicator as a status.
  absl::Status AsyncError(int rank);
  // ncclCommAbort of rank's communicator (idempotent).
  void Abort(int rank);

 private:
  NcclComms() = default;
  const NcclApi* api_ = nullptr;
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;  // null once aborted
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_NCCL_COMMS_H_
