#include "kernels/formats/format_internal.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace qprof::fp4::internal {

int64_t FindFirstNonFinite(const float* data, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    if (!std::isfinite(data[i])) return i;
  }
  return -1;
}

absl::Status FirstNonFiniteBlockError(const std::vector<int64_t>& first_bad_block, int block,
                                      const std::string& tensor_name, const float* data,
                                      int64_t cols) {
  int64_t bad = -1;
  for (int64_t b : first_bad_block) {
    if (b >= 0 && (bad < 0 || b < bad)) bad = b;
  }
  if (bad < 0) return absl::OkStatus();
  const int64_t index = FindFirstNonFinite(data, bad * block, (bad + 1) * block);
  return NonFiniteError(tensor_name, data, index, cols);
}

absl::Status NonFiniteError(const std::string& tensor_name, const float* data, int64_t index,
                            int64_t cols) {
  const float v = data[index];
  const char* what = std::isnan(v) ? "NaN" : (v > 0 ? "+Inf" : "-Inf");
  const std::string where =
      cols > 0 ? absl::StrCat(" (row ", index / cols, ", col ", index % cols, ")") : "";
  return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor_name, "': element ", index,
                                                 where, " is ", what,
                                                 "; FP4 formats cannot encode non-finite values"));
}

absl::Status CheckShape(const std::string& tensor_name, int64_t rows, int64_t cols, int block,
                        const char* format) {
  if (rows < 0 || cols < 0) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", tensor_name,
                                                   "': negative shape [", rows, ", ", cols, "]"));
  }
  if (cols % block != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor '", tensor_name, "': ", format, " needs the last dimension to be a ",
                     "multiple of ", block, ", got ", cols));
  }
  return absl::OkStatus();
}

}  // namespace qprof::fp4::internal
