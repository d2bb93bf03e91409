// The shapes of tensor parallelism (qprof run --tp N) without weights: which heads,
// routed experts and shared-expert columns rank r holds. The split itself and why it is
// this one: runtime/tp_partition.h. Weight-free so the decode plan (runtime/plan.cc)
// describes exactly what the CUDA runtime runs per rank.
#ifndef QPROF_RUNTIME_TP_SHAPE_H_
#define QPROF_RUNTIME_TP_SHAPE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/common/params.h"
#include "runtime/model_arch.h"

namespace qprof::runtime {

struct TpSlice {
  int rank = 0;
  int tp = 1;
  int head_begin = 0, head_end = 0;                  // query heads of this rank
  int expert_begin = 0, expert_end = 0;              // routed experts of this rank
  int shared_inter_begin = 0, shared_inter_end = 0;  // shared-expert columns (may be empty)
  bool shared_split = true;  // false: the shared expert runs whole on rank 0 only
  int heads() const { return head_end - head_begin; }
  int experts() const { return expert_end - expert_begin; }
  int shared_inter() const { return shared_inter_end - shared_inter_begin; }
};

// InvalidArgument naming the first problem: tp < 1, n_heads or n_routed_experts not
// divisible by tp (e.g. "--tp 3: n_heads 64 of model v4-flash is not divisible by 3").
absl::Status ValidateTensorParallel(const ModelArch& c, int tp);

// FailedPrecondition "--tp 8 needs 8 GPUs, found 1" when tp > visible_gpus.
absl::Status CheckTpDevices(int tp, int visible_gpus);

// Rank `rank`'s share (validates first). The shared expert is split when Is/tp is a
// multiple of both the format's scale block (32 MXFP4, 16 NVFP4) and `inter_multiple`
// (the expert kernel's granule of the intermediate width; 1 = no constraint).
absl::StatusOr<TpSlice> MakeTpSlice(const ModelArch& c, kernels::Fp4Format format, int tp,
                                    int rank, int inter_multiple = 1);

// Granule of the expert intermediate width a CUDA MoE variant takes (its registry entry's
// shape_multiples["inter"], the rule of kernels::cuda::CheckMoeCuda: 32 slot_gemv, 128
// fp4_mma, 256 w4a16_mma; 1 for an id without one); the shared expert is split only in
// multiples of it. CudaDecoder::Create probes the real check, so a drift here becomes a
// clear error, not a wrong result (and tests/kernels/cuda/moe_dispatch_test.cc holds the
// registry to the check).
int MoeInterGranule(const std::string& moe_id);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_TP_SHAPE_H_
