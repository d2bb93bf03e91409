// Vectorisable inner loops of the CPU kernels. FP32 reductions are written with 16
// independent partial sums so the compiler can keep them in SIMD lanes without
// -ffast-math (the order of additions is fixed: lane j sums elements j, j+16, ...; the
// lanes are then added pairwise). The fast kernels therefore differ from the references
// (plain index-order sums) only by FP32 summation order.
#ifndef QPROF_KERNELS_COMMON_VEC_H_
#define QPROF_KERNELS_COMMON_VEC_H_

#include <cstdint>
#include <cstring>

// Hot loops are compiled twice, for AVX2 and the x86-64 baseline, and picked at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define QPROF_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define QPROF_CPU_CLONES
#endif

namespace qprof::kernels {

inline float Dot(const float* __restrict a, const float* __restrict b, int64_t n) {
  constexpr int kLanes = 16;
  float acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) acc[j] += a[i + j] * b[i + j];
  }
  for (int j = 0; i < n; ++i, ++j) acc[j] += a[i] * b[i];
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  }
  return acc[0];
}

// y += a * x
inline void Axpy(float a, const float* __restrict x, float* __restrict y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

inline void Bf16RowToFloat(const uint16_t* __restrict in, int64_t n, float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = static_cast<uint32_t>(in[i]) << 16;
    std::memcpy(out + i, &u, 4);
  }
}

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_COMMON_VEC_H_
