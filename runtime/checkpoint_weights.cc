// Model weights from a quantized checkpoint folder, and the export of synthetic weights as
// a BF16 safetensors file (the input `qprof quantize` turns into such a folder).
//
// Tensor names: "<WeightSpec name>.weight" (e.g. "layers.0.ffn.experts.3.w13.weight"),
// shapes [out, in]. Experts are read quantized (NVFP4 logical "X.weight", MXFP4 "X");
// a tensor stored unquantized is quantized here. Dense tensors are read as F32 (quantized
// ones dequantized) and rounded to BF16.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "runtime/model_weights.h"
#include "runtime/weights/checkpoint.h"
#include "runtime/weights/safetensors.h"

namespace qprof::runtime {
namespace {

using kernels::Fp4Format;

std::vector<std::pair<std::string, Bf16Tensor*>> DenseTensors(ModelWeights& w) {
  std::vector<std::pair<std::string, Bf16Tensor*>> out = {
      {"embed", &w.embed}, {"norm", &w.final_norm}, {"lm_head", &w.lm_head}};
  for (int l = 0; l < w.layers; ++l) {
    LayerWeights& L = w.layer[l];
    const std::string p = absl::StrCat("layers.", l, ".");
    for (auto [n, t] : std::vector<std::pair<const char*, Bf16Tensor*>>{
             {"attn_norm", &L.attn_norm}, {"attn.wq_a", &L.wq_a}, {"attn.q_norm", &L.q_norm},
             {"attn.wq_b", &L.wq_b}, {"attn.wkv_a", &L.wkv_a}, {"attn.kv_norm", &L.kv_norm},
             {"attn.wo_a", &L.wo_a}, {"attn.wo_b", &L.wo_b}, {"attn.wi_q", &L.wi_q},
             {"attn.wi_k", &L.wi_k}, {"attn.wi_w", &L.wi_w}, {"ffn_norm", &L.ffn_norm},
             {"ffn.gate", &L.gate}}) {
      out.push_back({p + n, t});
    }
  }
  return out;
}

absl::Status LoadDense(const weights::Checkpoint& ck, const ModelArch& c,
                       const std::string& name, Bf16Tensor* t) {
  ASSIGN_OR_RETURN(SynthSpec spec, WeightSpec(c, 0, name));
  const std::string stored = name + ".weight";
  auto values = ck.Dequantize(stored);
  if (!values.ok()) {
    return absl::NotFoundError(absl::StrCat(ck.dir(), ": tensor ", stored, " of model ", c.name,
                                            " is missing or unreadable (",
                                            values.status().message(), ")"));
  }
  if (static_cast<int64_t>(values->size()) != spec.rows * spec.cols) {
    return absl::InvalidArgumentError(absl::StrCat(ck.dir(), ": tensor ", stored, " has ",
                                                   values->size(), " elements, expected [",
                                                   spec.rows, ", ", spec.cols, "]"));
  }
  t->rows = spec.rows;
  t->cols = spec.cols;
  t->data.resize(values->size());
  kernels::FloatToBf16N(values->data(), static_cast<int64_t>(values->size()), t->data.data());
  return absl::OkStatus();
}

// Expert matrix `name` ([rows, cols]) into slot `index` of a stack.
absl::Status LoadExpert(const weights::Checkpoint& ck, const ModelArch& c,
                        const std::string& name, int64_t index, Fp4Stack* stack) {
  ASSIGN_OR_RETURN(SynthSpec spec, WeightSpec(c, 0, name));
  const std::string stored = name + ".weight";
  const std::string logical = stack->format == Fp4Format::kNvfp4 ? stored : name;
  auto check_shape = [&](int64_t rows, int64_t cols) -> absl::Status {
    if (rows != spec.rows || cols != spec.cols) {
      return absl::InvalidArgumentError(absl::StrCat(ck.dir(), ": tensor ", logical, " is [",
                                                     rows, ", ", cols, "], expected [",
                                                     spec.rows, ", ", spec.cols, "]"));
    }
    return absl::OkStatus();
  };
  std::vector<uint8_t> packed, scales;
  float scale2 = 1.0f;
  if (ck.IsQuantized(logical)) {
    if (stack->format == Fp4Format::kMxfp4) {
      ASSIGN_OR_RETURN(fp4::Mxfp4Matrix m, ck.LoadMxfp4(logical));
      RETURN_IF_ERROR(check_shape(m.rows, m.cols));
      packed = std::move(m.packed);
      scales = std::move(m.scales);
    } else {
      ASSIGN_OR_RETURN(fp4::Nvfp4Matrix m, ck.LoadNvfp4(logical));
      RETURN_IF_ERROR(check_shape(m.rows, m.cols));
      packed = std::move(m.packed);
      scales = std::move(m.scales);
      scale2 = m.scale2;
    }
  } else {
    auto values = ck.Dequantize(stored);
    if (!values.ok()) {
      return absl::NotFoundError(absl::StrCat(ck.dir(), ": expert tensor ", logical,
                                              " is missing (", values.status().message(), ")"));
    }
    if (static_cast<int64_t>(values->size()) != spec.rows * spec.cols) {
      return check_shape(static_cast<int64_t>(values->size()) / spec.cols, spec.cols);
    }
    if (stack->format == Fp4Format::kMxfp4) {
      ASSIGN_OR_RETURN(fp4::Mxfp4Matrix m,
                       fp4::QuantizeMxfp4(values->data(), spec.rows, spec.cols, stored, 1));
      packed = std::move(m.packed);
      scales = std::move(m.scales);
    } else {
      ASSIGN_OR_RETURN(fp4::Nvfp4Matrix m,
                       fp4::QuantizeNvfp4(values->data(), spec.rows, spec.cols, stored));
      packed = std::move(m.packed);
      scales = std::move(m.scales);
      scale2 = m.scale2;
    }
  }
  std::copy(packed.begin(), packed.end(),
            stack->packed.begin() + index * static_cast<int64_t>(packed.size()));
  std::copy(scales.begin(), scales.end(),
            stack->scales.begin() + index * static_cast<int64_t>(scales.size()));
  if (stack->format == Fp4Format::kNvfp4) stack->scale2[index] = scale2;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelWeights> LoadCheckpointWeights(const std::string& dir,
                                                   const ModelArch& c, Fp4Format format,
                                                   int layers) {
  RETURN_IF_ERROR(ValidateModelArch(c, kernels::FormatName(format)));
  ASSIGN_OR_RETURN(weights::Checkpoint ck, weights::Checkpoint::Open(dir));
  const weights::CheckpointFormat want = format == Fp4Format::kMxfp4
                                             ? weights::CheckpointFormat::kMxfp4
                                             : weights::CheckpointFormat::kNvfp4;
  if (ck.format() != want) {
    return absl::FailedPreconditionError(absl::StrCat(
        dir, ": checkpoint format is ", weights::CheckpointFormatName(ck.format()), " (from ",
        ck.format_source(), ") but --format ", kernels::FormatName(format), " was requested"));
  }
  if (layers <= 0 || layers > c.n_layers) layers = c.n_layers;
  ModelWeights w;
  w.arch = c;
  w.format = format;
  w.layers = layers;
  w.source = dir;
  w.layer.resize(layers);
  for (auto& [name, t] : DenseTensors(w)) RETURN_IF_ERROR(LoadDense(ck, c, name, t));
  const int64_t E = c.n_routed_experts;
  for (int l = 0; l < layers; ++l) {
    LayerWeights& L = w.layer[l];
    const std::string p = absl::StrCat("layers.", l, ".ffn.");
    AllocateExperts(c, format, &L);
    for (int64_t e = 0; e < E; ++e) {
      RETURN_IF_ERROR(LoadExpert(ck, c, absl::StrCat(p, "experts.", e, ".w13"), e, &L.w13));
      RETURN_IF_ERROR(LoadExpert(ck, c, absl::StrCat(p, "experts.", e, ".w2"), e, &L.w2));
    }
    if (c.n_shared_experts > 0) {
      RETURN_IF_ERROR(LoadExpert(ck, c, p + "shared.w13", 0, &L.shared_w13));
      RETURN_IF_ERROR(LoadExpert(ck, c, p + "shared.w2", 0, &L.shared_w2));
    }
  }
  return w;
}

absl::Status WriteSyntheticSafetensors(const ModelArch& c, uint64_t seed, int layers,
                                       const std::string& path) {
  RETURN_IF_ERROR(ValidateModelArch(c));
  if (layers <= 0 || layers > c.n_layers) layers = c.n_layers;
  std::vector<std::string> names = {"embed", "norm", "lm_head"};
  for (int l = 0; l < layers; ++l) {
    const std::string p = absl::StrCat("layers.", l, ".");
    for (const char* n : {"attn_norm", "attn.wq_a", "attn.q_norm", "attn.wq_b", "attn.wkv_a",
                          "attn.kv_norm", "attn.wo_a", "attn.wo_b", "attn.wi_q", "attn.wi_k",
                          "attn.wi_w", "ffn_norm", "ffn.gate"}) {
      names.push_back(p + n);
    }
    for (int e = 0; e < c.n_routed_experts; ++e) {
      names.push_back(absl::StrCat(p, "ffn.experts.", e, ".w13"));
      names.push_back(absl::StrCat(p, "ffn.experts.", e, ".w2"));
    }
    if (c.n_shared_experts > 0) {
      names.push_back(p + "ffn.shared.w13");
      names.push_back(p + "ffn.shared.w2");
    }
  }
  weights::SafetensorsWriter writer;
  for (const std::string& name : names) {
    ASSIGN_OR_RETURN(SynthSpec s, WeightSpec(c, seed, name));
    std::vector<float> v(static_cast<size_t>(s.rows * s.cols));
    SynthRows(s, 0, s.rows, v.data());
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    std::vector<int64_t> shape = s.rows == 1 ? std::vector<int64_t>{s.cols}
                                             : std::vector<int64_t>{s.rows, s.cols};
    RETURN_IF_ERROR(writer.Add(name + ".weight", weights::Dtype::kF32, shape, std::move(bytes)));
  }
  writer.SetMetadata("qprof_model", ModelArchToJson(c));
  return writer.Write(path);
}

}  // namespace qprof::runtime
