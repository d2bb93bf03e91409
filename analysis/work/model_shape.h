// The shape of a known model for work the trace's shapes cannot give alone: how many
// expert weights an MoE layer reads per call, at which bits per weight (`qprof analyze
// --model-shape CONFIG`, where CONFIG is a Hugging Face config.json).
//
// Read from the config (the text_config object of multimodal configs when present):
//   hidden_size                                                  -> hidden
//   moe_intermediate_size, else intermediate_size                -> expert intermediate size
//   n_routed_experts | num_local_experts | num_experts           -> routed experts E
//   num_experts_per_tok | experts_per_token | moe_topk           -> top-k
//   n_shared_experts (x moe_intermediate_size) or
//     shared_expert_intermediate_size (one shared expert)        -> shared experts
//   num_hidden_layers, model_type, architectures[0]              -> for the reports
//   quantization_config: quant_method "mxfp4" -> mxfp4; "modelopt" or "compressed-tensors"
//     naming NVFP4 -> nvfp4; "fp8" (or a float-quantized 8-bit scheme) -> fp8; none ->
//     torch_dtype (bfloat16 -> bf16, float16 -> fp16)         -> the experts' format
// For the linear layers of a graph replay modelled without a capture (layer_model.h):
//   num_attention_heads, num_key_value_heads (default: the heads), head_dim (default:
//   hidden / heads), intermediate_size (the dense MLP's; 0 for MoE-only models),
//   vocab_size, attention_bias                                     -> heads, kv_heads, ...
// and two qprof keys the config may carry: "tensor_parallel_size" (each GPU holds 1/tp of
// every expert's intermediate dimension; default 1) and "format" (overrides the format).
// Bits per weight come from format::BitsPerWeight (block scales included).
#ifndef QPROF_ANALYSIS_WORK_MODEL_SHAPE_H_
#define QPROF_ANALYSIS_WORK_MODEL_SHAPE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace qprof::work {

struct ModelShape {
  std::string name;              // architectures[0] or model_type
  std::string path;              // the file it came from
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t experts = 0;           // routed
  int64_t top_k = 0;
  int64_t moe_inter = 0;         // per expert (whole model, before tensor parallelism)
  int64_t shared_experts = 0;
  int64_t shared_inter = 0;      // per shared expert
  int64_t tp = 1;
  std::string format;            // "mxfp4", "nvfp4", "fp8", "bf16", "fp16"
  double bits_per_weight = 0;    // with block scales
  std::string format_source;     // "quantization_config.quant_method = mxfp4"
  // The dense layers (0 when the config does not say).
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  int64_t dense_inter = 0;       // the dense MLP's intermediate size (not the experts')
  int64_t vocab = 0;
  bool attention_bias = false;   // QKV and O projections carry a bias
  bool IsMoe() const { return experts > 0 && top_k > 0 && moe_inter > 0 && hidden > 0; }
};

// Whether a JSON document is a Hugging Face config (it has "hidden_size", "model_type" or
// "architectures", at the top or in "text_config").
bool LooksLikeHfConfig(const std::string& json);

absl::StatusOr<ModelShape> ParseHfConfig(const std::string& json, const std::string& path);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_MODEL_SHAPE_H_
