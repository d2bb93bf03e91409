#include "analysis/replay_layers.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/classify/name_rules.h"
#include "analysis/work/launch_work.h"

namespace qprof {
namespace {

using importers::LayerModel;
using importers::ModelLinear;

// Architectures whose router gate has a bias (the config does not say).
constexpr const char* kRouterBias[] = {"GptOssForCausalLM"};

// Kernels a name rule may put in moe.experts that are not the experts' GEMMs: Inductor's
// generated pointwise / reduction kernels around the MoE call (vLLM pads gpt-oss's hidden
// states in triton_poi_fused_constant_pad_nd_moe_forward_0).
constexpr const char* kNotExperts[] = {"triton_poi_", "triton_red_", "triton_per_"};

LayerModel::Kernel KernelKind(std::string_view name) {
  const classify::NameRuleMatch m = classify::MatchNameRules(name);
  if (m.role == "moe.experts") {
    for (const char* prefix : kNotExperts) {
      if (name.substr(0, std::string_view(prefix).size()) == prefix) return LayerModel::Kernel::kOther;
    }
    return work::IsHelperKernel(name) ? LayerModel::Kernel::kOther : LayerModel::Kernel::kMoe;
  }
  if (absl::StartsWith(m.role, "gemm") && m.pipe_class == "tensor" && !work::IsHelperKernel(name)) {
    return LayerModel::Kernel::kGemm;
  }
  return LayerModel::Kernel::kOther;
}

// The attention projections: fused QKV, or Q, K and V apart; then O.
std::vector<std::vector<ModelLinear>> Attention(const work::ModelShape& m) {
  const int64_t q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const bool b = m.attention_bias;
  const ModelLinear o{"self_attn.o_proj", m.hidden, q, ModelLinear::kRow, b};
  return {{{"self_attn.qkv_proj", q + 2 * kv, m.hidden, ModelLinear::kColumn, b}, o},
          {{"self_attn.q_proj", q, m.hidden, ModelLinear::kColumn, b},
           {"self_attn.k_proj", kv, m.hidden, ModelLinear::kColumn, b},
           {"self_attn.v_proj", kv, m.hidden, ModelLinear::kColumn, b},
           o}};
}

// A gated MLP of intermediate size `inter` named `prefix`: fused gate/up, or apart.
std::vector<std::vector<ModelLinear>> Mlp(const std::string& prefix, int64_t hidden, int64_t inter) {
  const ModelLinear down{prefix + ".down_proj", hidden, inter, ModelLinear::kRow, false};
  return {{{prefix + ".gate_up_proj", 2 * inter, hidden, ModelLinear::kColumn, false}, down},
          {{prefix + ".gate_proj", inter, hidden, ModelLinear::kColumn, false},
           {prefix + ".up_proj", inter, hidden, ModelLinear::kColumn, false},
           down}};
}

}  // namespace

absl::StatusOr<std::shared_ptr<const importers::LayerModel>> LayerModelFor(
    const work::ModelShape& m, uint32_t batch, uint32_t tp) {
  const auto missing = [&m](const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(
        m.path, ": no ", what, ": the GEMMs of graph replays without a capture cannot be "
                "modelled from it"));
  };
  if (m.layers <= 0) return missing("num_hidden_layers");
  if (m.heads <= 0 || m.head_dim <= 0) return missing("num_attention_heads (or head_dim)");
  if (m.experts == 0 && m.dense_inter <= 0) return missing("intermediate_size");
  auto out = std::make_shared<LayerModel>();
  out->source = absl::StrCat(m.path, " (", m.name, ")");
  out->layers = m.layers;
  out->hidden = m.hidden;
  out->experts = m.experts;
  out->batch = batch;
  out->tp = tp;
  out->dtype = m.format == "fp16" ? "c10::Half" : "c10::BFloat16";
  out->classify = KernelKind;
  if (m.vocab > 0) out->lm_head = {"lm_head", m.vocab, m.hidden, ModelLinear::kColumn, false};
  std::vector<std::vector<ModelLinear>> tails;  // what follows attention in a layer
  if (m.experts > 0) {
    bool bias = false;
    for (const char* a : kRouterBias) bias |= m.name == a;
    const ModelLinear router{"mlp.gate", m.experts, m.hidden, ModelLinear::kWhole, bias};
    std::vector<std::vector<ModelLinear>> shared = {{}};
    if (m.shared_experts > 0) shared = Mlp("mlp.shared_experts", m.hidden, m.shared_experts * m.shared_inter);
    for (const auto& s : shared) {
      std::vector<ModelLinear> t = {router};
      t.insert(t.end(), s.begin(), s.end());
      tails.push_back(std::move(t));
      tails.push_back(s);  // a router fused into the MoE kernels launches no GEMM
    }
  } else {
    tails = Mlp("mlp", m.hidden, m.dense_inter);
  }
  for (const auto& a : Attention(m)) {
    for (const auto& t : tails) {
      std::vector<ModelLinear> layout = a;
      layout.insert(layout.end(), t.begin(), t.end());
      out->layouts.push_back(std::move(layout));
    }
  }
  return std::shared_ptr<const LayerModel>(std::move(out));
}

}  // namespace qprof
