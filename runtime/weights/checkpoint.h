// Quantized checkpoints on disk: ModelOpt NVFP4, gpt-oss MXFP4, and what `qprof quantize`
// writes (the same two layouts).
//
// Open() takes a folder (or one .safetensors file), opens every shard (the
// model.safetensors.index.json weight map when present, else every *.safetensors file),
// and detects the format from the config files:
//   hf_quant_config.json {"quantization": {"quant_algo": "NVFP4"}}     -> kNvfp4
//   config.json {"quantization_config": {"quant_method": "mxfp4"}}     -> kMxfp4
//   config.json {"quantization_config": {"quant_algo": "NVFP4", ...}}  -> kNvfp4
//   neither                                                           -> kNone
// MIXED_PRECISION ModelOpt configs count as NVFP4 when any layer is NVFP4.
//
// Quantized tensors are addressed by their logical name and shape [..., N, K]:
//   NVFP4  "X.weight"  <- X.weight U8 [..., N, K/2], X.weight_scale F8_E4M3 [..., N, K/16],
//                         X.weight_scale_2 F32 [] (or [E] for stacked experts)
//   MXFP4  "X"         <- X_blocks U8 [..., N, K/32, 16], X_scales U8 [..., N, K/32]
// Leading dimensions (stacked experts [E, N, K]) are either flattened into one matrix of
// E*N rows or split into E matrices. Every shape mismatch names the tensor in the error.
#ifndef QPROF_RUNTIME_WEIGHTS_CHECKPOINT_H_
#define QPROF_RUNTIME_WEIGHTS_CHECKPOINT_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "runtime/weights/safetensors.h"

namespace qprof::weights {

enum class CheckpointFormat { kNone, kMxfp4, kNvfp4 };
const char* CheckpointFormatName(CheckpointFormat f);  // "none", "mxfp4", "nvfp4"

class Checkpoint {
 public:
  static absl::StatusOr<Checkpoint> Open(const std::string& path);

  CheckpointFormat format() const { return format_; }
  const std::string& dir() const { return dir_; }
  // Where the format came from: "hf_quant_config.json", "config.json" or "none".
  const std::string& format_source() const { return format_source_; }
  // exclude_modules / modules_to_not_convert from the config file.
  const std::vector<std::string>& excluded_modules() const { return excluded_; }

  // Logical names of the quantized tensors (sorted) and of every other stored tensor.
  std::vector<std::string> QuantizedNames() const;
  std::vector<std::string> PlainNames() const;
  bool IsQuantized(std::string_view name) const;

  // Logical shape [..., N, K] of a quantized or plain tensor; NotFound when unknown.
  absl::StatusOr<std::vector<int64_t>> Shape(std::string_view name) const;

  // The whole tensor as one matrix with rows = product of all but the last dimension.
  absl::StatusOr<fp4::Nvfp4Matrix> LoadNvfp4(std::string_view name) const;
  absl::StatusOr<fp4::Mxfp4Matrix> LoadMxfp4(std::string_view name) const;
  // One matrix per index of the first dimension ([E, N, K] -> E matrices of [N, K]).
  absl::StatusOr<std::vector<fp4::Nvfp4Matrix>> LoadNvfp4Experts(std::string_view name) const;
  absl::StatusOr<std::vector<fp4::Mxfp4Matrix>> LoadMxfp4Experts(std::string_view name) const;

  // F32 values of any tensor: quantized ones dequantized, F32/BF16/F16 ones widened.
  absl::StatusOr<std::vector<float>> Dequantize(std::string_view name) const;

  // The raw stored tensor (any physical name) and the file that holds it.
  struct Stored {
    const SafetensorsFile* file;
    const TensorInfo* info;
  };
  absl::StatusOr<Stored> Raw(std::string_view physical_name) const;

 private:
  struct Quantized {
    CheckpointFormat kind;        // kMxfp4 or kNvfp4
    std::vector<int64_t> shape;   // logical [..., N, K]
    std::string packed;           // X.weight or X_blocks
    std::string scales;           // X.weight_scale or X_scales
    std::string scale2;           // X.weight_scale_2 (NVFP4 only)
  };
  absl::Status ReadConfig();
  absl::Status Index();
  absl::Status AddNvfp4(const std::string& base);
  absl::Status AddMxfp4(const std::string& base);
  absl::StatusOr<std::vector<uint8_t>> Bytes(const std::string& physical) const;
  absl::StatusOr<const Quantized*> FindQuantized(std::string_view name,
                                                 CheckpointFormat want) const;

  std::string dir_;
  CheckpointFormat format_ = CheckpointFormat::kNone;
  std::string format_source_ = "none";
  std::vector<std::string> excluded_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Stored, std::less<>> stored_;      // physical name -> location
  std::map<std::string, Quantized, std::less<>> quantized_;  // logical name -> parts
};

}  // namespace qprof::weights

#endif  // QPROF_RUNTIME_WEIGHTS_CHECKPOINT_H_
