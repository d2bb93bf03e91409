// Per-thread math of the MoE `slot_gemv` kernels (moe_slot_gemv.cuh), host-callable (the
// warp emulation runs the kernel bodies that call it, tests/kernels/warp_emu/
// slot_gemv_emu_test.cc, and tests/kernels/slot_gemv_host_test.cc checks the scale step):
//  - x staging: element i of a 32-element chunk layout padded to 36 floats;
//  - one 16-byte chunk (32 FP4 elements, FP16-decoded as E2M1 * 2^-14) dotted with x, as
//    two 16-element partial sums;
//  - the block-scale step with the decode's 2^14 restored;
//  - the W2 epilogue: slot_out = scale2 * (W2 h), no routing weight (kernels/moe/params.h).
#ifndef QPROF_KERNELS_MOE_CUDA_SLOT_GEMV_MATH_H_
#define QPROF_KERNELS_MOE_CUDA_SLOT_GEMV_MATH_H_

#include <math.h>
#include <stdint.h>

#include "kernels/common/reg_ops.h"
#include "kernels/formats/fp4_codecs.h"

namespace qprof::kernels::cuda {

inline constexpr int kSlotGemvXPad = 36;  // floats per 32-element chunk in shared memory

// Shared-memory index of x element i: 16 bytes of padding per 32 elements, so that the
// eight float4 reads of a quarter-warp hit eight bank groups.
QPROF_HDC int SlotGemvXIndex(int i) { return (i >> 5) * kSlotGemvXPad + (i & 31); }

// Dot of one 16-byte chunk `words` with the chunk's x: partial sums of elements 0..15 (s0)
// and 16..31 (s1), each in FP32 FMA order 0, 1, ..., 15. `ldx(i)` returns x element i of
// the chunk (the kernel: a shared-memory load of the 36-float padded layout).
template <typename LoadX>
QPROF_HDI void SlotGemvChunkDot(const uint32_t (&words)[4], LoadX ldx, float& s0, float& s1) {
  float acc[2] = {0.f, 0.f};
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int q = 0; q < 4; ++q) {
    const int xa = q * 8;
    uint32_t e0, o0, e1, o1;
    reg::DecodeE2M1Quad<3, 0>(words[q], e0, o0);  // elements (0,2), (1,3)
    reg::DecodeE2M1Quad<3, 1>(words[q], e1, o1);  // elements (4,6), (5,7)
    const reg::Float2 fe0 = reg::Half2ToFloat2(e0), fo0 = reg::Half2ToFloat2(o0);
    const reg::Float2 fe1 = reg::Half2ToFloat2(e1), fo1 = reg::Half2ToFloat2(o1);
    float a = acc[q >> 1];
    a = fmaf(fe0.x, ldx(xa + 0), a);
    a = fmaf(fo0.x, ldx(xa + 1), a);
    a = fmaf(fe0.y, ldx(xa + 2), a);
    a = fmaf(fo0.y, ldx(xa + 3), a);
    a = fmaf(fe1.x, ldx(xa + 4), a);
    a = fmaf(fo1.x, ldx(xa + 5), a);
    a = fmaf(fe1.y, ldx(xa + 6), a);
    a = fmaf(fo1.y, ldx(xa + 7), a);
    acc[q >> 1] = a;
  }
  s0 = acc[0];
  s1 = acc[1];
}

// Adds one chunk's scaled partial sums to `acc`. `sc` = the chunk's scale bytes (NVFP4: two
// E4M3 codes, low byte first; MXFP4: one UE8M0 code). The FP16 decode's 2^-14 is undone by
// 2^14: NVFP4 folds it into the scale (E4M3 * 2^14 <= 7.4e6, never overflows); MXFP4
// applies it to the partial sum first, because 2^(e-127) * 2^14 overflows to inf for scale
// codes e >= 241 although the product with the (small) sum is finite. Same instruction
// count either way (one FMUL, one FFMA after the FADD).
template <bool kNvfp4>
QPROF_HDI float SlotGemvAddChunk(float acc, float s0, float s1, uint32_t sc) {
  if (kNvfp4) {
    // nvcc contracts this into two FFMAs (fma(s1, f1, fma(s0, f0, acc))); the host
    // emulation rounds the products and sums separately (docs/kernels.md, "FMA contraction").
    // Writing the fmaf calls out would match the two, but changes the SASS around them.
    return acc + s0 * (fp4::E4M3ToFloat(static_cast<uint8_t>(sc & 0xFF)) * 16384.f) +
           s1 * (fp4::E4M3ToFloat(static_cast<uint8_t>(sc >> 8)) * 16384.f);
  }
  return fmaf((s0 + s1) * 16384.f, fp4::Ue8m0ToFloat(static_cast<uint8_t>(sc)), acc);
}

// W2 epilogue value of output row n of slot s, given the warp-reduced dot: the expert's
// output with weight_scale_2 (1 for MXFP4) and without the routing weight.
QPROF_HDI float SlotGemvW2Out(float dot, float scale2) { return dot * scale2; }

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_SLOT_GEMV_MATH_H_
