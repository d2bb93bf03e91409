// Device-side building blocks shared by the qprof CUDA kernels: 16-byte read-only loads,
// cp.async with zero fill, warp reductions and the BF16 tensor-core MMA; BF16 packing and
// the FP4 (E2M1) register decoders live in kernels/common/reg_ops.h (host-callable).
// Header-only; included by .cu files only.
//
// FP4 decode by bit placement (no table): an E2M1 nibble `s e e m` is moved so that `e e m`
// lands on the low exponent bits and the top mantissa bit of a 16-bit float:
//   FP16 (5-bit exponent, bias 15): bits [11:9] <- eem, bit 15 <- s. Value = E2M1 * 2^-14
//     exactly (e = 0 lands on an FP16 subnormal, m * 0.5 * 2^-14).
//   BF16 (8-bit exponent, bias 127): bits [8:6] <- eem. Value = E2M1 * 2^-126 exactly.
// The power of two is folded into the block scale, so a pair of elements costs one PRMT
// (shared by four pairs), one shift and one LOP3. Tensor cores and HMUL2 take subnormal
// FP16/BF16 inputs at full precision (the Marlin FP4 path relies on the same).
#ifndef QPROF_KERNELS_COMMON_CUDA_DEVICE_HELPERS_CUH_
#define QPROF_KERNELS_COMMON_CUDA_DEVICE_HELPERS_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "kernels/common/reg_ops.h"

namespace qprof::kernels::cuda {

// 16-byte load through the read-only (non-coherent) path; `p` must be 16-byte aligned.
__device__ __forceinline__ uint4 LdgNc128(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// cp.async of 16 bytes global -> shared; src_bytes < 16 zero-fills the rest (0 = all zero,
// used for rows past the end so that no uninitialised shared memory reaches an MMA).
__device__ __forceinline__ void CpAsync16(void* smem, const void* gmem, int src_bytes) {
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(gmem),
               "r"(src_bytes));
}
__device__ __forceinline__ void CpAsyncCommit() { asm volatile("cp.async.commit_group;"); }
template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending));
}

__device__ __forceinline__ float WarpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Register helpers shared with host code (kernels/common/reg_ops.h: the CPU tests call the
// same functions).
using reg::BytePerm;
using reg::Bf16BitsToFloat;
using reg::DecodeE2M1Quad;
using reg::FloatToBf16Bits;
using reg::Hmul2Bf16;
using reg::PackBf16x2;

// D = A * B + D, m16n8k16, A row-major BF16 (4 regs), B col-major BF16 (2 regs), FP32 acc.
// Fragment layout (g = lane / 4, t = lane % 4): a0 = A[g][2t..2t+1], a1 = A[g+8][2t..],
// a2 = A[g][2t+8..], a3 = A[g+8][2t+8..]; b0 = B[2t..2t+1][g], b1 = B[2t+8..][g];
// d0,d1 = D[g][2t..2t+1], d2,d3 = D[g+8][2t..2t+1].
__device__ __forceinline__ void MmaBf16m16n8k16(float (&d)[4], const uint32_t (&a)[4],
                                                uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_DEVICE_HELPERS_CUH_
