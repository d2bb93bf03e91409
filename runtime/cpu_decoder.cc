#include "runtime/cpu_decoder.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/mla/mla_cpu.h"
#include "kernels/moe/moe_cpu.h"
#include "kernels/registry/registry.h"
#include "proto/vocabulary.h"
#include "runtime/prompt_cache.h"

namespace qprof::runtime {
namespace {

int64_t ShapeOf(const StepLaunch& l, const char* key) {
  auto it = l.shape.find(key);
  return it == l.shape.end() ? -1 : it->second;
}

// The description and the weights must agree on a projection's [n, k].
absl::Status CheckGemm(const StepLaunch& l, const Bf16Tensor& w) {
  if (ShapeOf(l, "n") == w.rows && ShapeOf(l, "k") == w.cols) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("decode step ", StepOpName(l.op), ": described n ",
                                          ShapeOf(l, "n"), " k ", ShapeOf(l, "k"),
                                          ", weights [", w.rows, ", ", w.cols, "]"));
}

kernels::DenseGemmParams GemmParams(int m, const Bf16Tensor& w, const float* x, float* y,
                                    bool accumulate, kernels::ThreadPool* pool) {
  kernels::DenseGemmParams p;
  p.m = m;
  p.n = static_cast<int>(w.rows);
  p.k = static_cast<int>(w.cols);
  p.x = x;
  p.w = w.data.data();
  p.y = y;
  p.accumulate = accumulate;
  p.pool = pool;
  return p;
}

kernels::RmsNormParams NormParams(int rows, int cols, int stride, const Bf16Tensor& w,
                                  const float* x, float* out, float eps) {
  kernels::RmsNormParams p;
  p.rows = rows;
  p.cols = cols;
  p.x_stride = stride;
  p.out_stride = stride;
  p.eps = eps;
  p.x = x;
  p.weight = w.data.data();
  p.out = out;
  return p;
}

}  // namespace

CpuDecoder::CpuDecoder(const ModelWeights& weights, DecoderOptions options,
                       kernels::ThreadPool* pool)
    : w_(weights), c_(weights.arch), o_(std::move(options)), pool_(pool) {
  const kernels::KernelInfo* moe = kernels::KernelRegistry::Global().Find(o_.moe_kernel_id);
  moe_cpu_kernel_ = moe == nullptr || moe->cpu_stand_in.empty() ? o_.moe_kernel_id
                                                                 : moe->cpu_stand_in;
  const kernels::KernelInfo* cpu = kernels::KernelRegistry::Global().Find(moe_cpu_kernel_);
  moe_grouped_ = cpu != nullptr && cpu->family == "moe.grouped";
}

size_t CpuDecoder::cache_bytes() const {
  size_t n = 0;
  for (const auto& v : kv_) n += v.size() * 2;
  for (const auto& v : ikey_) n += v.size() * 2;
  return n;
}

absl::Status CpuDecoder::Init() {
  const kernels::KernelInfo* moe = kernels::KernelRegistry::Global().Find(o_.moe_kernel_id);
  if (moe == nullptr || !moe->has_cpu || moe->role != role::kMoeExperts) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoder: '", o_.moe_kernel_id, "' is not a MoE variant the CPU can run"));
  }
  batch_ = static_cast<int>(o_.context_lengths.size());
  if (batch_ < 1) return absl::InvalidArgumentError("decoder: empty batch");
  int max_len = *std::max_element(o_.context_lengths.begin(), o_.context_lengths.end());
  stride_ = max_len + std::max(o_.max_steps, 1);
  out_topk_ = std::min(stride_, c_.index_topk + c_.window);
  const int B = batch_, D = c_.dim, dqk = c_.d_qk(), Di = c_.index_head_dim;
  kv_.assign(w_.layers, {});
  ikey_.assign(w_.layers, {});
  for (int l = 0; l < w_.layers; ++l) {
    FillPromptCache(o_.seed, l, o_.context_lengths, stride_, dqk, Di, &kv_[l], &ikey_[l]);
  }
  base_lens_.assign(o_.context_lengths.begin(), o_.context_lengths.end());
  lens_ = base_lens_;
  const int H = c_.n_heads, E = c_.n_routed_experts, k = c_.n_activated_experts;
  x_.assign(size_t(B) * D, 0);
  h_.assign(size_t(B) * D, 0);
  qa_.assign(size_t(B) * c_.q_lora_rank, 0);
  q_.assign(size_t(B) * H * dqk, 0);
  kv_new_.assign(size_t(B) * dqk, 0);
  iq_.assign(size_t(B) * c_.index_n_heads * Di, 0);
  ik_.assign(size_t(B) * Di, 0);
  iw_.assign(size_t(B) * c_.index_n_heads, 0);
  attn_.assign(size_t(B) * H * c_.kv_lora_rank, 0);
  oa_.assign(size_t(B) * c_.o_lora_rank, 0);
  router_.assign(size_t(B) * E, 0);
  scores_.assign(size_t(B) * stride_, 0);
  positions_.assign(B, 0);
  indices_.assign(size_t(B) * out_topk_, -1);
  topk_ids_.assign(size_t(B) * k, 0);
  topk_w_.assign(size_t(B) * k, 0);
  shared_ids_.assign(B, 0);
  shared_w_.assign(B, 1.0f);
  slot_hidden_.assign(size_t(B) * std::max(k * c_.moe_inter_dim,
                                           c_.moe_inter_dim * std::max(1, c_.n_shared_experts)),
                      0);
  return absl::OkStatus();
}

