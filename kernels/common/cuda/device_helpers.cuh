// Device-side building blocks shared by the qprof CUDA kernels: the warp primitives
// (warp_ops.h: 16-byte read-only loads, cp.async with zero fill, warp reductions, the BF16
// tensor-core MMA), the register helpers of kernels/common/reg_ops.h (BF16 packing, the
// FP4 (E2M1) register decoders; host-callable) and CUDA's BF16/FP16 headers for the SIMT
// kernels. Header-only; included by .cu files only (the tensor-core kernel bodies include
// warp_ops.h alone, so that the CPU warp emulation compiles them without CUDA).
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

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/common/reg_ops.h"

#endif  // QPROF_KERNELS_COMMON_CUDA_DEVICE_HELPERS_CUH_
