// The host threads of a tensor-parallel run (qprof run --backend cuda --tp N) and what
// happens when one rank fails or a collective hangs. Plain C++ (no CUDA, no NCCL), so the
// failure paths are tested on any machine (tests/runtime/rank_group_test.cc); the CUDA
// backend plugs NCCL in through RankHooks (runtime/cuda/tp_ranks.cc).
//
// Why it looks like this (NCCL's documented error handling, applied to one process with
// one thread per GPU):
//  - A collective that waits for a peer never returns an error by itself: a rank whose
//    peer failed before its all-reduce, or a peer that silently hangs, keeps the GPU
//    kernel spinning. So no rank ever blocks in cudaStreamSynchronize: it polls
//    (cudaStreamQuery) and calls Waiter::Poll() between polls. Poll() fails when this
//    rank's communicator reports an asynchronous error (ncclCommGetAsyncError), when
//    another rank has failed, or when the step passed its deadline.
//  - A communicator is aborted only by the thread that drives it (ncclCommAbort from a
//    second thread while the owner is inside an NCCL call is a race): when a rank's work
//    fails, its own worker thread calls its abort hook.
//  - Once any rank has aborted, the group is spent: every later Run returns
//    FailedPrecondition naming the first failure (the communicators are gone, a decoder
//    holding one must never call NCCL again).
//  - If a worker does not come back at all (stuck in a host call that never polls), Run
//    returns DeadlineExceeded after the deadline plus a grace period and the group is
//    wedged: the destructor detaches the stuck thread instead of joining it, and the
//    owner must not free what that thread may still touch (TpRanks leaks its decoders).
//
// Threads: one worker per rank for the life of the group, so CUDA's per-thread state
// (current device, capture mode) and NVTX ranges stay with the rank. Run() is called from
// one thread at a time.
#ifndef QPROF_RUNTIME_CUDA_HOST_RANK_GROUP_H_
#define QPROF_RUNTIME_CUDA_HOST_RANK_GROUP_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace qprof::runtime::cuda {

struct RankGroupOptions {
  // A step that has not finished on every rank by then is abandoned (every rank aborts).
  // The first step of a run loads modules and connects NCCL: keep this in seconds.
  std::chrono::milliseconds step_timeout{60000};
  // Extra time the caller waits for workers after the deadline before declaring the group
  // wedged (a worker that never polls).
  std::chrono::milliseconds wedge_grace{10000};
};

class RankGroup {
 public:
  // Called only on rank r's own worker thread.
  struct RankHooks {
    std::function<absl::Status()> async_error;  // non-OK: the communicator failed; may be empty
    std::function<void()> abort;                // abort this rank's communicator; may be empty
  };

  // What a rank's work sees of the group.
  class Waiter {
   public:
    // OK to keep waiting. Otherwise the reason to give up now: this rank's asynchronous
    // error, a peer's failure (Aborted), or the step deadline (DeadlineExceeded).
    virtual absl::Status Poll() = 0;
    virtual int rank() const = 0;

   protected:
    ~Waiter() = default;
  };

  using Work = std::function<absl::Status(int rank, Waiter& waiter)>;

  RankGroup(int ranks, RankGroupOptions options);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  int size() const;
  void SetHooks(int rank, RankHooks hooks);

  // Runs `work` on every rank's worker at once and waits for all of them. OK when every
  // rank returned OK. Otherwise the first failure, prefixed "tp rank R: " (a rank that
  // gave up because of another rank's failure is not the first failure), and every rank
  // has aborted its communicator on its own thread. `what` names the work in errors
  // ("step 3"). `timeout` > 0 replaces options.step_timeout for this work (the setup
  // uploads weights, far longer than a step).
  absl::Status Run(const std::string& what, const Work& work,
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  bool aborted() const;  // some rank aborted: no collective can run again
  bool wedged() const;   // a worker never came back: it is detached at destruction

  struct State;  // internal (rank_group.cc)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_HOST_RANK_GROUP_H_
