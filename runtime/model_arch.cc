#include "runtime/model_arch.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "simdjson.h"

namespace qprof::runtime {
namespace {

struct Field {
  const char* name;
  int* i = nullptr;
  float* f = nullptr;
};

std::vector<Field> Fields(ModelArch& c) {
  return {{"vocab_size", &c.vocab_size},
          {"dim", &c.dim},
          {"n_layers", &c.n_layers},
          {"n_heads", &c.n_heads},
          {"q_lora_rank", &c.q_lora_rank},
          {"kv_lora_rank", &c.kv_lora_rank},
          {"rope_dim", &c.rope_dim},
          {"o_lora_rank", &c.o_lora_rank},
          {"n_routed_experts", &c.n_routed_experts},
          {"n_activated_experts", &c.n_activated_experts},
          {"n_shared_experts", &c.n_shared_experts},
          {"moe_inter_dim", &c.moe_inter_dim},
          {"index_n_heads", &c.index_n_heads},
          {"index_head_dim", &c.index_head_dim},
          {"index_topk", &c.index_topk},
          {"window", &c.window},
          {"route_scale", nullptr, &c.route_scale},
          {"swiglu_limit", nullptr, &c.swiglu_limit},
          {"norm_eps", nullptr, &c.norm_eps},
          {"rope_theta", nullptr, &c.rope_theta},
          {"max_seq_len", &c.max_seq_len}};
}

ModelArch Tiny() {
  ModelArch c;
  c.name = "tiny";
  c.vocab_size = 512;
  c.dim = 128;
  c.n_layers = 2;
  c.n_heads = 4;
  c.q_lora_rank = 64;
  c.o_lora_rank = 64;
  c.n_routed_experts = 8;
  c.n_activated_experts = 2;
  c.moe_inter_dim = 64;
  c.index_n_heads = 4;
  c.index_head_dim = 32;
  c.index_topk = 16;
  c.window = 8;
  c.route_scale = 1.0f;
  c.swiglu_limit = 10.0f;
  c.max_seq_len = 4096;
  return c;
}

ModelArch Small() {
  ModelArch c;
  c.name = "small";
  c.vocab_size = 8192;
  c.dim = 1024;
  c.n_layers = 4;
  c.n_heads = 8;
  c.q_lora_rank = 256;
  c.o_lora_rank = 256;
  c.n_routed_experts = 32;
  c.n_activated_experts = 4;
  c.moe_inter_dim = 512;
  c.index_n_heads = 8;
  c.index_head_dim = 64;
  c.index_topk = 128;
  c.window = 32;
  c.route_scale = 1.0f;
  c.swiglu_limit = 10.0f;
  c.max_seq_len = 16384;
  return c;
}

// DeepSeek-V4-Flash published shapes (FACTS.md): dim 4096, 43 layers, 64 heads, head_dim
// 512 (the latent), rope 64, q_lora 1024, o_lora 1024, 256 routed experts top-6 + 1
// shared, moe_inter 2048, window 128, 64 index heads of 128, index_topk 512, vocab 129280.
// route_scale and swiglu_limit are assumptions (not in FACTS.md).
ModelArch V4Flash() {
  ModelArch c;
  c.name = "v4-flash";
  c.vocab_size = 129280;
  c.dim = 4096;
  c.n_layers = 43;
  c.n_heads = 64;
  c.q_lora_rank = 1024;
  c.kv_lora_rank = 512;
  c.rope_dim = 64;
  c.o_lora_rank = 1024;
  c.n_routed_experts = 256;
  c.n_activated_experts = 6;
  c.n_shared_experts = 1;
  c.moe_inter_dim = 2048;
  c.index_n_heads = 64;
  c.index_head_dim = 128;
  c.index_topk = 512;
  c.window = 128;
  c.route_scale = 1.5f;     // assumption
  c.swiglu_limit = 10.0f;   // assumption
  c.max_seq_len = 1 << 20;
  return c;
}

absl::Status Bad(const ModelArch& c, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("model ", c.name, ": ", what));
}

}  // namespace

absl::StatusOr<ModelArch> PresetArch(const std::string& name) {
  if (name == "tiny") return Tiny();
  if (name == "small") return Small();
  if (name == "v4-flash") return V4Flash();
  return absl::NotFoundError(
      absl::StrCat("unknown model preset '", name, "' (presets: tiny, small, v4-flash; or a "
                   "path to a JSON config file)"));
}

