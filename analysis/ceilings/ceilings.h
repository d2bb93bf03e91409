// Ceilings: how much faster could decode get, and what each weight format allows.
//
// Amdahl (per role and per pipe class), with T = the sum of kernel time (serial view: with
// overlapping streams this overstates a part's share, so the bounds are optimistic):
//   speedup if the part vanished      S_0    = 1 / (1 - f),          f = t / T
//   speedup if it ran at its roofline S_roof = T / (T - t + t_roof)
// where t_roof = sum over its launches of max(bytes / BW, flops / pipe rate) on the
// profiled device (needs work models: our registry, or none for third-party traces).
//
// Format ceilings: tokens/s at the run's batch B for each weight format F, on the
// profiled device and on every device of the spec table:
//   bytes/step  = P * bpw(F) / 8 + other bytes (KV cache, activations: format-independent)
//   flops/step  = the step's FLOPs (2 x active params x B for a model config)
//   step time   = max(bytes / BW, flops / rate(pipe(F, device)))
//   tokens/s    = B / step time
// P = weights read per step (parameters). bpw with scales: MXFP4 4 + 8/32 = 4.25; NVFP4
// 4 + 8/16 = 4.5 (+ one FP32 per tensor, negligible); FP8 8 + 32/(128*128) (one FP32 per
// 128x128 block, DeepSeek-style); BF16 16. pipe(F): native FP4 / FP8 tensor cores where
// the device has them, else BF16 tensor cores after dequantisation (W4A16 / W8A16).
// BW is the measured copy rate when the spec table has one, else the datasheet rate.
#ifndef QPROF_ANALYSIS_CEILINGS_CEILINGS_H_
#define QPROF_ANALYSIS_CEILINGS_CEILINGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/devices/device_specs.h"
#include "analysis/work/model_shape.h"
#include "proto/profile.pb.h"
#include "proto/vocabulary.h"

namespace qprof::ceilings {

// Bits per weight including block scales; 0 for an unknown format. The one definition is
// proto/vocabulary.h's (shared with the kernel registry's work models).
using ::qprof::format::BitsPerWeight;

// What one decode step must do.
struct StepWork {
  double weight_params = 0;  // P
  double other_bytes = 0;    // KV + activations per step
  double flops = 0;          // per step
  uint32_t batch = 1;        // B
  std::string run_format;    // the format that ran ("" for third-party traces)
  std::string source;        // "registry work models of <n> launches over <s> steps", ...
};

// A model shape for third-party traces (`--model-shape CONFIG`): a Hugging Face config.json
// (analysis/work/model_shape.h: the MoE shape that gives MoE calls their work; `shape` is
// set, the parameter counts stay 0 unless the file also carries them), or qprof's own JSON,
// all fields optional except one of active_params / weights_per_step_params:
//   {"name": "DeepSeek-V4-Flash", "total_params": 284e9, "active_params": 13e9,
//    "weights_per_step_params": 20e9, "batch": 16, "format": "mxfp4",
//    "kv_bytes_per_step": 1.2e9, "activation_bytes_per_step": 0, "flops_per_token": 26e9}
// weights_per_step_params defaults to active_params (exact at batch 1; at larger batches an
// MoE touches more experts, so this underestimates bytes); flops_per_token defaults to
// 2 x active_params.
struct ModelConfig {
  std::string name;
  double total_params = 0;
  double active_params = 0;
  double weights_per_step_params = 0;
  uint32_t batch = 0;
  std::string format;
  double kv_bytes_per_step = 0;
  double activation_bytes_per_step = 0;
  double flops_per_token = 0;
  std::string path;
  std::optional<work::ModelShape> shape;  // a Hugging Face config
  // Whether the config gives the weights read per step (the whole-model format ceilings).
  bool HasStepWeights() const { return active_params > 0 || weights_per_step_params > 0; }
};

absl::StatusOr<ModelConfig> LoadModelConfig(const std::string& path);
absl::StatusOr<ModelConfig> ParseModelConfig(const std::string& json, const std::string& path);

// StepWork from a model config; `batch` overrides the config's batch when nonzero.
StepWork StepWorkFromModel(const ModelConfig& m, uint32_t batch);

struct CeilingInputs {
  uint64_t total_kernel_time_ns = 0;
  std::map<std::string, double> role_roofline_ns;   // only parts whose every launch has work
  std::map<std::string, double> class_roofline_ns;
  std::optional<StepWork> step_work;
  const devices::DeviceSpec* profiled_device = nullptr;
  double measured_tokens_per_s = 0;
};

// Amdahl rows for classes and roles of `profile`, and format ceilings when step_work is
// known.
proto::Ceilings ComputeCeilings(const proto::Profile& profile, const CeilingInputs& in);

// The pipe a weight format routes FLOPs to on `device`: native FP4 / FP8 tensor cores
// where the device has them, else BF16 tensor cores after dequantisation.
std::string PipeForFormat(const devices::DeviceSpec& device, const std::string& format);

// One format ceiling row (exposed for tests).
proto::FormatCeiling FormatCeilingFor(const devices::DeviceSpec& device, const std::string& format,
                                      const StepWork& work);

}  // namespace qprof::ceilings

#endif  // QPROF_ANALYSIS_CEILINGS_CEILINGS_H_
