// A small fixed-size worker pool for the CPU kernels: ParallelFor splits [0, n) into
// chunks that the workers and the calling thread take from one atomic counter, so uneven
// chunks (experts with more tokens) balance themselves.
//
// A worker that is scheduled late never delays a call: the caller runs whatever chunks are
// left and waits only for workers that actually started.
//
// Contracts: `threads` counts the caller, so ThreadPool(2) starts one worker and never
// oversubscribes a 2-core machine. ParallelFor blocks until every chunk ran. Calls are
// serialised (one ParallelFor at a time); a ParallelFor issued from inside a chunk runs
// inline on that thread. fn must not throw.
#ifndef QPROF_KERNELS_COMMON_THREAD_POOL_H_
#define QPROF_KERNELS_COMMON_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace qprof::kernels {

class ThreadPool {
 public:
  // threads <= 0: std::thread::hardware_concurrency().
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) for consecutive chunks of at most `grain` items covering [0, n).
  void ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop();
  void RunChunks();

  std::vector<std::thread> workers_;
  std::mutex call_mu_;  // serialises ParallelFor calls; taken before mu_
  std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  uint64_t generation_ = 0;
  int busy_ = 0;         // workers running chunks of the current job
  bool job_open_ = false;  // workers may still join the current job
  bool stop_ = false;
  // The job of the current generation.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int64_t grain_ = 1;
  std::atomic<int64_t> next_{0};
};

// fn over [0, n) on `pool`, or inline on the calling thread when pool is null.
void ParallelFor(ThreadPool* pool, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_COMMON_THREAD_POOL_H_
