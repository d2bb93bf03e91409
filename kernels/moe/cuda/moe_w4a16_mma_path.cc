// Host half of the W4A16 path (moe_cuda.h): group the slots by expert, permute the
// activations to BF16, then the two tensor-core GEMMs of the format (moe_w4a16_mma_<fmt>.cu).
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
  w->act = c->Take<uint16_t>(slots * p.dim);
  w->hidden_bf16 = c->Take<uint16_t>(slots * p.inter);
}

absl::Status Launch(const MoeParams& p, const MoeWorkspace& w, cudaStream_t s) {
  const MoeGroupKernels* group = FindMoeGroupKernels("w4a16_mma", p.format);
  RETURN_IF_ERROR(LaunchMoeAlign(p, *group, w.g, s));
  RETURN_IF_ERROR(LaunchMoePermuteBf16(p, *group, w.g, w.act, s));
  return p.format == Fp4Format::kNvfp4
             ? LaunchW4a16Nvfp4(p, w.g, w.act, w.hidden_bf16, w.slot_out, s)
             : LaunchW4a16Mxfp4(p, w.g, w.act, w.hidden_bf16, w.slot_out, s);
}

}  // namespace

const MoeCudaPath& W4a16MmaPath() {
  static const MoeCudaPath path{"w4a16_mma", 256, /*grouped=*/true, /*only_sm=*/0, Layout,
                                Launch};
  return path;
}

}  // namespace qprof::kernels::cuda
