// Weights of the bundled model for one FP4 format: expert weights (routed and shared) in
// the format, everything else BF16 (uint16_t bit patterns), as in the published
// checkpoints. Shapes and names in runtime/model_arch.h; synthetic values from
// runtime/synthetic.h (the recipe per tensor is WeightSpec below, shared with the dense
// FP32 reference model so that it sees the unquantized values of the same weights).
#ifndef QPROF_RUNTIME_MODEL_WEIGHTS_H_
#define QPROF_RUNTIME_MODEL_WEIGHTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/common/params.h"
#include "kernels/moe/params.h"
#include "runtime/model_arch.h"
#include "runtime/synthetic.h"

namespace qprof::runtime {

struct Bf16Tensor {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint16_t> data;  // [rows, cols]
  size_t bytes() const { return data.size() * 2; }
};

// `count` FP4 matrices of [rows, cols] back to back (the MoeParams layout).
struct Fp4Stack {
  kernels::Fp4Format format = kernels::Fp4Format::kMxfp4;
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> packed;   // [count, rows, cols/2]
  std::vector<uint8_t> scales;   // [count, rows, cols/block]
  std::vector<float> scale2;     // [count] NVFP4 only
  kernels::Fp4Weights View() const {
    return {packed.data(), scales.data(), scale2.empty() ? nullptr : scale2.data()};
  }
  size_t bytes() const { return packed.size() + scales.size() + scale2.size() * 4; }
  // `count` zeroed matrices [rows, cols] of `format` (NVFP4 tensor scales 1): the one
  // place that knows the stack's byte sizes.
  static Fp4Stack Zeros(kernels::Fp4Format format, int64_t count, int64_t rows, int64_t cols);
};

struct LayerWeights {
  Bf16Tensor attn_norm, wq_a, q_norm, wq_b, wkv_a, kv_norm, wo_a, wo_b;
  Bf16Tensor wi_q, wi_k, wi_w;
  Bf16Tensor ffn_norm, gate;
  Fp4Stack w13, w2;                // routed experts: [E, 2I, D], [E, D, I]
  Fp4Stack shared_w13, shared_w2;  // shared expert(s) as one: [1, 2Is, D], [1, D, Is]
};

// Sizes the routed experts ([E, 2I, D], [E, D, I]) and, when the model has them, the
// shared expert ([1, 2Is, D], [1, D, Is]) of `layer`, zeroed, for weights in `format`.
void AllocateExperts(const ModelArch& c, kernels::Fp4Format format, LayerWeights* layer);

struct ModelWeights {
  ModelArch arch;
  kernels::Fp4Format format = kernels::Fp4Format::kMxfp4;
  int layers = 0;                  // layers held (may be fewer than config.n_layers)
  Bf16Tensor embed, final_norm, lm_head;
  std::vector<LayerWeights> layer;
  std::string source;              // "synthetic seed N" or the checkpoint folder
  size_t expert_bytes() const;
  size_t dense_bytes() const;
};

// The synthetic recipe of tensor `name` (e.g. "layers.0.attn.wq_a",
// "layers.0.ffn.experts.3.w13", "layers.0.ffn.shared.w2", "embed", "lm_head", "norm").
// NotFound for an unknown name.
absl::StatusOr<SynthSpec> WeightSpec(const ModelArch& c, uint64_t seed,
                                     const std::string& name);

// Builds seeded synthetic weights for `layers` layers, quantizing experts to `format`.
absl::StatusOr<ModelWeights> MakeSyntheticWeights(const ModelArch& c,
                                                  kernels::Fp4Format format, int layers,
                                                  uint64_t seed, kernels::ThreadPool* pool);

// Loads `layers` layers from a quantized checkpoint folder (`qprof quantize`, ModelOpt
// NVFP4 or gpt-oss MXFP4 layout; runtime/weights/checkpoint.h) whose tensors carry the
// names of WeightSpec (experts quantized, everything else BF16/F32). The checkpoint's
// detected format must equal `format`; a missing or misshapen tensor is named in the error.
absl::StatusOr<ModelWeights> LoadCheckpointWeights(const std::string& dir,
                                                   const ModelArch& c,
                                                   kernels::Fp4Format format, int layers);

// Writes the synthetic weights (unquantized, F32) of `layers` layers as one safetensors
// file with the tensor names LoadCheckpointWeights reads: the input for `qprof quantize`
// (exclude the non-expert tensors to keep them BF16/F32, as published checkpoints do).
absl::Status WriteSyntheticSafetensors(const ModelArch& c, uint64_t seed, int layers,
                                       const std::string& path);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_MODEL_WEIGHTS_H_
