#include "kernels/formats/mxfp4.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "base/status_macros.h"
#include "kernels/formats/format_internal.h"
#include "kernels/formats/fp4_blocks.h"
#include "kernels/formats/fp4_codecs.h"

namespace qprof::fp4 {
namespace {

using internal::FloatBits;

constexpr int kBlock = kMxfp4BlockSize;

// Largest |v| of one block as fp32 bits. For finite values the integer order of the
// sign-cleared bit patterns equals the float order, and any NaN/Inf yields >= 0x7F800000,
// so one vectorisable max both finds amax and flags non-finite input.
inline uint32_t AbsMaxBits(const float* v) {
  uint32_t m = 0;
  for (int i = 0; i < kBlock; ++i) m = std::max(m, FloatBits(v[i]) & internal::kF32AbsMask);
  return m;
}

inline uint8_t ScaleCodeFromAmaxBits(uint32_t amax_bits) {
  return Mxfp4ScaleCodeFromAmaxBits(amax_bits);
}

inline void EncodeBlock(const float* v, uint8_t scale_code, uint8_t* packed16) {
  Mxfp4EncodeBlock(v, scale_code, packed16);
}

}  // namespace

uint8_t Mxfp4ScaleCodeForAmax(float amax) {
  return ScaleCodeFromAmaxBits(FloatBits(amax) & internal::kF32AbsMask);
}

uint8_t QuantizeMxfp4Block(const float* v, uint8_t* packed16) {
  const uint8_t code = ScaleCodeFromAmaxBits(AbsMaxBits(v));
  EncodeBlock(v, code, packed16);
  return code;
}

absl::StatusOr<Mxfp4Matrix> QuantizeMxfp4(const float* data, int64_t rows, int64_t cols,
                                          const std::string& tensor_name) {
  return QuantizeMxfp4(data, rows, cols, tensor_name, internal::kDefaultThreads);
}

absl::StatusOr<Mxfp4Matrix> QuantizeMxfp4(const float* data, int64_t rows, int64_t cols,
                                          const std::string& tensor_name, int threads) {
  if (auto s = internal::CheckShape(tensor_name, rows, cols, kBlock, "MXFP4"); !s.ok()) return s;
  Mxfp4Matrix m;
  m.rows = rows;
  m.cols = cols;
  const int64_t blocks = rows * (cols / kBlock);
  m.packed.resize(static_cast<size_t>(blocks) * (kBlock / 2));
  m.scales.resize(static_cast<size_t>(blocks));
  // Blocks never straddle rows (cols % 32 == 0), so the matrix is a flat run of blocks.
  // Each range remembers its first bad block; the smallest wins for a deterministic error.
  std::vector<int64_t> first_bad(std::max(threads, 1), -1);
  std::atomic<int> slot{0};
  internal::ForEachRange(blocks, threads, [&](int64_t begin, int64_t end) {
    const int my_slot = slot.fetch_add(1);
    for (int64_t b = begin; b < end; ++b) {
      const float* v = data + b * kBlock;
      const uint32_t amax_bits = AbsMaxBits(v);
      if (amax_bits >= internal::kF32ExpMask) {
        first_bad[my_slot] = b;
        return;
      }
      const uint8_t code = ScaleCodeFromAmaxBits(amax_bits);
      m.scales[b] = code;
      EncodeBlock(v, code, m.packed.data() + b * (kBlock / 2));
    }
  });
  RETURN_IF_ERROR(
      internal::FirstNonFiniteBlockError(first_bad, kBlock, tensor_name, data, cols));
  return m;
}

void DequantizeMxfp4(const Mxfp4Matrix& m, float* out) {
  DequantizeMxfp4(m, out, internal::kDefaultThreads);
}

void DequantizeMxfp4(const Mxfp4Matrix& m, float* out, int threads) {
  float lut[16];
  for (int i = 0; i < 16; ++i) lut[i] = E2M1ToFloat(static_cast<uint8_t>(i));
  const int64_t blocks = m.rows * (m.cols / kBlock);
  internal::ForEachRange(blocks, threads, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      // e2m1 * 2^(e-127): exact unless the result is an fp32 subnormal, where the single
      // rounding equals ldexp's.
      const float s = Ue8m0ToFloat(m.scales[b]);
      const uint8_t* p = m.packed.data() + b * (kBlock / 2);
      float* o = out + b * kBlock;
      for (int i = 0; i < kBlock / 2; ++i) {
        o[2 * i] = lut[p[i] & 15] * s;
        o[2 * i + 1] = lut[p[i] >> 4] * s;
      }
    }
  });
}

}  // namespace qprof::fp4