void CpuDecoder::Record(profiler::HostCollector* col, const std::string& id,
                        const std::map<std::string, int64_t>& shape, int64_t t0, int64_t t1,
                        const std::string& cpu_kernel) {
  if (col == nullptr) return;
  const kernels::KernelInfo* info = kernels::KernelRegistry::Global().Find(id);
  profiler::HostKernelCall call;
  call.kernel_id = id;
  call.name = info && !info->cuda_kernel_name.empty() ? info->cuda_kernel_name : id;
  if (info) {
    call.attribution.set_role(info->role);
    call.attribution.set_pipe_class(info->gpu_pipe_class);
    call.attribution.set_format(info->format);
    call.attribution.set_evidence(std::string(evidence::kRegistry));
    call.attribution.set_evidence_detail(
        absl::StrCat("registry ", id, ": ", info->gpu_pipe_class, " on a GPU"));
    if (info->work) call.work = info->work(shape);
  }
  for (const auto& [k, v] : shape) call.args[k] = absl::StrCat(v);
  if (!cpu_kernel.empty()) call.args["cpu_kernel"] = cpu_kernel;
  col->RecordKernel(t0, t1, std::move(call));
}

StepDims CpuDecoder::Dims() const {
  StepDims d;
  d.batch = batch_;
  d.layers = w_.layers;
  d.moe_id = o_.moe_kernel_id;
  d.mla_id = o_.mla_kernel_id;
  d.slice = *MakeTpSlice(c_, w_.format, 1, 0);  // tp 1 is always valid for a valid model
  d.lens.assign(base_lens_.begin(), base_lens_.end());
  return d;
}

absl::Status CpuDecoder::Step(int step, const std::vector<int32_t>& tokens,
                              profiler::HostCollector* col, std::vector<float>* logits,
                              std::vector<int32_t>* next) {
  const int B = batch_;
  if (static_cast<int>(tokens.size()) != B) {
    return absl::InvalidArgumentError(
        absl::StrCat("decoder: ", tokens.size(), " tokens for batch ", B));
  }
  for (int b = 0; b < B; ++b) {
    if (base_lens_[b] >= stride_) {
      return absl::FailedPreconditionError("decoder: KV cache full (more steps than reserved)");
    }
    positions_[b] = base_lens_[b];  // position of the new token
  }
  logits->assign(size_t(B) * c_.vocab_size, 0);
  next->assign(B, 0);
  tokens_ = &tokens;
  logits_ = logits;
  next_ = next;
  profiler::ScopedHostRange r_step(col, absl::StrCat("step ", step));
  int depth = 0;  // ranges open below the step, closed on every way out
  struct CloseRanges {
    profiler::HostCollector* col;
    int* depth;
    ~CloseRanges() {
      for (; col != nullptr && *depth > 0; --*depth) col->PopRange();
    }
  } close{col, &depth};
  std::string open;
  for (const StepLaunch& l : DescribeDecodeStep(c_, Dims())) {
    SwitchRange(
        open, l.range,
        [&](const std::string& name) {
          if (col != nullptr) col->PushRange(name);
          ++depth;
        },
        [&] {
          if (col != nullptr) col->PopRange();
          --depth;
        });
    open = l.range;
    RETURN_IF_ERROR(Execute(l, col));
  }
  for (int b = 0; b < B; ++b) ++base_lens_[b];
  return absl::OkStatus();
}

