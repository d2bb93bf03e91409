#include "kernels/formats/nvfp4.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "base/status_macros.h"
#include "kernels/formats/format_internal.h"
#include "kernels/formats/fp4_codecs.h"

namespace qprof::fp4 {
namespace {

using internal::FloatBits;

constexpr int kBlock = kNvfp4BlockSize;
constexpr float kE4M3Max = 448.0f;
constexpr float kE2M1Max = 6.0f;
constexpr float kMinBlockScale = 0.001953125f;  // 2^-9, the smallest E4M3 subnormal
constexpr uint8_t kE4M3One = 0x38;              // 1.0: the scale of an all-zero block

inline uint32_t AbsMaxBits(const float* v, int64_t n) {
  uint32_t m = 0;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, FloatBits(v[i]) & internal::kF32AbsMask);
  return m;
}

// One block of finite values. `six_scale2` = 6 * weight_scale_2 rounded to fp32 once.
inline uint8_t EncodeBlock(const float* v, uint32_t amax_bits, float scale2, float six_scale2,
                           uint8_t* packed8) {
  uint8_t code = kE4M3One;
  if (amax_bits != 0) {
    const float amax = internal::BitsToFloat(amax_bits);
    code = FloatToE4M3(std::max(amax / six_scale2, kMinBlockScale));
  }
  // float(block_scale) * weight_scale_2 in fp32, then one fp32 division per element
  // (ModelOpt's reference order; a reciprocal-multiply would round differently).
  const float denom = E4M3ToFloat(code) * scale2;
  uint8_t codes[kBlock];
  if (denom > 0.0f) {
    for (int i = 0; i < kBlock; ++i) codes[i] = FloatToE2M1(v[i] / denom);
  } else {
    // Only when scale2 is a tiny subnormal and the product underflows: the values are then
    // themselves ~1e-40, and w / 0 = +-Inf saturates to +-6 while 0 stays 0.
    for (int i = 0; i < kBlock; ++i) {
      codes[i] = v[i] == 0.0f ? FloatToE2M1(v[i]) : FloatToE2M1(v[i] / denom);
    }
  }
  for (int i = 0; i < kBlock / 2; ++i) {
    packed8[i] = static_cast<uint8_t>(codes[2 * i] | (codes[2 * i + 1] << 4));
  }
  return code;
}

}  // namespace

float Nvfp4Scale2ForAmax(float amax) {
  if (!(amax > 0.0f)) return 1.0f;  // all-zero tensor
  const float s = amax / (kE2M1Max * kE4M3Max);  // 6 * 448 = 2688, exact in fp32
  // amax < ~3.8e-42 would give 0 and a division by zero later; use the smallest subnormal.
  return s > 0.0f ? s : std::numeric_limits<float>::denorm_min();
}

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
