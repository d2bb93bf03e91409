#include "runtime/tp_shape.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/registry/registry.h"

namespace qprof::runtime {

absl::Status ValidateTensorParallel(const ModelArch& c, int tp) {
  if (tp < 1) return absl::InvalidArgumentError(absl::StrCat("--tp ", tp, " must be >= 1"));
  if (c.n_heads % tp != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--tp ", tp, ": n_heads ", c.n_heads,
                                                   " of model ", c.name,
                                                   " is not divisible by ", tp));
  }
  if (c.n_routed_experts % tp != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tp ", tp, ": n_routed_experts ", c.n_routed_experts, " of model ",
                     c.name, " is not divisible by ", tp));
  }
  return absl::OkStatus();
}

absl::Status CheckTpDevices(int tp, int visible_gpus) {
  if (tp > visible_gpus) {
    return absl::FailedPreconditionError(
        absl::StrCat("--tp ", tp, " needs ", tp, " GPUs, found ", visible_gpus));
  }
  return absl::OkStatus();
}

absl::StatusOr<TpSlice> MakeTpSlice(const ModelArch& c, kernels::Fp4Format format, int tp,
                                    int rank, int inter_multiple) {
  RETURN_IF_ERROR(ValidateTensorParallel(c, tp));
  if (rank < 0 || rank >= tp) {
    return absl::InvalidArgumentError(absl::StrCat("tp rank ", rank, " outside [0, ", tp, ")"));
  }
  TpSlice s;
  s.rank = rank;
  s.tp = tp;
  const int h = c.n_heads / tp, e = c.n_routed_experts / tp;
  s.head_begin = rank * h;
  s.head_end = s.head_begin + h;
  s.expert_begin = rank * e;
  s.expert_end = s.expert_begin + e;
  const int is = c.n_shared_experts > 0 ? c.n_shared_experts * c.moe_inter_dim : 0;
  const int granule = std::lcm(kernels::BlockSize(format), std::max(1, inter_multiple));
  s.shared_split = is % tp == 0 && (is / tp) % granule == 0;
  if (s.shared_split) {
    s.shared_inter_begin = rank * (is / tp);
    s.shared_inter_end = s.shared_inter_begin + is / tp;
  } else {
    s.shared_inter_end = rank == 0 ? is : 0;  // whole on rank 0, nothing elsewhere
  }
  return s;
}

int MoeInterGranule(const std::string& moe_id) {
  const kernels::KernelInfo* k = kernels::KernelRegistry::Global().Find(moe_id);
  if (k == nullptr) return 1;
  auto it = k->shape_multiples.find("inter");
  return it == k->shape_multiples.end() ? 1 : it->second;
}

}  // namespace qprof::runtime
