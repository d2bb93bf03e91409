#include "kernels/formats/nvfp4.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "base/status_macros.h"
#include "kernels/formats/format_internal.h"
#include "kernels/formats/fp4_blocks.h"
#include "kernels/formats/fp4_codecs.h"

namespace qprof::fp4 {
namespace {

using internal::FloatBits;

constexpr int kBlock = kNvfp4BlockSize;
constexpr float kE2M1Max = 6.0f;

inline uint32_t AbsMaxBits(const float* v, int64_t n) {
  uint32_t m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, FloatBits(v[i]) & internal::kF32AbsMask);
  return m;
}

// One block of finite values (kernels/formats/fp4_blocks.h, shared with the CUDA
// activation quantizer). `six_scale2` = 6 * weight_scale_2 rounded to fp32 once.
inline uint8_t EncodeBlock(const float* v, uint32_t amax_bits, float scale2, float six_scale2,
                           uint8_t* packed8) {
  return Nvfp4EncodeBlock(v, amax_bits, scale2, six_scale2, packed8);
}

}  // namespace

float Nvfp4Scale2ForAmax(float amax) { return Nvfp4Scale2FromAmax(amax); }

uint8_t QuantizeNvfp4Block(const float* v, float scale2, uint8_t* packed8) {
  return EncodeBlock(v, AbsMaxBits(v, kBlock), scale2, kE2M1Max * scale2, packed8);
}

absl::StatusOr<float> AbsMaxFinite(const float* data, int64_t n, const std::string& tensor_name,
                                   int threads) {
  return AbsMaxFinite(data, 1, n, tensor_name, threads);
}

absl::StatusOr<float> AbsMaxFinite(const float* data, int64_t rows, int64_t cols,
                                   const std::string& tensor_name, int threads) {
  const int64_t n = rows * cols;
  std::vector<uint32_t> part_max(std::max(threads, 1), 0);
  std::atomic<int> slot{0};
  internal::ForEachRange(n, threads, [&](int64_t begin, int64_t end) {
    part_max[slot.fetch_add(1)] = AbsMaxBits(data + begin, end - begin);
  });
  const uint32_t amax_bits = *std::max_element(part_max.begin(), part_max.end());
  if (amax_bits >= internal::kF32ExpMask) {
    return internal::NonFiniteError(tensor_name, data, internal::FindFirstNonFinite(data, 0, n),
                                    rows > 1 ? cols : 0);
  }
  return internal::BitsToFloat(amax_bits);
}

absl::StatusOr<Nvfp4Matrix> QuantizeNvfp4(const float* data, int64_t rows, int64_t cols,
                                          const std::string& tensor_name) {
  if (auto s = internal::CheckShape(tensor_name, rows, cols, kBlock, "NVFP4"); !s.ok()) return s;
  auto amax = AbsMaxFinite(data, rows, cols, tensor_name, internal::kDefaultThreads);
  if (!amax.ok()) return amax.status();
  return QuantizeNvfp4WithScale2(data, rows, cols, Nvfp4Scale2ForAmax(*amax), tensor_name,
                                 internal::kDefaultThreads);
}

absl::StatusOr<Nvfp4Matrix> QuantizeNvfp4WithScale2(const float* data, int64_t rows,
                                                    int64_t cols, float scale2,
                                                    const std::string& tensor_name) {
  return QuantizeNvfp4WithScale2(data, rows, cols, scale2, tensor_name,
                                 internal::kDefaultThreads);
}

absl::StatusOr<Nvfp4Matrix> QuantizeNvfp4WithScale2(const float* data, int64_t rows,
                                                    int64_t cols, float scale2,
                                                    const std::string& tensor_name,
                                                    int threads) {
  if (auto s = internal::CheckShape(tensor_name, rows, cols, kBlock, "NVFP4"); !s.ok()) return s;
  if (!std::isfinite(scale2) || !(scale2 > 0.0f)) {
    return absl::InvalidArgumentError("tensor '" + tensor_name +
                                      "': NVFP4 weight_scale_2 must be finite and > 0");
  }
  Nvfp4Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.scale2 = scale2;
  const int64_t blocks = rows * (cols / kBlock);
  m.packed.resize(static_cast<size_t>(blocks) * (kBlock / 2));
  m.scales.resize(static_cast<size_t>(blocks));
  const float six_scale2 = kE2M1Max * scale2;  // rounded to fp32 before any division
  std::vector<int64_t> first_bad(std::max(threads, 1), -1);
  std::atomic<int> slot{0};
  internal::ForEachRange(blocks, threads, [&](int64_t begin, int64_t end) {
    const int my_slot = slot.fetch_add(1);
    for (int64_t b = begin; b < end; ++b) {
      const float* v = data + b * kBlock;
      const uint32_t amax_bits = AbsMaxBits(v, kBlock);
      if (amax_bits >= internal::kF32ExpMask) {
        first_bad[my_slot] = b;
        return;
      }
      m.scales[b] = EncodeBlock(v, amax_bits, scale2, six_scale2,
                                m.packed.data() + b * (kBlock / 2));
    }
  });
  RETURN_IF_ERROR(
      internal::FirstNonFiniteBlockError(first_bad, kBlock, tensor_name, data, cols));
  return m;
}

void DequantizeNvfp4(const Nvfp4Matrix& m, float* out) {
  DequantizeNvfp4(m, out, internal::kDefaultThreads);
}

void DequantizeNvfp4(const Nvfp4Matrix& m, float* out, int threads) {
  float lut[16];
  for (int i = 0; i < 16; ++i) lut[i] = E2M1ToFloat(static_cast<uint8_t>(i));
  const float scale2 = m.scale2;
  const int64_t blocks = m.rows * (m.cols / kBlock);
  internal::ForEachRange(blocks, threads, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      // (e2m1 * e4m3) is exact in fp32 (2 + 4 significant bits), so this is the reference
      // e2m1 * float(e4m3) * weight_scale_2 with a single rounding.
      const float s = E4M3ToFloat(m.scales[b]);
      const uint8_t* p = m.packed.data() + b * (kBlock / 2);
      float* o = out + b * kBlock;
      for (int i = 0; i < kBlock / 2; ++i) {
        o[2 * i] = (lut[p[i] & 15] * s) * scale2;
        o[2 * i + 1] = (lut[p[i] >> 4] * s) * scale2;
      }
    }
  });
}

}  // namespace qprof::fp4
