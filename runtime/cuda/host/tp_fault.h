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

#include <string>

#include "absl/status/statusor.h"

namespace qprof::runtime {

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

// ParseTpFault(getenv("QPROF_TP_FAULT")), no fault when unset.
absl::StatusOr<TpFault> TpFaultFromEnv(int tp);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CUDA_HOST_TP_FAULT_H_
