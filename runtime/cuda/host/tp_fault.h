// A test-only fault switch for tensor-parallel runs: QPROF_TP_FAULT=RANK:STEP:KIND makes
// rank RANK misbehave at decode step STEP, so the failure paths of runtime/cuda/tp_ranks.cc
// (RankGroup: polling, aborts from the owning thread, the spent group) are exercised on
// real devices. KIND:
//   fail   the rank returns an error before launching anything (its peers then wait in
//          their first all-reduce for a rank that never comes);
//   hang   the rank launches nothing and reports nothing: it only polls until it is told
//          to give up (the silent hang that ncclCommGetAsyncError alone never reveals);
//   async  the rank's communicator reports an asynchronous error from that step on (as
//          ncclCommGetAsyncError would after a network or peer fault).
// Unset or empty: no fault. Plain C++ (tested in tests/runtime/rank_group_test.cc).
#ifndef QPROF_RUNTIME_CUDA_HOST_TP_FAULT_H_
#define QPROF_RUNTIME_CUDA_HOST_TP_FAULT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::runtime::cuda {

struct TpFault {
  enum class Kind { kNone, kFail, kHang, kAsync };
  Kind kind = Kind::kNone;
  int rank = -1;
  int step = -1;
  std::string spec;  // as given, for messages
  // True when this fault fires on `rank` at `step` (kAsync: from `step` on).
  bool Fires(Kind k, int r, int s) const {
    return kind == k && r == rank && (k == Kind::kAsync ? s >= step : s == step);
  }
};

// Parses "RANK:STEP:KIND"; InvalidArgument naming the variable for anything else, or for
// a rank outside [0, tp).
absl::StatusOr<TpFault> ParseTpFault(const std::string& spec, int tp);

// The diagnostic switches of a tensor-parallel run, from the environment:
//   QPROF_TP_DEVICES=0,0     rank r runs on the r-th listed GPU (default 0..tp-1); two ranks
//                            on one GPU need QPROF_TP_ALLREDUCE=host (NCCL refuses them)
//   QPROF_TP_ALLREDUCE=host  sum over ranks through the host (runtime/cuda/host_all_reduce.h)
//                            instead of NCCL: checks the tensor-parallel path on one GPU
//   QPROF_TP_TIMEOUT_S=60    a step not finished on every rank by then is abandoned
//   QPROF_TP_FAULT=R:S:KIND  the fault switch above
struct TpEnvironment {
  std::vector<int> devices;  // empty: 0..tp-1
  bool host_all_reduce = false;
  int timeout_ms = 60000;
  TpFault fault;
};

// `getenv` reads a variable (nullptr when unset); InvalidArgument naming the variable.
absl::StatusOr<TpEnvironment> ReadTpEnvironment(
    const std::function<const char*(const char*)>& getenv, int tp);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_HOST_TP_FAULT_H_
