// `qprof quantize` as a library call: a F32/BF16/F16 safetensors file converted into an
// NVFP4 (ModelOpt) or MXFP4 (gpt-oss) checkpoint folder (runtime/weights/quantize.h), with
// each tensor's measured error and the totals the command reports.
#ifndef QPROF_API_QUANTIZE_H_
#define QPROF_API_QUANTIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/weights/quantize.h"

namespace qprof::api {

using weights::QuantizeOptions;

struct QuantizeResult {
  weights::QuantizeReport report;
  size_t converted = 0;             // tensors converted
  uint64_t converted_in_bytes = 0;  // their input and output sizes
  uint64_t converted_out_bytes = 0;
  uint64_t converted_elements = 0;
  double bits_per_weight = 0;       // of the converted tensors, scales included (measured)
  double seconds = 0;               // wall time of the conversion (measured)
};

absl::StatusOr<QuantizeResult> Quantize(const std::string& input, const std::string& out_dir,
                                        const QuantizeOptions& options);

// "[4096, 7168]"
std::string ShapeString(const std::vector<int64_t>& shape);

}  // namespace qprof::api

#endif  // QPROF_API_QUANTIZE_H_