absl::Status ValidateModelArch(const ModelArch& c, const std::string& format) {
  ModelArch copy = c;
  for (const Field& f : Fields(copy)) {
    if (f.i && *f.i < 0) return Bad(c, absl::StrCat(f.name, " ", *f.i, " is negative"));
  }
  for (const char* name : {"vocab_size", "dim", "n_layers", "n_heads", "q_lora_rank",
                           "kv_lora_rank", "rope_dim", "o_lora_rank", "n_routed_experts",
                           "n_activated_experts", "moe_inter_dim", "index_n_heads",
                           "index_head_dim", "index_topk", "max_seq_len"}) {
    for (const Field& f : Fields(copy)) {
      if (f.name == std::string(name) && *f.i == 0) {
        return Bad(c, absl::StrCat(name, " must be positive"));
      }
    }
  }
  if (c.rope_dim % 2 != 0) return Bad(c, absl::StrCat("rope_dim ", c.rope_dim, " is odd"));
  if (c.n_activated_experts > c.n_routed_experts) {
    return Bad(c, absl::StrCat("n_activated_experts (top-k) ", c.n_activated_experts,
                               " exceeds n_routed_experts ", c.n_routed_experts));
  }
  if (c.n_shared_experts > 8) return Bad(c, "n_shared_experts above 8 is not supported");
  // Expert weights are FP4 with blocks along K: K = dim for W13 and moe_inter_dim for W2.
  std::vector<std::pair<std::string, int>> blocks;
  if (format.empty() || format == "mxfp4") blocks.push_back({"mxfp4", 32});
  if (format.empty() || format == "nvfp4") blocks.push_back({"nvfp4", 16});
  if (blocks.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown format '", format, "' (formats: mxfp4, nvfp4)"));
  }
  for (const auto& [fmt, block] : blocks) {
    if (c.dim % block != 0) {
      return Bad(c, absl::StrCat("dim ", c.dim, " is not a multiple of the ", fmt, " block ",
                                 block));
    }
    if (c.moe_inter_dim % block != 0) {
      return Bad(c, absl::StrCat("moe_inter_dim ", c.moe_inter_dim,
                                 " is not a multiple of the ", fmt, " block ", block));
    }
  }
  if (!(c.norm_eps > 0)) return Bad(c, "norm_eps must be positive");
  if (!(c.rope_theta > 0)) return Bad(c, "rope_theta must be positive");
  if (!(c.route_scale > 0)) return Bad(c, "route_scale must be positive");
  if (c.swiglu_limit != c.swiglu_limit) return Bad(c, "swiglu_limit is NaN");
  if (c.window > c.max_seq_len) return Bad(c, "window exceeds max_seq_len");
  return absl::OkStatus();
}

absl::StatusOr<ModelArch> ParseModelArchJson(const std::string& json,
                                                 const std::string& source) {
  ModelArch c;
  c.name = source;
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(json);
  simdjson::ondemand::document doc;
  simdjson::ondemand::object obj;
  if (parser.iterate(padded).get(doc) || doc.get_object().get(obj)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": not a JSON object (expected model config fields)"));
  }
  std::vector<Field> fields = Fields(c);
  for (auto field : obj) {
    std::string_view key_view;
    if (field.unescaped_key().get(key_view)) {
      return absl::InvalidArgumentError(absl::StrCat(source, ": malformed JSON key"));
    }
    std::string key(key_view);
    if (key == "name") {
      std::string_view v;
      if (field.value().get_string().get(v)) {
        return absl::InvalidArgumentError(absl::StrCat(source, ": field name: not a string"));
      }
      c.name = std::string(v);
      continue;
    }
    const Field* f = nullptr;
    for (const Field& cand : fields) {
      if (key == cand.name) f = &cand;
    }
    if (f == nullptr) {
      std::vector<std::string> names;
      for (const Field& cand : fields) names.push_back(cand.name);
      return absl::InvalidArgumentError(absl::StrCat(
          source, ": unknown field '", key, "' (known: name, ", absl::StrJoin(names, ", "),
          ")"));
    }
    double v;
    if (field.value().get_double().get(v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": field ", key, ": not a number"));
    }
    if (f->i) {
      if (v != static_cast<double>(static_cast<int64_t>(v)) || v > 2147483647.0 ||
          v < -2147483648.0) {
        return absl::InvalidArgumentError(
            absl::StrCat(source, ": field ", key, ": not a 32-bit integer"));
      }
      *f->i = static_cast<int>(v);
    } else {
      *f->f = static_cast<float>(v);
    }
  }
  RETURN_IF_ERROR(ValidateModelArch(c));
  return c;
}

absl::StatusOr<ModelArch> LoadModelArch(const std::string& name_or_path) {
  if (name_or_path == "tiny" || name_or_path == "small" || name_or_path == "v4-flash") {
    return PresetArch(name_or_path);
  }
  auto text = ReadFile(name_or_path);
  if (!text.ok()) {
    if (name_or_path.find('/') == std::string::npos &&
        name_or_path.find(".json") == std::string::npos) {
      return PresetArch(name_or_path);  // says which presets exist
    }
    return text.status();
  }
  return ParseModelArchJson(*text, name_or_path);
}

std::string ModelArchToJson(const ModelArch& c) {
  ModelArch copy = c;
  std::vector<std::string> parts;
  parts.push_back(absl::StrCat("\"name\": \"", c.name, "\""));
  for (const Field& f : Fields(copy)) {
    parts.push_back(f.i ? absl::StrCat("\"", f.name, "\": ", *f.i)
                        : absl::StrCat("\"", f.name, "\": ", *f.f));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

}  // namespace qprof::runtime
