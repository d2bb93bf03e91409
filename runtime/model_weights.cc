#include "runtime/model_weights.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/thread_pool.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"

namespace qprof::runtime {
namespace {

using kernels::Fp4Format;

// Per-row magnitude spread of projections and experts: exp(0.3 * N(0,1)) spans about
// 0.4x..2.5x at 3 sigma.
constexpr float kRowSigma = 0.3f;
// Expert down projections are scaled so that one MoE block adds about a third of the
// residual stream's magnitude, as in trained pre-norm models where the residual dominates.
constexpr float kDownGain = 0.25f;

SynthSpec Linear(uint64_t seed, const std::string& name, int64_t n, int64_t k, float gain,
                 int outliers) {
  SynthSpec s;
  s.seed = seed;
  s.name = name;
  s.rows = n;
  s.cols = k;
  s.std = gain / std::sqrt(static_cast<float>(k));
  s.row_sigma = kRowSigma;
  s.outlier_channels = outliers;
  return s;
}

SynthSpec Norm(uint64_t seed, const std::string& name, int64_t n) {
  SynthSpec s;
  s.seed = seed;
  s.name = name;
  s.rows = 1;
  s.cols = n;
  s.std = 0.05f;
  s.mean = 1.0f;
  return s;
}

// A few outlier input channels per expert matrix: about one per 256 columns, at least 2.
int Outliers(int64_t k) { return static_cast<int>(std::max<int64_t>(2, k / 256)); }

absl::Status Bf16FromSpec(const SynthSpec& s, Bf16Tensor* t) {
  t->rows = s.rows;
  t->cols = s.cols;
  t->data.resize(static_cast<size_t>(s.rows * s.cols));
  std::vector<float> row(static_cast<size_t>(s.cols));
  for (int64_t r = 0; r < s.rows; ++r) {
    SynthRows(s, r, r + 1, row.data());
    kernels::FloatToBf16N(row.data(), s.cols, t->data.data() + r * s.cols);
  }
  return absl::OkStatus();
}

// Quantizes matrix `index` of a stack (already sized) from its synthetic spec.
absl::Status QuantizeInto(const SynthSpec& s, int64_t index, Fp4Stack* stack) {
  std::vector<float> w(static_cast<size_t>(s.rows * s.cols));
  SynthRows(s, 0, s.rows, w.data());
  const int64_t pk = s.rows * s.cols / 2;
  if (stack->format == Fp4Format::kMxfp4) {
    ASSIGN_OR_RETURN(fp4::Mxfp4Matrix m, fp4::QuantizeMxfp4(w.data(), s.rows, s.cols, s.name, 1));
    std::copy(m.packed.begin(), m.packed.end(), stack->packed.begin() + index * pk);
    std::copy(m.scales.begin(), m.scales.end(),
              stack->scales.begin() + index * static_cast<int64_t>(m.scales.size()));
  } else {
    // One weight_scale_2 for the whole [W1; W3] matrix: ModelOpt shares it between w1 and w3.
    ASSIGN_OR_RETURN(float amax, fp4::AbsMaxFinite(w.data(), s.rows * s.cols, s.name, 1));
    ASSIGN_OR_RETURN(fp4::Nvfp4Matrix m,
                     fp4::QuantizeNvfp4WithScale2(w.data(), s.rows, s.cols,
                                                  fp4::Nvfp4Scale2ForAmax(amax), s.name, 1));
    std::copy(m.packed.begin(), m.packed.end(), stack->packed.begin() + index * pk);
    std::copy(m.scales.begin(), m.scales.end(),
              stack->scales.begin() + index * static_cast<int64_t>(m.scales.size()));
    stack->scale2[index] = m.scale2;
  }
  return absl::OkStatus();
}

}  // namespace

Fp4Stack Fp4Stack::Zeros(Fp4Format format, int64_t count, int64_t rows, int64_t cols) {
  Fp4Stack s;
  s.format = format;
  s.count = count;
  s.rows = rows;
  s.cols = cols;
  s.packed.assign(static_cast<size_t>(count * rows * cols / 2), 0);
  s.scales.assign(static_cast<size_t>(count * rows * (cols / kernels::BlockSize(format))), 0);
  if (format == Fp4Format::kNvfp4) s.scale2.assign(static_cast<size_t>(count), 1.0f);
  return s;
}

void AllocateExperts(const ModelArch& c, Fp4Format format, LayerWeights* layer) {
  const int64_t E = c.n_routed_experts, I = c.moe_inter_dim, D = c.dim;
  const int64_t Is = I * c.n_shared_experts;
  layer->w13 = Fp4Stack::Zeros(format, E, 2 * I, D);
  layer->w2 = Fp4Stack::Zeros(format, E, D, I);
  if (c.n_shared_experts > 0) {
    layer->shared_w13 = Fp4Stack::Zeros(format, 1, 2 * Is, D);
    layer->shared_w2 = Fp4Stack::Zeros(format, 1, D, Is);
  }
}

size_t ModelWeights::expert_bytes() const {
  size_t n = 0;
  for (const LayerWeights& l : layer) {
    n += l.w13.bytes() + l.w2.bytes() + l.shared_w13.bytes() + l.shared_w2.bytes();
  }
  return n;
}

size_t ModelWeights::dense_bytes() const {
  size_t n = embed.bytes() + final_norm.bytes() + lm_head.bytes();
  for (const LayerWeights& l : layer) {
    for (const Bf16Tensor* t : {&l.attn_norm, &l.wq_a, &l.q_norm, &l.wq_b, &l.wkv_a,
                                &l.kv_norm, &l.wo_a, &l.wo_b, &l.wi_q, &l.wi_k, &l.wi_w,
                                &l.ffn_norm, &l.gate}) {
      n += t->bytes();
    }
  }
  return n;
}

absl::StatusOr<SynthSpec> WeightSpec(const ModelArch& c, uint64_t seed,
                                     const std::string& name) {
  const int64_t D = c.dim, H = c.n_heads, dqk = c.d_qk(), I = c.moe_inter_dim;
  const int64_t Is = int64_t{c.moe_inter_dim} * c.n_shared_experts;
  if (name == "embed") {
    SynthSpec s = Linear(seed, name, c.vocab_size, D, 1.0f, 0);
    s.std = 1.0f;
    return s;
  }
  if (name == "norm") return Norm(seed, name, D);
  // Logit spread of a few units: greedy choices are well separated but not trivial.
  if (name == "lm_head") return Linear(seed, name, c.vocab_size, D, 2.0f, 0);
  std::vector<std::string> parts = absl::StrSplit(name, '.');
  int layer = -1, expert = -1;
  if (parts.size() >= 3 && parts[0] == "layers" && absl::SimpleAtoi(parts[1], &layer) &&
      layer >= 0 && layer < c.n_layers) {
    std::string rest = name.substr(parts[0].size() + parts[1].size() + 2);
    if (rest == "attn_norm" || rest == "ffn_norm") return Norm(seed, name, D);
    if (rest == "attn.q_norm") return Norm(seed, name, c.q_lora_rank);
    if (rest == "attn.kv_norm") return Norm(seed, name, c.kv_lora_rank);
    if (rest == "attn.wq_a") return Linear(seed, name, c.q_lora_rank, D, 1.0f, 0);
    if (rest == "attn.wq_b") return Linear(seed, name, H * dqk, c.q_lora_rank, 1.0f, 0);
    if (rest == "attn.wkv_a") return Linear(seed, name, dqk, D, 1.0f, 0);
    if (rest == "attn.wo_a") return Linear(seed, name, c.o_lora_rank, H * c.kv_lora_rank, 1.0f, 0);
    if (rest == "attn.wo_b") return Linear(seed, name, D, c.o_lora_rank, 0.5f, 0);
    if (rest == "attn.wi_q") {
      return Linear(seed, name, int64_t{c.index_n_heads} * c.index_head_dim, c.q_lora_rank,
                    1.0f, 0);
    }
    if (rest == "attn.wi_k") return Linear(seed, name, c.index_head_dim, D, 1.0f, 0);
    if (rest == "attn.wi_w") return Linear(seed, name, c.index_n_heads, D, 1.0f, 0);
    if (rest == "ffn.gate") return Linear(seed, name, c.n_routed_experts, D, 2.0f, 0);
    if (rest == "ffn.shared.w13") return Linear(seed, name, 2 * Is, D, 1.0f, Outliers(D));
    if (rest == "ffn.shared.w2") return Linear(seed, name, D, Is, kDownGain, Outliers(Is));
    if (parts.size() == 6 && parts[2] == "ffn" && parts[3] == "experts" &&
        absl::SimpleAtoi(parts[4], &expert) && expert >= 0 && expert < c.n_routed_experts) {
      if (parts[5] == "w13") return Linear(seed, name, 2 * I, D, 1.0f, Outliers(D));
      if (parts[5] == "w2") return Linear(seed, name, D, I, kDownGain, Outliers(I));
    }
  }
  return absl::NotFoundError(absl::StrCat("no weight named '", name, "' in model ", c.name));
}

absl::StatusOr<ModelWeights> MakeSyntheticWeights(const ModelArch& c, Fp4Format format,
                                                  int layers, uint64_t seed,
                                                  kernels::ThreadPool* pool) {
  RETURN_IF_ERROR(ValidateModelArch(c, kernels::FormatName(format)));
  if (layers <= 0 || layers > c.n_layers) layers = c.n_layers;
  ModelWeights w;
  w.arch = c;
  w.format = format;
  w.layers = layers;
  w.source = absl::StrCat("synthetic seed ", seed);
  w.layer.resize(layers);
  const int64_t E = c.n_routed_experts;

  // Jobs: every BF16 tensor and every expert matrix, run on the pool.
  struct Job {
    std::string name;
    Bf16Tensor* bf16 = nullptr;
    Fp4Stack* stack = nullptr;
    int64_t index = 0;
  };
  std::vector<Job> jobs = {{"embed", &w.embed}, {"norm", &w.final_norm},
                           {"lm_head", &w.lm_head}};
  for (int l = 0; l < layers; ++l) {
    LayerWeights& L = w.layer[l];
    const std::string p = absl::StrCat("layers.", l, ".");
    for (auto [n, t] : std::vector<std::pair<const char*, Bf16Tensor*>>{
             {"attn_norm", &L.attn_norm}, {"attn.wq_a", &L.wq_a}, {"attn.q_norm", &L.q_norm},
             {"attn.wq_b", &L.wq_b}, {"attn.wkv_a", &L.wkv_a}, {"attn.kv_norm", &L.kv_norm},
             {"attn.wo_a", &L.wo_a}, {"attn.wo_b", &L.wo_b}, {"attn.wi_q", &L.wi_q},
             {"attn.wi_k", &L.wi_k}, {"attn.wi_w", &L.wi_w}, {"ffn_norm", &L.ffn_norm},
             {"ffn.gate", &L.gate}}) {
      jobs.push_back({p + n, t});
    }
    AllocateExperts(c, format, &L);
    for (int64_t e = 0; e < E; ++e) {
      jobs.push_back({absl::StrCat(p, "ffn.experts.", e, ".w13"), nullptr, &L.w13, e});
      jobs.push_back({absl::StrCat(p, "ffn.experts.", e, ".w2"), nullptr, &L.w2, e});
    }
    if (c.n_shared_experts > 0) {
      jobs.push_back({p + "ffn.shared.w13", nullptr, &L.shared_w13, 0});
      jobs.push_back({p + "ffn.shared.w2", nullptr, &L.shared_w2, 0});
    }
  }
  std::vector<absl::Status> status(jobs.size());
  kernels::ParallelFor(pool, static_cast<int64_t>(jobs.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      auto spec = WeightSpec(c, seed, jobs[i].name);
      if (!spec.ok()) {
        status[i] = spec.status();
        continue;
      }
      status[i] = jobs[i].bf16 ? Bf16FromSpec(*spec, jobs[i].bf16)
                               : QuantizeInto(*spec, jobs[i].index, jobs[i].stack);
    }
  });
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  return w;
}

}  // namespace qprof::runtime
