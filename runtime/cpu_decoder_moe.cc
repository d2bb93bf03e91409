// The MoE operations of the CPU decoder: the router, the routed and shared experts (added
// to the residual), and the FP32 dense expert path of the reference model.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/thread_pool.h"
#include "kernels/moe/moe_cpu.h"
#include "runtime/cpu_decoder.h"
#include "runtime/synthetic.h"

namespace qprof::runtime {

absl::Status CpuDecoder::Router(const StepLaunch& l, profiler::HostCollector* col) {
  const LayerWeights& L = w_.layer[l.layer];
  const int B = batch_, E = c_.n_routed_experts, k = c_.n_activated_experts;
  return Run(col, l.kernel_id, l.shape, [&] {
    kernels::DenseGemmParams g;
    g.m = B;
    g.n = E;
    g.k = c_.dim;
    g.x = h_.data();
    g.w = L.gate.data.data();
    g.y = router_.data();
    g.pool = pool_;
    RETURN_IF_ERROR(kernels::DenseGemmCpu(g));
    kernels::RouterTopkParams r{B, E, k, c_.route_scale, router_.data(),
                                nullptr, topk_ids_.data(), topk_w_.data()};
    return kernels::RouterTopkCpu(r);
  });
}

absl::Status CpuDecoder::Experts(const StepLaunch& l, profiler::HostCollector* col) {
  const LayerWeights& L = w_.layer[l.layer];
  const bool shared = l.op == StepOp::kSharedExpert;
  const int B = batch_;
  kernels::MoeParams p;
  p.format = w_.format;
  p.tokens = B;
  p.dim = c_.dim;
  p.inter = shared ? c_.moe_inter_dim * c_.n_shared_experts : c_.moe_inter_dim;
  p.experts = shared ? 1 : c_.n_routed_experts;
  p.topk = shared ? 1 : c_.n_activated_experts;
  p.swiglu_limit = c_.swiglu_limit;
  p.x = h_.data();
  p.topk_ids = shared ? shared_ids_.data() : topk_ids_.data();
  p.topk_weights = shared ? shared_w_.data() : topk_w_.data();
  p.w13 = shared ? L.shared_w13.View() : L.w13.View();
  p.w2 = shared ? L.shared_w2.View() : L.w2.View();
  p.out = x_.data();  // residual add
  p.slot_hidden = slot_hidden_.data();
  p.pool = pool_;
  if (l.shape.at("experts") != p.experts || l.shape.at("inter") != p.inter) {
    return absl::InternalError(absl::StrCat(
        "decode step ", StepOpName(l.op), ": described ", l.shape.at("experts"), " experts of "
        "width ", l.shape.at("inter"), ", weights ", p.experts, " of width ", p.inter));
  }
  const std::string cpu_kernel = o_.dense_fp32_experts ? "dense_fp32_reference" : moe_cpu_kernel_;
  kernels::KernelShape shape = l.shape;  // with the experts this batch really hit
  shape["unique_experts"] = kernels::CountUniqueExperts(p.topk_ids, B, p.topk, p.experts);
  return Run(col, l.kernel_id, shape,
             [&] {
               if (o_.dense_fp32_experts) {
                 return DenseExperts(l.layer, shared, p.topk_ids, p.topk_weights, p.topk);
               }
               return moe_grouped_ ? kernels::MoeGroupedCpu(p) : kernels::MoeSlotGemvCpu(p);
             },
             cpu_kernel);
}

// FP32 experts from the unquantized synthetic weights: for each used expert, regenerate
// W13 [2I, D] and W2 [D, I], then two FP32 GEMMs over the expert's tokens.
absl::Status CpuDecoder::DenseExperts(int l, bool shared, const int32_t* ids, const float* wts,
                                      int topk) {
  const int B = batch_, D = c_.dim;
  const int I = shared ? c_.moe_inter_dim * c_.n_shared_experts : c_.moe_inter_dim;
  const int experts = shared ? 1 : c_.n_routed_experts;
  std::vector<float> w13, w2, xg, hg, g, y;
  for (int e = 0; e < experts; ++e) {
    std::vector<int> slots;
    for (int s = 0; s < B * topk; ++s) {
      if (ids[s] == e) slots.push_back(s);
    }
    if (slots.empty()) continue;
    const std::string base = shared ? absl::StrCat("layers.", l, ".ffn.shared.")
                                    : absl::StrCat("layers.", l, ".ffn.experts.", e, ".");
    ASSIGN_OR_RETURN(SynthSpec s13, WeightSpec(c_, o_.seed, base + "w13"));
    ASSIGN_OR_RETURN(SynthSpec s2, WeightSpec(c_, o_.seed, base + "w2"));
    w13.resize(size_t(2) * I * D);
    w2.resize(size_t(D) * I);
    kernels::ParallelFor(pool_, 2 * I, 64, [&](int64_t r0, int64_t r1) {
      SynthRows(s13, r0, r1, &w13[size_t(r0) * D]);
    });
    kernels::ParallelFor(pool_, D, 64, [&](int64_t r0, int64_t r1) {
      SynthRows(s2, r0, r1, &w2[size_t(r0) * I]);
    });
    const int n = static_cast<int>(slots.size());
    xg.resize(size_t(n) * D);
    for (int i = 0; i < n; ++i) {
      std::copy_n(&h_[size_t(slots[i] / topk) * D], D, &xg[size_t(i) * D]);
    }
    g.resize(size_t(n) * 2 * I);
    kernels::DenseGemmF32Cpu(n, 2 * I, D, xg.data(), w13.data(), g.data(), false, pool_);
    hg.resize(size_t(n) * I);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < I; ++j) {
        hg[size_t(i) * I + j] =
            kernels::SwiGlu(g[size_t(i) * 2 * I + j], g[size_t(i) * 2 * I + I + j], c_.swiglu_limit);
      }
    }
    y.resize(size_t(n) * D);
    kernels::DenseGemmF32Cpu(n, D, I, hg.data(), w2.data(), y.data(), false, pool_);
    for (int i = 0; i < n; ++i) {
      const int t = slots[i] / topk;
      const float wt = wts[slots[i]];
      for (int d = 0; d < D; ++d) x_[size_t(t) * D + d] += wt * y[size_t(i) * D + d];
    }
  }
  return absl::OkStatus();
}

}  // namespace qprof::runtime