absl::Status CpuDecoder::Execute(const StepLaunch& l, profiler::HostCollector* col) {
  const int B = batch_, D = c_.dim, V = c_.vocab_size;
  switch (l.op) {
    case StepOp::kEmbed:
      return Run(col, l.kernel_id, l.shape, [&] {
        return kernels::EmbeddingCpu({B, D, V, tokens_->data(), w_.embed.data.data(), x_.data()});
      });
    case StepOp::kAttnNorm:
    case StepOp::kQNorm:
    case StepOp::kKvNorm:
    case StepOp::kFfnNorm:
    case StepOp::kFinalNorm:
      return Norm(l, col);
    case StepOp::kWqA:
    case StepOp::kWqB:
    case StepOp::kWkvA:
    case StepOp::kWiQ:
    case StepOp::kWiK:
    case StepOp::kWiW:
    case StepOp::kWoA:
    case StepOp::kWoB:
    case StepOp::kLmHead:
      return Gemm(l, col);
    case StepOp::kRopeQ:
    case StepOp::kRopeK:
      return Rope(l, col);
    case StepOp::kKvAppend:
      return KvAppend(l, col);
    case StepOp::kIndexer:
      return Indexer(l, col);
    case StepOp::kSparseMla:
      return SparseMla(l, col);
    case StepOp::kRouter:
      return Router(l, col);
    case StepOp::kRoutedExperts:
    case StepOp::kSharedExpert:
      return Experts(l, col);
    case StepOp::kArgmax:
      return Run(col, l.kernel_id, l.shape,
                 [&] { return kernels::ArgmaxCpu({B, V, logits_->data(), next_->data()}); });
    case StepOp::kAllReduce:
    case StepOp::kLocalExpertIds:
      break;  // tensor parallel: the CPU backend runs tp 1 only
  }
  return absl::InternalError(
      absl::StrCat("the CPU decoder has no kernel for step op ", StepOpName(l.op)));
}

absl::Status CpuDecoder::Gemm(const StepLaunch& l, profiler::HostCollector* col) {
  const bool head = l.op == StepOp::kLmHead;
  const LayerWeights* L = head ? nullptr : &w_.layer[l.layer];
  const Bf16Tensor* w = nullptr;
  const float* in = h_.data();
  float* out = nullptr;
  bool acc = false;
  switch (l.op) {
    case StepOp::kWqA: w = &L->wq_a; out = qa_.data(); break;
    case StepOp::kWqB: w = &L->wq_b; in = qa_.data(); out = q_.data(); break;
    case StepOp::kWkvA: w = &L->wkv_a; out = kv_new_.data(); break;
    case StepOp::kWiQ: w = &L->wi_q; in = qa_.data(); out = iq_.data(); break;
    case StepOp::kWiK: w = &L->wi_k; out = ik_.data(); break;
    case StepOp::kWiW: w = &L->wi_w; out = iw_.data(); break;
    case StepOp::kWoA: w = &L->wo_a; in = attn_.data(); out = oa_.data(); break;
    case StepOp::kWoB: w = &L->wo_b; in = oa_.data(); out = x_.data(); acc = true; break;  // + residual
    case StepOp::kLmHead: w = &w_.lm_head; out = logits_->data(); break;
    default: return absl::InternalError(absl::StrCat("not a projection: ", StepOpName(l.op)));
  }
  RETURN_IF_ERROR(CheckGemm(l, *w));
  return Run(col, l.kernel_id, l.shape, [&] {
    return kernels::DenseGemmCpu(GemmParams(batch_, *w, in, out, acc, pool_));
  });
}

absl::Status CpuDecoder::Norm(const StepLaunch& l, profiler::HostCollector* col) {
  const int B = batch_, D = c_.dim, dqk = c_.d_qk(), dv = c_.kv_lora_rank;
  const float eps = c_.norm_eps;
  const LayerWeights* L = l.layer == kNoLayer ? nullptr : &w_.layer[l.layer];
  kernels::RmsNormParams p;
  switch (l.op) {
    case StepOp::kAttnNorm: p = NormParams(B, D, D, L->attn_norm, x_.data(), h_.data(), eps); break;
    case StepOp::kQNorm:
      p = NormParams(B, c_.q_lora_rank, c_.q_lora_rank, L->q_norm, qa_.data(), qa_.data(), eps);
      break;
    case StepOp::kKvNorm:
      p = NormParams(B, dv, dqk, L->kv_norm, kv_new_.data(), kv_new_.data(), eps);  // the latent part
      break;
    case StepOp::kFfnNorm: p = NormParams(B, D, D, L->ffn_norm, x_.data(), h_.data(), eps); break;
    case StepOp::kFinalNorm: p = NormParams(B, D, D, w_.final_norm, x_.data(), h_.data(), eps); break;
    default: return absl::InternalError(absl::StrCat("not a norm: ", StepOpName(l.op)));
  }
  if (ShapeOf(l, "cols") != p.cols) {
    return absl::InternalError(absl::StrCat("decode step ", StepOpName(l.op), ": described cols ",
                                            ShapeOf(l, "cols"), ", weights ", p.cols));
  }
  return Run(col, l.kernel_id, l.shape, [&] { return kernels::RmsNormCpu(p); });
}

}  // namespace qprof::runtime
