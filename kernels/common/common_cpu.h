// CPU kernels of the dense parts of the decode step (params in kernels/common/params.h).
// Each has the plainest FP32 loop as a *Reference* function where a faster version exists;
// tests compare the two. Validation failures return InvalidArgument naming the field.
#ifndef QPROF_KERNELS_COMMON_COMMON_CPU_H_
#define QPROF_KERNELS_COMMON_COMMON_CPU_H_

#include <cstdint>
#include <cstring>

#include "absl/status/status.h"
#include "kernels/common/params.h"

namespace qprof::kernels {

// BF16 <-> FP32. BF16 is the upper 16 bits of an FP32; FloatToBf16 rounds to nearest even
// (NaN stays NaN).
inline float Bf16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x7FFFFFu)) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
void Bf16ToFloatN(const uint16_t* in, int64_t n, float* out);
void FloatToBf16N(const float* in, int64_t n, uint16_t* out);

absl::Status EmbeddingCpu(const EmbeddingParams& p);
absl::Status RmsNormCpu(const RmsNormParams& p);
absl::Status RopeCpu(const RopeParams& p);

// y = W x, W BF16. The reference is one FP32 dot per output; the fast version converts
// weight rows in blocks and runs row tiles on the pool.
absl::Status DenseGemmReferenceCpu(const DenseGemmParams& p);
absl::Status DenseGemmCpu(const DenseGemmParams& p);

absl::Status RouterTopkCpu(const RouterTopkParams& p);
absl::Status ArgmaxCpu(const ArgmaxParams& p);

// FP32-weight GEMM for the dense reference model: y (+)= W x with W [n, k] FP32.
void DenseGemmF32Cpu(int m, int n, int k, const float* x, const float* w, float* y,
                     bool accumulate, ThreadPool* pool);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_COMMON_COMMON_CPU_H_
