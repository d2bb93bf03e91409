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
#include "runtime/synthetic.h"

namespace qprof::runtime {
namespace {

using kernels::DenseGemmParams;
using kernels::RmsNormParams;

kernels::DenseGemmParams Gemm(int m, const Bf16Tensor& w, const float* x, float* y,
                              bool accumulate, kernels::ThreadPool* pool) {
  DenseGemmParams p;
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

RmsNormParams Norm(int rows, int cols, int stride, const Bf16Tensor& w, const float* x,
                   float* out, float eps) {
  RmsNormParams p;
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
    : w_(weights), c_(weights.arch), o_(std::move(options)), pool_(pool) {}

size_t CpuDecoder::cache_bytes() const {
  size_t n = 0;
  for (const auto& v : kv_) n += v.size() * 2;
  for (const auto& v : ikey_) n += v.size() * 2;
  return n;
}

absl::Status CpuDecoder::Init() {
  batch_ = static_cast<int>(o_.context_lengths.size());
  if (batch_ < 1) return absl::InvalidArgumentError("decoder: empty batch");
  int max_len = *std::max_element(o_.context_lengths.begin(), o_.context_lengths.end());
  stride_ = max_len + std::max(o_.max_steps, 1);
  out_topk_ = std::min(stride_, c_.index_topk + c_.window);
  const int B = batch_, D = c_.dim, dqk = c_.d_qk(), Di = c_.index_head_dim;
  kv_.assign(w_.layers, {});
  ikey_.assign(w_.layers, {});
  // Prompt rows: latent and rope parts ~N(0,1) like the normalised latents the model
  // writes; index keys likewise. Rows past the prompt stay zero until appended.
  std::vector<float> row(std::max(dqk, Di));
  for (int l = 0; l < w_.layers; ++l) {
    kv_[l].assign(static_cast<size_t>(B) * stride_ * dqk, 0);
    ikey_[l].assign(static_cast<size_t>(B) * stride_ * Di, 0);
    SynthSpec kvs{o_.seed, absl::StrCat("cache.layers.", l, ".kv"), int64_t{B} * stride_, dqk,
                  1.0f};
    SynthSpec iks{o_.seed, absl::StrCat("cache.layers.", l, ".index_k"),
                  int64_t{B} * stride_, Di, 1.0f};
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < o_.context_lengths[b]; ++t) {
        int64_t r = int64_t{b} * stride_ + t;
        SynthRows(kvs, r, r + 1, row.data());
        kernels::FloatToBf16N(row.data(), dqk, &kv_[l][r * dqk]);
        SynthRows(iks, r, r + 1, row.data());
        kernels::FloatToBf16N(row.data(), Di, &ikey_[l][r * Di]);
      }
    }
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

absl::Status CpuDecoder::Step(int step, const std::vector<int32_t>& tokens,
                              profiler::HostCollector* col, std::vector<float>* logits,
                              std::vector<int32_t>* next) {
  const int B = batch_, D = c_.dim;
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
  profiler::ScopedHostRange r_step(col, absl::StrCat("step ", step));
  {
    profiler::ScopedHostRange r(col, "embed");
    RETURN_IF_ERROR(Run(col, "embedding", {{"rows", B}, {"dim", D}, {"vocab", c_.vocab_size}},
                        [&] {
                          return kernels::EmbeddingCpu({B, D, c_.vocab_size, tokens.data(),
                                                        w_.embed.data.data(), x_.data()});
                        }));
  }
  for (int l = 0; l < w_.layers; ++l) {
    profiler::ScopedHostRange r_layer(col, absl::StrCat("layer ", l));
    {
      profiler::ScopedHostRange r(col, "attn");
      RETURN_IF_ERROR(Attention(l, col));
    }
    {
      profiler::ScopedHostRange r(col, "moe");
      RETURN_IF_ERROR(Moe(l, col));
    }
  }
  for (int b = 0; b < B; ++b) ++base_lens_[b];
  profiler::ScopedHostRange r(col, "head");
  logits->assign(size_t(B) * c_.vocab_size, 0);
  next->assign(B, 0);
  RETURN_IF_ERROR(Run(col, "norm.rmsnorm", {{"rows", B}, {"cols", D}}, [&] {
    return kernels::RmsNormCpu(Norm(B, D, D, w_.final_norm, x_.data(), h_.data(), c_.norm_eps));
  }));
  RETURN_IF_ERROR(Run(col, "gemm.lm_head", {{"m", B}, {"n", c_.vocab_size}, {"k", D}}, [&] {
    return kernels::DenseGemmCpu(Gemm(B, w_.lm_head, h_.data(), logits->data(), false, pool_));
  }));
  return Run(col, "sampling.argmax", {{"rows", B}, {"cols", c_.vocab_size}}, [&] {
    return kernels::ArgmaxCpu({B, c_.vocab_size, logits->data(), next->data()});
  });
}

absl::Status CpuDecoder::Attention(int l, profiler::HostCollector* col) {
  const LayerWeights& L = w_.layer[l];
  const int B = batch_, D = c_.dim, H = c_.n_heads, dqk = c_.d_qk(), dv = c_.kv_lora_rank;
  const int R = c_.rope_dim, Hi = c_.index_n_heads, Di = c_.index_head_dim;
  const float eps = c_.norm_eps;
  auto gemm = [&](const Bf16Tensor& w, const float* x, float* y, bool acc) {
    return Run(col, "gemm.dense", {{"m", B}, {"n", w.rows}, {"k", w.cols}},
               [&] { return kernels::DenseGemmCpu(Gemm(B, w, x, y, acc, pool_)); });
  };
  RETURN_IF_ERROR(Run(col, "norm.rmsnorm", {{"rows", B}, {"cols", D}}, [&] {
    return kernels::RmsNormCpu(Norm(B, D, D, L.attn_norm, x_.data(), h_.data(), eps));
  }));
  RETURN_IF_ERROR(gemm(L.wq_a, h_.data(), qa_.data(), false));
  RETURN_IF_ERROR(Run(col, "norm.rmsnorm", {{"rows", B}, {"cols", c_.q_lora_rank}}, [&] {
    return kernels::RmsNormCpu(
        Norm(B, c_.q_lora_rank, c_.q_lora_rank, L.q_norm, qa_.data(), qa_.data(), eps));
  }));
  RETURN_IF_ERROR(gemm(L.wq_b, qa_.data(), q_.data(), false));
  RETURN_IF_ERROR(gemm(L.wkv_a, h_.data(), kv_new_.data(), false));
  RETURN_IF_ERROR(Run(col, "norm.rmsnorm", {{"rows", B}, {"cols", dv}}, [&] {
    return kernels::RmsNormCpu(Norm(B, dv, dqk, L.kv_norm, kv_new_.data(), kv_new_.data(), eps));
  }));
  // Two calls like the CUDA backend's two launches: the query heads, then the latent key.
  RETURN_IF_ERROR(Run(col, "rope", {{"rows", B}, {"heads", H}, {"rope_dim", R}}, [&] {
    kernels::RopeParams rq{B, H, R, dqk, H * dqk, c_.rope_theta, positions_.data(),
                           q_.data() + dv};
    return kernels::RopeCpu(rq);
  }));
  RETURN_IF_ERROR(Run(col, "rope", {{"rows", B}, {"heads", 1}, {"rope_dim", R}}, [&] {
    kernels::RopeParams rk{B, 1, R, dqk, dqk, c_.rope_theta, positions_.data(),
                           kv_new_.data() + dv};
    return kernels::RopeCpu(rk);
  }));
  RETURN_IF_ERROR(gemm(L.wi_q, qa_.data(), iq_.data(), false));
  RETURN_IF_ERROR(gemm(L.wi_k, h_.data(), ik_.data(), false));
  RETURN_IF_ERROR(gemm(L.wi_w, h_.data(), iw_.data(), false));
  RETURN_IF_ERROR(Run(col, "attn.kv_append", {{"batch", B}, {"d_qk", dqk}, {"index_dim", Di}},
                      [&] {
                        for (int b = 0; b < B; ++b) {
                          int64_t r = int64_t{b} * stride_ + positions_[b];
                          kernels::FloatToBf16N(&kv_new_[size_t(b) * dqk], dqk,
                                                &kv_[l][r * dqk]);
                          kernels::FloatToBf16N(&ik_[size_t(b) * Di], Di, &ikey_[l][r * Di]);
                          lens_[b] = positions_[b] + 1;
                        }
                        return absl::OkStatus();
                      }));
  int64_t ctx = 0, sel_total = 0;
  for (int b = 0; b < B; ++b) ctx += lens_[b];
  std::vector<int32_t> counts(B);
  kernels::IndexerParams ip;
  ip.batch = B;
  ip.index_heads = Hi;
  ip.index_dim = Di;
  ip.index_topk = c_.index_topk;
  ip.window = c_.window;
  ip.kv_seq_stride = stride_;
  ip.out_topk = out_topk_;
  ip.q = iq_.data();
  ip.head_weights = iw_.data();
  ip.keys = ikey_[l].data();
  ip.seq_lens = lens_.data();
  ip.scores = scores_.data();
  ip.indices = indices_.data();
  ip.counts = counts.data();
  ip.pool = pool_;
  const int64_t t0 = profiler::HostNowNs();
  RETURN_IF_ERROR(kernels::IndexerTopkCpu(ip));
  const int64_t t1 = profiler::HostNowNs();
  for (int b = 0; b < B; ++b) sel_total += counts[b];
  const int64_t avg_ctx = (ctx + B / 2) / B, avg_sel = (sel_total + B / 2) / B;
  // The shape needs the selection size, known only after the call.
  Record(col, "attn.indexer",
         {{"batch", B}, {"context", avg_ctx}, {"index_heads", Hi}, {"index_dim", Di},
          {"selected", avg_sel}},
         t0, t1);
  kernels::SparseMlaParams mp;
  mp.batch = B;
  mp.heads = H;
  mp.d_v = dv;
  mp.d_qk = dqk;
  mp.topk = out_topk_;
  mp.kv_seq_stride = stride_;
  mp.softmax_scale = 1.0f / std::sqrt(static_cast<float>(dqk));
  mp.q = q_.data();
  mp.kv = kv_[l].data();
  mp.seq_lens = lens_.data();
  mp.indices = indices_.data();
  mp.out = attn_.data();
  mp.pool = pool_;
  RETURN_IF_ERROR(Run(col, o_.mla_kernel_id,
                      {{"batch", B}, {"heads", H}, {"selected", avg_sel}, {"d_qk", dqk},
                       {"d_v", dv}},
                      [&] { return kernels::SparseMlaDecodeCpu(mp); },
                      "sparse_mla_decode_cpu"));
  RETURN_IF_ERROR(gemm(L.wo_a, attn_.data(), oa_.data(), false));
  return gemm(L.wo_b, oa_.data(), x_.data(), /*acc=*/true);  // residual add
}

}  // namespace qprof::runtime
