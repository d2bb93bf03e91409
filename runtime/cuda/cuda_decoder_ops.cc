// The ops of the step description as CUDA launches (CudaDecoder::Impl::Execute), and the
// step body that walks the description under NVTX ranges.
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/cuda/common_cuda.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "runtime/cuda/cuda_decoder_impl.h"
#include "runtime/cuda/tp_ops.h"

namespace qprof::runtime::cuda {
namespace {

namespace kc = kernels::cuda;

int64_t ShapeOf(const StepLaunch& l, const char* key) {
  auto it = l.shape.find(key);
  return it == l.shape.end() ? -1 : it->second;
}

// The description and the uploaded weights must agree on a projection's [n, k].
absl::Status CheckGemm(const StepLaunch& l, const DevBf16& w) {
  if (ShapeOf(l, "n") == w.rows && ShapeOf(l, "k") == w.cols) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("decode step ", StepOpName(l.op), ": described n ",
                                          ShapeOf(l, "n"), " k ", ShapeOf(l, "k"),
                                          ", weights [", w.rows, ", ", w.cols, "]"));
}

}  // namespace

absl::Status CudaDecoder::Impl::Gemm(const StepLaunch& l) {
  const bool head = l.op == StepOp::kLmHead;
  const DevLayer* L = head ? nullptr : &m->layer(static_cast<int>(l.layer));
  const DevBf16* wt = nullptr;
  const float* in = h;
  float* out = nullptr;
  bool acc = false;
  switch (l.op) {
    case StepOp::kWqA: wt = &L->wq_a; out = qa; break;
    case StepOp::kWqB: wt = &L->wq_b; in = qa; out = q; break;
    case StepOp::kWkvA: wt = &L->wkv_a; out = kv_new; break;
    case StepOp::kWiQ: wt = &L->wi_q; in = qa; out = iq; break;
    case StepOp::kWiK: wt = &L->wi_k; out = ik; break;
    case StepOp::kWiW: wt = &L->wi_w; out = iw; break;
    case StepOp::kWoA: wt = &L->wo_a; in = attn; out = oa; break;
    // tp > 1: rank 0 adds its partial onto the residual, the others write theirs alone, so
    // the all-reduce that follows leaves x + sum of partials on every rank.
    case StepOp::kWoB: wt = &L->wo_b; in = oa; out = x; acc = o.tp.rank == 0; break;
    case StepOp::kLmHead: wt = &m->lm_head(); out = logits; break;
    default: return absl::InternalError(absl::StrCat("not a projection: ", StepOpName(l.op)));
  }
  RETURN_IF_ERROR(CheckGemm(l, *wt));
  kernels::DenseGemmParams p;
  p.m = B;
  p.n = wt->rows;
  p.k = wt->cols;
  p.x = in;
  p.w = wt->p;
  p.y = out;
  p.accumulate = acc;
  // The LM head launches the same body under its own name (its registry id).
  return head ? kc::LaunchLmHead(p, stream) : kc::LaunchDenseGemm(p, stream);
}

absl::Status CudaDecoder::Impl::Norm(const StepLaunch& l) {
  const DevLayer* L = l.layer == kNoLayer ? nullptr : &m->layer(static_cast<int>(l.layer));
  const int dqk = c.d_qk(), dv = c.kv_lora_rank;
  kernels::RmsNormParams p;
  p.rows = B;
  p.eps = c.norm_eps;
  auto set = [&p](int cols, int stride, const DevBf16& wt, const float* in, float* out) {
    p.cols = cols;
    p.x_stride = stride;
    p.out_stride = stride;
    p.weight = wt.p;
    p.x = in;
    p.out = out;
  };
  switch (l.op) {
    case StepOp::kAttnNorm: set(c.dim, c.dim, L->attn_norm, x, h); break;
    case StepOp::kQNorm: set(c.q_lora_rank, c.q_lora_rank, L->q_norm, qa, qa); break;
    case StepOp::kKvNorm: set(dv, dqk, L->kv_norm, kv_new, kv_new); break;  // the latent part
    case StepOp::kFfnNorm: set(c.dim, c.dim, L->ffn_norm, x, h); break;
    case StepOp::kFinalNorm: set(c.dim, c.dim, m->final_norm(), x, h); break;
    default: return absl::InternalError(absl::StrCat("not a norm: ", StepOpName(l.op)));
  }
  if (ShapeOf(l, "cols") != p.cols) {
    return absl::InternalError(absl::StrCat("decode step ", StepOpName(l.op), ": described cols ",
                                            ShapeOf(l, "cols"), ", decoder ", p.cols));
  }
  return kc::LaunchRmsNorm(p, stream);
}

