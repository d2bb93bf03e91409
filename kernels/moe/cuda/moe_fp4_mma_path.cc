// Host half of the native FP4 path (moe_cuda.h): group the slots by expert, then the
// format's kernels (moe_fp4_mma_<fmt>.cu: activations quantised to FP4, block-scaled MMA).
// sm_120 only: the kernels' bodies are compiled for sm_120a alone.
#include "base/status_macros.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"

namespace qprof::kernels::cuda {
namespace {

void Layout(const MoeParams& p, MoeWorkspaceCarver* c, MoeWorkspace* w) {
  const size_t slots = static_cast<size_t>(p.tokens) * p.topk;
  w->g.sorted_slots = c->Take<int32_t>(slots);
  w->g.expert_offsets = c->Take<int32_t>(p.experts + 1);
  w->g.active_experts = c->Take<int32_t>(p.experts);
  w->g.num_active = c->Take<int32_t>(1);
  const size_t kmax = p.dim > p.inter ? p.dim : p.inter;
  w->fp4.packed = c->Take<uint8_t>(slots * kmax / 2);
  w->fp4.scales = c->Take<uint8_t>(slots * kmax / 16);
  w->fp4.scale2 = c->Take<float>(slots);
  w->fp4.hidden = c->Take<float>(slots * p.inter);
}

absl::Status Launch(const MoeParams& p, const MoeWorkspace& w, cudaStream_t s) {
  RETURN_IF_ERROR(LaunchMoeAlign(p, *FindMoeGroupKernels("fp4_mma", p.format), w.g, s));
  return p.format == Fp4Format::kNvfp4 ? LaunchFp4MmaNvfp4(p, w.g, w.fp4, w.slot_out, s)
                                       : LaunchFp4MmaMxfp4(p, w.g, w.fp4, w.slot_out, s);
}

}  // namespace

const MoeCudaPath& Fp4MmaPath() {
  static const MoeCudaPath path{"fp4_mma", 128, /*grouped=*/true, /*only_sm=*/120, Layout,
                                Launch};
  return path;
}

}  // namespace qprof::kernels::cuda
