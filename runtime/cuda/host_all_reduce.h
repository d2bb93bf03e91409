// A host-staged all-reduce for tensor-parallel ranks that cannot use NCCL: several ranks
// on one GPU (NCCL refuses two ranks on one device), which is how the tensor-parallel
// path (head and expert slices, the expert-id remap, the shared-expert split, the
// residual on rank 0) is checked on a one-GPU machine: `QPROF_TP_DEVICES=0,0
// QPROF_TP_ALLREDUCE=host qprof run --backend cuda --tp 2` and cuda_tp_test. Each rank
// copies its buffer to the host, all ranks meet, every rank sums all buffers in rank
// order (so every rank gets bit-identical sums) and copies the sum back. Slow and not
// capturable into a CUDA graph: a check, not a deployment. Waits poll (RankGroup).
// Internal to runtime/cuda.
#ifndef QPROF_RUNTIME_CUDA_HOST_ALL_REDUCE_H_
#define QPROF_RUNTIME_CUDA_HOST_ALL_REDUCE_H_

#include <cuda_runtime_api.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "runtime/cuda/cuda_decoder.h"

namespace qprof::runtime::cuda {

class HostAllReduce {
 public:
  explicit HostAllReduce(int ranks);
  // Rank `rank`'s part: `n` floats of device memory on `stream`, summed in place.
  absl::Status Run(int rank, float* buf, size_t n, cudaStream_t stream, const PollFn& poll);
  // Releases every waiting rank with an error (the abort hook of a rank).
  void Abort();

 private:
  // Waits until all ranks reached this phase; polls while waiting.
  absl::Status Meet(const PollFn& poll);
  int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  uint64_t phase_ = 0;
  bool aborted_ = false;
  std::vector<std::vector<float>> parts_;  // [rank][n]
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_HOST_ALL_REDUCE_H_