absl::Status CudaDecoder::Impl::Router(const StepLaunch& l) {
  const DevLayer& L = m->layer(static_cast<int>(l.layer));
  kernels::DenseGemmParams g;
  g.m = B;
  g.n = L.gate.rows;
  g.k = L.gate.cols;
  g.x = h;
  g.w = L.gate.p;
  g.y = router;
  RETURN_IF_ERROR(kc::LaunchRouterGemm(g, stream));  // the gate, named as the router's
  kernels::RouterTopkParams r{B, c.n_routed_experts, c.n_activated_experts, c.route_scale,
                              router, nullptr, topk_ids, topk_w};
  return kc::LaunchRouterTopk(r, stream);
}

absl::Status CudaDecoder::Impl::LocalExpertIds() {
  // Residual on rank 0 only (see Gemm's kWoB); slots of other ranks' experts -> -1.
  if (o.tp.rank != 0) {
    QPROF_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(x, 0, sizeof(float) * B * c.dim, stream));
  }
  QPROF_CUDA_RETURN_IF_ERROR(LaunchLocalExpertIds(topk_ids, B * c.n_activated_experts,
                                                  o.tp.expert_begin, o.tp.expert_end,
                                                  local_ids, stream));
  return absl::OkStatus();
}

absl::Status CudaDecoder::Impl::AllReduceX() {
  if (!o.all_reduce) return absl::FailedPreconditionError("tp > 1 without an all-reduce");
  const PollFn none;
  return o.all_reduce(x, size_t(B) * c.dim, stream, poll != nullptr ? *poll : none);
}

absl::Status CudaDecoder::Impl::Execute(const StepLaunch& l) {
  const int dqk = c.d_qk(), dv = c.kv_lora_rank, R = c.rope_dim, H = slice.heads();
  const int layer = static_cast<int>(l.layer);
  switch (l.op) {
    case StepOp::kEmbed:
      return kc::LaunchEmbedding({B, c.dim, c.vocab_size, tokens, m->embed().p, x}, stream);
    case StepOp::kAttnNorm:
    case StepOp::kQNorm:
    case StepOp::kKvNorm:
    case StepOp::kFfnNorm:
    case StepOp::kFinalNorm:
      return Norm(l);
    case StepOp::kWqA:
    case StepOp::kWqB:
    case StepOp::kWkvA:
    case StepOp::kWiQ:
    case StepOp::kWiK:
    case StepOp::kWiW:
    case StepOp::kWoA:
    case StepOp::kWoB:
    case StepOp::kLmHead:
      return Gemm(l);
    case StepOp::kRopeQ:  // the query heads, then (kRopeK) the one latent key
      return kc::LaunchRope({B, H, R, dqk, H * dqk, c.rope_theta, positions, q + dv}, stream);
    case StepOp::kRopeK:
      return kc::LaunchRope({B, 1, R, dqk, dqk, c.rope_theta, positions, kv_new + dv}, stream);
    case StepOp::kKvAppend:
      return kc::LaunchKvAppend(kv_new, ik, positions, B, stride, dqk, c.index_head_dim,
                                kv[layer], ikey[layer], stream);
    case StepOp::kIndexer:
      return kc::LaunchIndexerTopk(Indexer(layer), stream);
    case StepOp::kSparseMla:
      return mla_tensor ? kc::LaunchSparseMlaMma(Mla(layer), mla_ws, mla_ws_bytes, stream)
                        : kc::LaunchSparseMlaSimt(Mla(layer), stream);
    case StepOp::kAllReduce:
      return AllReduceX();
    case StepOp::kRouter:
      return Router(l);
    case StepOp::kLocalExpertIds:
      return LocalExpertIds();
    case StepOp::kRoutedExperts:
    case StepOp::kSharedExpert:
      return kc::LaunchMoeCuda(Moe(m->layer(layer), l.op == StepOp::kSharedExpert), *path,
                               moe_ws, moe_ws_bytes, stream);
    case StepOp::kArgmax:
      return kc::LaunchArgmax({B, c.vocab_size, logits, next}, stream);
  }
  return absl::InternalError(absl::StrCat("no CUDA launch for step op ", StepOpName(l.op)));
}

absl::Status CudaDecoder::Impl::Body(StepRanges* ranges) {
  int depth = 0;  // ranges open below the step, closed on every way out
  struct CloseRanges {
    StepRanges* ranges;
    int* depth;
    ~CloseRanges() {
      for (; ranges != nullptr && *depth > 0; --*depth) ranges->Pop();
    }
  } close{ranges, &depth};
  std::string open;
  for (const StepLaunch& l : DescribeDecodeStep(c, Dims())) {
    SwitchRange(
        open, l.range,
        [&](const std::string& name) {
          if (ranges != nullptr) ranges->Push(name);
          ++depth;
        },
        [&] {
          if (ranges != nullptr) ranges->Pop();
          --depth;
        });
    open = l.range;
    RETURN_IF_ERROR(Execute(l));
  }
  return absl::OkStatus();
}

}  // namespace qprof::runtime::cuda
