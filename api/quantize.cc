#include "api/quantize.h"

#include <chrono>

#include "base/status_macros.h"
#include "runtime/weights/safetensors.h"

namespace qprof::api {

absl::StatusOr<QuantizeResult> Quantize(const std::string& input, const std::string& out_dir,
                                        const QuantizeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  QuantizeResult r;
  ASSIGN_OR_RETURN(r.report, weights::QuantizeSafetensors(input, out_dir, options));
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& t : r.report.tensors) {
    if (!t.converted) continue;
    ++r.converted;
    r.converted_in_bytes += t.input_bytes;
    r.converted_out_bytes += t.output_bytes;
    uint64_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    r.converted_elements += n;
  }
  if (r.converted_elements > 0) {
    r.bits_per_weight = 8.0 * static_cast<double>(r.converted_out_bytes) /
                        static_cast<double>(r.converted_elements);
  }
  return r;
}

std::string ShapeString(const std::vector<int64_t>& shape) { return weights::ShapeString(shape); }

}  // namespace qprof::api
