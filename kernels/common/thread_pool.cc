#include "kernels/common/thread_pool.h"

#include <algorithm>

namespace qprof::kernels {
namespace {
thread_local bool t_inside_pool = false;  // nested ParallelFor runs inline
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_work_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks() {
  t_inside_pool = true;
  for (;;) {
    int64_t begin = next_.fetch_add(grain_, std::memory_order_relaxed);
    if (begin >= n_) break;
    (*fn_)(begin, std::min(n_, begin + grain_));
  }
  t_inside_pool = false;
}

// A worker joins the current job only while it is open; the caller closes the job once
// every chunk has been claimed and then waits only for workers that joined. So a worker
// that the OS schedules late (a loaded machine) never delays the caller: the caller runs
// the remaining chunks itself.
void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_work_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (!job_open_) continue;
      ++busy_;
    }
    RunChunks();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_ == 0) cv_done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (workers_.empty() || t_inside_pool || n <= grain) {
    for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    return;
  }
  std::lock_guard<std::mutex> call(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    grain_ = grain;
    next_.store(0, std::memory_order_relaxed);
    busy_ = 0;
    job_open_ = true;
    ++generation_;
  }
  cv_work_.notify_all();
  RunChunks();
  std::unique_lock<std::mutex> lock(mu_);
  job_open_ = false;  // every chunk is claimed: late workers must not join
  cv_done_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
}

void ParallelFor(ThreadPool* pool, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (pool != nullptr) {
    pool->ParallelFor(n, grain, fn);
    return;
  }
  grain = std::max<int64_t>(1, grain);
  for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
}

}  // namespace qprof::kernels
