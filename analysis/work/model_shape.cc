#include "analysis/work/model_shape.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "proto/vocabulary.h"
#include "simdjson.h"

namespace qprof::work {
namespace {

namespace dom = simdjson::dom;

// The object the model's keys live in: text_config when present (multimodal configs).
dom::object ModelObject(dom::object root) {
  dom::object text;
  if (root["text_config"].get_object().get(text) == simdjson::SUCCESS) return text;
  return root;
}

std::optional<int64_t> IntOf(dom::object o, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    dom::element v;
    if (o[k].get(v) != simdjson::SUCCESS) continue;
    int64_t i = 0;
    if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
    double d = 0;
    if (v.get_double().get(d) == simdjson::SUCCESS && d == static_cast<double>(static_cast<int64_t>(d))) {
      return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}

std::string StringOf(dom::object o, std::string_view key) {
  std::string_view s;
  if (o[key].get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return "";
}

// The experts' format from quantization_config, else the checkpoint dtype.
void ReadFormat(dom::object root, dom::object model, ModelShape* m) {
  dom::object q;
  if (root["quantization_config"].get_object().get(q) == simdjson::SUCCESS ||
      model["quantization_config"].get_object().get(q) == simdjson::SUCCESS) {
    const std::string method = absl::AsciiStrToLower(StringOf(q, "quant_method"));
    const std::string algo = absl::AsciiStrToLower(StringOf(q, "quant_algo"));
    const std::string text = absl::AsciiStrToLower(simdjson::minify(q));
    if (method == "mxfp4" || absl::StrContains(text, "\"mxfp4\"")) {
      m->format = "mxfp4";
    } else if (algo == "nvfp4" || absl::StrContains(text, "nvfp4")) {
      m->format = "nvfp4";
    } else if (method == "fp8" || algo == "fp8" || absl::StrContains(text, "\"num_bits\":8")) {
      m->format = "fp8";
    }
    if (!m->format.empty()) {
      m->format_source = absl::StrCat("quantization_config", method.empty() ? "" : " (quant_method ",
                                      method, method.empty() ? "" : ")");
      return;
    }
  }
  const std::string dtype = absl::AsciiStrToLower(StringOf(model, "torch_dtype").empty()
                                                       ? StringOf(root, "torch_dtype")
                                                       : StringOf(model, "torch_dtype"));
  if (dtype == "bfloat16") m->format = "bf16";
  if (dtype == "float16") m->format = "fp16";
  if (dtype == "float32") m->format = "fp32";
  if (!m->format.empty()) m->format_source = absl::StrCat("torch_dtype ", dtype);
}

}  // namespace

bool LooksLikeHfConfig(const std::string& json) {
  dom::parser parser;
  dom::object root;
  if (parser.parse(json).get_object().get(root) != simdjson::SUCCESS) return false;
  dom::object o = ModelObject(root);
  for (std::string_view k : {"hidden_size", "model_type", "architectures"}) {
    dom::element v;
    if (o[k].get(v) == simdjson::SUCCESS || root[k].get(v) == simdjson::SUCCESS) return true;
  }
  return false;
}

absl::StatusOr<ModelShape> ParseHfConfig(const std::string& json, const std::string& path) {
  dom::parser parser;
  dom::object root;
  if (auto err = parser.parse(json).get_object().get(root); err != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a JSON object (", simdjson::error_message(err), ")"));
  }
  dom::object o = ModelObject(root);
  ModelShape m;
  m.path = path;
  dom::array arch;
  std::string_view first;
  if (o["architectures"].get_array().get(arch) == simdjson::SUCCESS && arch.size() > 0 &&
      arch.at(0).get_string().get(first) == simdjson::SUCCESS) {
    m.name = std::string(first);
  } else if (root["architectures"].get_array().get(arch) == simdjson::SUCCESS && arch.size() > 0 &&
             arch.at(0).get_string().get(first) == simdjson::SUCCESS) {
    m.name = std::string(first);
  } else {
    m.name = StringOf(o, "model_type");
  }
  m.hidden = IntOf(o, {"hidden_size", "d_model"}).value_or(0);
  m.layers = IntOf(o, {"num_hidden_layers", "n_layers"}).value_or(0);
  m.experts = IntOf(o, {"n_routed_experts", "num_local_experts", "num_experts"}).value_or(0);
  m.top_k = IntOf(o, {"num_experts_per_tok", "experts_per_token", "moe_topk"}).value_or(0);
  m.moe_inter = IntOf(o, {"moe_intermediate_size"}).value_or(0);
  if (m.moe_inter == 0 && m.experts > 0) m.moe_inter = IntOf(o, {"intermediate_size"}).value_or(0);
  m.shared_experts = IntOf(o, {"n_shared_experts", "num_shared_experts"}).value_or(0);
  m.shared_inter = m.moe_inter;
  if (auto s = IntOf(o, {"shared_expert_intermediate_size"}); s && *s > 0) {
    m.shared_experts = std::max<int64_t>(m.shared_experts, 1);
    m.shared_inter = *s;
  }
  m.tp = IntOf(root, {"tensor_parallel_size"}).value_or(1);
  m.heads = IntOf(o, {"num_attention_heads", "n_heads"}).value_or(0);
  m.kv_heads = IntOf(o, {"num_key_value_heads", "n_kv_heads"}).value_or(m.heads);
  m.head_dim = IntOf(o, {"head_dim"}).value_or(m.heads > 0 ? m.hidden / m.heads : 0);
  if (m.experts == 0 || IntOf(o, {"moe_intermediate_size"})) {
    m.dense_inter = IntOf(o, {"intermediate_size"}).value_or(0);
  }
  m.vocab = IntOf(o, {"vocab_size"}).value_or(0);
  bool bias = false;
  if (o["attention_bias"].get_bool().get(bias) == simdjson::SUCCESS) m.attention_bias = bias;
  ReadFormat(root, o, &m);
  if (std::string f = absl::AsciiStrToLower(StringOf(root, "format")); !f.empty()) {
    m.format = f;
    m.format_source = "\"format\" in the config";
  }
  for (const auto& [v, what] : {std::pair{m.hidden, "hidden_size"}, {m.experts, "experts"},
                                {m.top_k, "experts per token"}, {m.moe_inter, "intermediate size"},
                                {m.shared_experts, "shared experts"}, {m.layers, "layers"},
                                {m.heads, "attention heads"}, {m.kv_heads, "key/value heads"},
                                {m.head_dim, "head dim"}, {m.vocab, "vocab size"},
                                {m.dense_inter, "intermediate size"}}) {
    if (v < 0) return absl::InvalidArgumentError(absl::StrCat(path, ": negative ", what));
  }
  if (m.tp <= 0) return absl::InvalidArgumentError(absl::StrCat(path, ": tensor_parallel_size must be positive"));
  if (m.top_k > m.experts && m.experts > 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": more experts per token (", m.top_k,
                                                   ") than experts (", m.experts, ")"));
  }
  if (m.hidden <= 0) return absl::InvalidArgumentError(absl::StrCat(path, ": no hidden_size"));
  m.bits_per_weight = format::BitsPerWeight(m.format);
  if (m.format.empty() || m.bits_per_weight <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": the experts' format is not known (no quantization_config or torch_dtype qprof "
              "reads; add \"format\": \"mxfp4\" | \"nvfp4\" | \"fp8\" | \"bf16\")"));
  }
  return m;
}

}  // namespace qprof::work
