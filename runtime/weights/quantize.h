// `qprof quantize`: converts a F32/BF16/F16 safetensors file into an NVFP4 (ModelOpt
// layout) or MXFP4 (gpt-oss layout) checkpoint folder that Checkpoint::Open reads back.
//
//   nvfp4: X.weight [.., N, K] -> X.weight U8 [.., N, K/2] (byte i = element 2i low nibble |
//          element 2i+1 high nibble), X.weight_scale F8_E4M3 [.., N, K/16],
//          X.weight_scale_2 F32 [] (one per tensor); plus hf_quant_config.json.
//   mxfp4: X.weight or X [.., N, K] -> X_blocks U8 [.., N, K/32, 16], X_scales U8
//          [.., N, K/32] (UE8M0); plus config.json with quantization_config.
// A tensor is copied unchanged (and listed as not converted) when it has fewer than two
// dimensions, is not a floating type, its K is not a multiple of the block, it matches an
// --exclude regex (std::regex ECMAScript, searched anywhere in the name), or (nvfp4) its
// name does not end in ".weight". Leading dimensions beyond two are quantized per row.
// A NaN/Inf anywhere in a tensor to convert stops the command with an error naming it.
#ifndef QPROF_RUNTIME_WEIGHTS_QUANTIZE_H_
#define QPROF_RUNTIME_WEIGHTS_QUANTIZE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace qprof::weights {

struct QuantizeOptions {
  std::string format;                // "mxfp4" or "nvfp4"
  std::vector<std::string> exclude;  // regexes
  int threads = 2;
  // Called after each tensor with (bytes done, bytes total, tensors done, tensors total).
  std::function<void(uint64_t, uint64_t, size_t, size_t)> progress;
};

struct TensorQuantReport {
  std::string name;                  // input tensor
  std::vector<std::string> outputs;  // tensors written for it
  std::vector<int64_t> shape;
  std::string dtype;                 // input dtype
  bool converted = false;
  std::string reason;                // why not converted
  double rel_rms_error = 0;          // sqrt(sum (x - q)^2 / sum x^2); 0 for an all-zero tensor
  double max_abs_error = 0;
  uint64_t input_bytes = 0;
  uint64_t output_bytes = 0;
};

struct QuantizeReport {
  std::string format;
  std::vector<TensorQuantReport> tensors;
  double rel_rms_error = 0;  // over all converted elements together
  double max_abs_error = 0;
  uint64_t input_bytes = 0;  // whole input file
  uint64_t output_bytes = 0;  // model.safetensors as written
  std::vector<std::string> files;  // written, in order
  std::vector<std::string> not_converted_modules;
};

absl::StatusOr<QuantizeReport> QuantizeSafetensors(const std::string& input,
                                                   const std::string& out_dir,
                                                   const QuantizeOptions& options);

}  // namespace qprof::weights

#endif  // QPROF_RUNTIME_WEIGHTS_QUANTIZE_H_
