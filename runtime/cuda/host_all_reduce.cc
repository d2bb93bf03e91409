#include "runtime/cuda/host_all_reduce.h"

#include <chrono>
#include <thread>

#include "base/status_macros.h"
#include "kernels/common/cuda/cuda_status.h"

namespace qprof::runtime::cuda {
namespace {

absl::Status WaitPolling(cudaStream_t s, const PollFn& poll) {
  for (;;) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return absl::OkStatus();
    if (e != cudaErrorNotReady) return kernels::cuda::CudaStatus(e, "cudaStreamQuery");
    if (poll) RETURN_IF_ERROR(poll());
    std::this_thread::yield();
  }
}

}  // namespace

HostAllReduce::HostAllReduce(int ranks) : n_(ranks), parts_(ranks) {}

absl::Status HostAllReduce::Meet(const PollFn& poll) {
  std::unique_lock<std::mutex> lock(mu_);
  if (aborted_) return absl::AbortedError("host all-reduce aborted");
  const uint64_t phase = phase_;
  if (++arrived_ == n_) {
    arrived_ = 0;
    ++phase_;
    cv_.notify_all();
    return absl::OkStatus();
  }
  while (phase_ == phase) {
    if (aborted_) return absl::AbortedError("host all-reduce aborted");
    cv_.wait_for(lock, std::chrono::milliseconds(1));
    if (phase_ != phase) break;
    if (poll) {
      lock.unlock();
      absl::Status s = poll();
      lock.lock();
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status HostAllReduce::Run(int rank, float* buf, size_t n, cudaStream_t stream,
                                const PollFn& poll) {
  std::vector<float>& mine = parts_[rank];
  mine.resize(n);
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(mine.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  RETURN_IF_ERROR(WaitPolling(stream, poll));
  RETURN_IF_ERROR(Meet(poll));  // every rank's part is on the host
  std::vector<float> sum(n, 0.0f);
  for (int r = 0; r < n_; ++r) {
    const std::vector<float>& p = parts_[r];
    for (size_t i = 0; i < n; ++i) sum[i] += p[i];
  }
  RETURN_IF_ERROR(Meet(poll));  // nobody overwrites a part before all have summed
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(buf, sum.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  return WaitPolling(stream, poll);
}

void HostAllReduce::Abort() {
  std::lock_guard<std::mutex> lock(mu_);
  aborted_ = true;
  cv_.notify_all();
}

}  // namespace qprof::runtime::cuda
