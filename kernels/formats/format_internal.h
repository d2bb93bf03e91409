// Internal helpers of the block quantizers (not part of the formats API).
//
// ForEachRange splits [0, n) into at most `threads` contiguous
// ranges and runs fn(begin, end) on each, the last one on the calling thread. Below
// `min_per_thread` items per thread the work runs inline: starting a thread costs ~20 us,
// about what one core quantizes in 10k blocks. Two threads by default: the quantize
// command runs beside other work, and memory bandwidth, not cores, bounds the speed.
#ifndef QPROF_KERNELS_FORMATS_FORMAT_INTERNAL_H_
#define QPROF_KERNELS_FORMATS_FORMAT_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <thread>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace qprof::fp4::internal {

inline constexpr int kDefaultThreads = 2;
inline constexpr int64_t kMinBlocksPerThread = 16384;

template <typename Fn>
void ForEachRange(int64_t n, int threads, Fn&& fn) {
  int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, n / kMinBlocksPerThread));
  if (parts <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  std::vector<std::thread> workers;
  workers.reserve(parts - 1);
  const int64_t step = (n + parts - 1) / parts;
  for (int64_t p = 0; p + 1 < parts; ++p) {
    workers.emplace_back([&fn, p, step, n] { fn(p * step, std::min(n, (p + 1) * step)); });
  }
  fn((parts - 1) * step, n);
  for (auto& w : workers) w.join();
}

// Index of the first NaN/Inf among data[begin, end), or -1.
int64_t FindFirstNonFinite(const float* data, int64_t begin, int64_t end);

// InvalidArgument: "tensor 'W': element 17 (row 0, col 17) is NaN; ..." (no row/col when
// cols <= 0, for flat arrays).
absl::Status NonFiniteError(const std::string& tensor_name, const float* data, int64_t index,
                            int64_t cols);

// After a threaded pass in which each worker recorded the first block holding NaN/Inf
// (-1 if none): OK when no worker did, else NonFiniteError for the earliest such element.
absl::Status FirstNonFiniteBlockError(const std::vector<int64_t>& first_bad_block, int block,
                                      const std::string& tensor_name, const float* data,
                                      int64_t cols);

// InvalidArgument unless rows >= 0 and cols is a non-negative multiple of `block`.
absl::Status CheckShape(const std::string& tensor_name, int64_t rows, int64_t cols, int block,
                        const char* format);

}  // namespace qprof::fp4::internal

#endif  // QPROF_KERNELS_FORMATS_FORMAT_INTERNAL_H_
