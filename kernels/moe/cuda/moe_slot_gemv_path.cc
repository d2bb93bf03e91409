// Host half of the slot GEMV path (moe_cuda.h): FP32 hidden state per slot, then the two
// GEMV kernels of the format (moe_slot_gemv_<fmt>.cu).
#include "base/status_macros.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"

namespace qprof::kernels::cuda {
namespace {

void Layout(const MoeParams& p, MoeWorkspaceCarver* c, MoeWorkspace* w) {
  w->hidden = c->Take<float>(static_cast<size_t>(p.tokens) * p.topk * p.inter);
}

absl::Status Launch(const MoeParams& p, const MoeWorkspace& w, cudaStream_t s) {
  return p.format == Fp4Format::kNvfp4 ? LaunchSlotGemvNvfp4(p, w.hidden, w.slot_out, s)
                                       : LaunchSlotGemvMxfp4(p, w.hidden, w.slot_out, s);
}

}  // namespace

const MoeCudaPath& SlotGemvPath() {
  static const MoeCudaPath path{"slot_gemv", 32, /*grouped=*/false, /*only_sm=*/0, Layout,
                                Launch};
  return path;
}

}  // namespace qprof::kernels::cuda
