#include "runtime/cuda/host/rank_group.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace qprof::runtime::cuda {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

std::string Seconds(std::chrono::milliseconds ms) {
  return absl::StrCat(static_cast<double>(ms.count()) / 1000.0, " s");
}

}  // namespace

// Shared with the workers (each holds a reference), so a detached worker of a wedged group
// never touches freed memory of the group itself.
struct RankGroup::State {
  int n = 0;
  RankGroupOptions options;
  std::vector<RankHooks> hooks;
  std::vector<std::thread> threads;

  std::mutex mu;
  std::condition_variable work_cv, done_cv;
  uint64_t generation = 0;  // bumped per Run; workers run each generation once
  bool stop = false;
  Work work;
  std::string what;
  int done = 0;
  std::vector<char> busy;  // rank r is inside the work (guarded by mu)
  std::vector<char> comm_aborted;  // rank r's abort hook ran (written by rank r only)
  absl::Status first_failure;

  std::atomic<bool> failed{false};   // this Run: some rank failed
  std::atomic<int> failed_rank{-1};
  std::atomic<int64_t> deadline_ns{0};
  std::chrono::milliseconds limit{0};  // of the Run in progress (written before the workers start)
  std::atomic<bool> aborted{false};  // some communicator was aborted (ever)
  std::atomic<bool> wedged{false};
  absl::Status abort_cause;  // the failure that aborted the group (guarded by mu)
  int abort_rank = -1;

  void Worker(int r);
  // On rank r's own thread: abort its communicator once.
  void AbortOwn(int r) {
    if (comm_aborted[r]) return;
    comm_aborted[r] = 1;
    if (hooks[r].abort) hooks[r].abort();
    aborted.store(true, std::memory_order_release);
  }
};

namespace {

class WaiterImpl : public RankGroup::Waiter {
 public:
  WaiterImpl(RankGroup::State* s, int rank) : s_(s), rank_(rank) {}
  absl::Status Poll() override;
  int rank() const override { return rank_; }

 private:
  RankGroup::State* s_;
  int rank_;
};

}  // namespace

absl::Status WaiterImpl::Poll() {
  const RankGroup::RankHooks& h = s_->hooks[rank_];
  if (h.async_error) {
    absl::Status s = h.async_error();
    if (!s.ok()) return s;
  }
  if (s_->failed.load(std::memory_order_acquire)) {
    return absl::AbortedError(absl::StrCat("gave up waiting: tp rank ",
                                           s_->failed_rank.load(std::memory_order_acquire),
                                           " failed"));
  }
  if (NowNs() > s_->deadline_ns.load(std::memory_order_relaxed)) {
    return absl::DeadlineExceededError(absl::StrCat(
        "did not finish within ", Seconds(s_->limit),
        " (a collective waiting for a peer that never arrived, or a hung kernel)"));
  }
  return absl::OkStatus();
}

void RankGroup::State::Worker(int r) {
  uint64_t seen = 0;
  for (;;) {
    Work w;
    {
      std::unique_lock<std::mutex> lock(mu);
      work_cv.wait(lock, [&] { return stop || generation != seen; });
      if (stop) return;
      seen = generation;
      w = work;
      busy[r] = 1;
    }
    WaiterImpl waiter(this, r);
    absl::Status s = w(r, waiter);
    if (!s.ok()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.load(std::memory_order_relaxed)) {
          first_failure = s;
          failed_rank.store(r, std::memory_order_release);
          failed.store(true, std::memory_order_release);
        }
      }
      AbortOwn(r);
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      busy[r] = 0;
      ++done;
    }
    done_cv.notify_all();
  }
}

RankGroup::RankGroup(int ranks, RankGroupOptions options) : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.n = ranks;
  s.options = options;
  s.hooks.resize(ranks);
  s.busy.assign(ranks, 0);
  s.comm_aborted.assign(ranks, 0);
  s.threads.reserve(ranks);
  for (int r = 0; r < ranks; ++r) {
    std::shared_ptr<State> keep = state_;
    s.threads.emplace_back([keep, r] { keep->Worker(r); });
  }
}

RankGroup::~RankGroup() {
  State& s = *state_;
  std::vector<char> busy;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stop = true;
    busy = s.busy;
  }
  s.work_cv.notify_all();
  for (int r = 0; r < s.n; ++r) {
    // A worker still inside its work after a wedge cannot be joined; it keeps the state
    // alive through its own reference.
    if (busy[r]) {
      s.threads[r].detach();
    } else {
      s.threads[r].join();
    }
  }
}

int RankGroup::size() const { return state_->n; }

void RankGroup::SetHooks(int rank, RankHooks hooks) { state_->hooks[rank] = std::move(hooks); }

bool RankGroup::aborted() const { return state_->aborted.load(std::memory_order_acquire); }
bool RankGroup::wedged() const { return state_->wedged.load(std::memory_order_acquire); }

absl::Status RankGroup::Run(const std::string& what, const Work& work,
                            std::chrono::milliseconds timeout) {
  State& s = *state_;
  const std::chrono::milliseconds limit =
      timeout.count() > 0 ? timeout : s.options.step_timeout;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.wedged.load() || s.aborted.load()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "tensor-parallel ranks were aborted after an earlier failure (tp rank ", s.abort_rank,
          ": ", s.abort_cause.message(), "); this run cannot continue"));
    }
    s.work = work;
    s.what = what;
    s.done = 0;
    s.first_failure = absl::OkStatus();
    s.failed.store(false);
    s.failed_rank.store(-1);
    s.deadline_ns.store(NowNs() +
                        std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count());
    s.limit = limit;
    ++s.generation;
  }
  s.work_cv.notify_all();
  const auto give_up = Clock::now() + limit + s.options.wedge_grace;
  std::unique_lock<std::mutex> lock(s.mu);
  const bool all = s.done_cv.wait_until(lock, give_up, [&] { return s.done == s.n; });
  if (!all) {
    s.wedged.store(true);
    s.abort_rank = -1;
    s.abort_cause = absl::DeadlineExceededError(absl::StrCat(
        what, ": ", s.n - s.done, " rank(s) did not return within ",
        Seconds(limit + s.options.wedge_grace)));
    return absl::DeadlineExceededError(absl::StrCat(
        "tensor parallel: ", s.abort_cause.message(),
        " (stuck in a host call that never polls); this run cannot continue"));
  }
  s.work = nullptr;  // drop what the work captured
  if (!s.failed.load()) return absl::OkStatus();
  const int r = s.failed_rank.load();
  s.abort_rank = r;
  s.abort_cause = s.first_failure;
  // Ranks that finished this work before the failure still hold live communicators whose
  // peers are gone: each aborts its own, on its own thread, so the group is uniformly spent.
  State* raw = &s;
  s.work = [raw](int rank, Waiter&) {
    raw->AbortOwn(rank);
    return absl::OkStatus();
  };
  s.done = 0;
  ++s.generation;
  lock.unlock();
  s.work_cv.notify_all();
  lock.lock();
  s.done_cv.wait_until(lock, Clock::now() + s.options.wedge_grace, [&] { return s.done == s.n; });
  s.work = nullptr;
  return absl::Status(s.first_failure.code(),
                      absl::StrCat("tp rank ", r, ": ", what, ": ", s.first_failure.message(),
                                   " (communicators aborted on every rank)"));
}

}  // namespace qprof::runtime::cuda
