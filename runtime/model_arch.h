// Model configurations of the bundled decode runtime: a DeepSeek-style MoE with MLA
// attention over a latent KV cache, a sparse-attention indexer and FP4 experts.
//
// Presets: "tiny" (tests), "small" (CPU demo), "v4-flash" (published DeepSeek-V4-Flash
// shapes; route_scale and swiglu_limit are assumptions, marked in model_arch.cc). A
// JSON file with the same field names describes a custom model (see LoadModelArch).
//
// Weights per layer (y = W x, W [out, in]):
//   attention: wq_a [q_lora, dim], q_norm [q_lora], wq_b [heads*(kv_lora+rope), q_lora],
//              wkv_a [kv_lora+rope, dim], kv_norm [kv_lora],
//              wo_a [o_lora, heads*kv_lora], wo_b [dim, o_lora]
//   indexer:   wi_q [index_heads*index_dim, q_lora], wi_k [index_dim, dim],
//              wi_w [index_heads, dim]
//   MoE:       gate [experts, dim] (+ bias [experts]); routed experts W13 [2*inter, dim],
//              W2 [dim, inter]; shared expert of width shared_experts*inter
//   norms:     attn_norm [dim], ffn_norm [dim]
// plus embed [vocab, dim], final norm [dim], lm_head [vocab, dim].
// The output projection is a plain two-matrix low rank (wo_a, wo_b); V4's grouped output
// projection is not modelled.
#ifndef QPROF_RUNTIME_MODEL_ARCH_H_
#define QPROF_RUNTIME_MODEL_ARCH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace qprof::runtime {

struct ModelArch {
  std::string name;
  int vocab_size = 0;
  int dim = 0;
  int n_layers = 0;
  int n_heads = 0;
  int q_lora_rank = 0;
  int kv_lora_rank = 512;      // latent width = head_dim of attention in latent space
  int rope_dim = 64;
  int o_lora_rank = 0;
  int n_routed_experts = 0;
  int n_activated_experts = 0; // top-k
  int n_shared_experts = 1;
  int moe_inter_dim = 0;
  int index_n_heads = 0;
  int index_head_dim = 0;
  int index_topk = 0;
  int window = 0;              // most recent tokens always attended
  float route_scale = 1.0f;
  float swiglu_limit = 0.0f;   // <= 0: no clamp
  float norm_eps = 1e-6f;
  float rope_theta = 10000.0f;
  int max_seq_len = 0;

  int d_qk() const { return kv_lora_rank + rope_dim; }
};

// "tiny", "small", "v4-flash"; NotFound (listing the presets) otherwise.
absl::StatusOr<ModelArch> PresetArch(const std::string& name);

// A preset name, or a path to a JSON config file (an object with the field names above;
// unknown fields are refused, missing ones keep the defaults shown above, and the result
// is validated). Errors name the file.
absl::StatusOr<ModelArch> LoadModelArch(const std::string& name_or_path);
absl::StatusOr<ModelArch> ParseModelArchJson(const std::string& json,
                                                 const std::string& source);

// One InvalidArgument naming the first violated rule (e.g. "model small: moe_inter_dim 100
// is not a multiple of the mxfp4 block 32"). `format` "" checks against both formats.
absl::Status ValidateModelArch(const ModelArch& c, const std::string& format = "");

// The config as JSON (the same fields), for run metadata and `--model FILE` round trips.
std::string ModelArchToJson(const ModelArch& c);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_MODEL_ARCH_H_
