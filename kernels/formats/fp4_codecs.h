// Scalar codecs for the element and scale types of the FP4 formats, usable from host
// (.cc) and device (.cu) code: E2M1 (FP4 elements), UE8M0 (MX scales), E4M3 (fn variant,
// NVFP4 block scales). Exactly as ../docs/formats.md and the OCP MX v1.0 spec state:
// round to nearest, ties to even; saturation to the largest finite value; the sign taken
// from the input's sign bit (so -0.1 encodes to E2M1 0x8, "-0").
//
// Contract for encoders: the input must be finite. Callers that accept user data check
// for NaN/Inf first and report the tensor and element (see mxfp4.h / nvfp4.h); the
// scalar encoders themselves map NaN to the format's NaN where one exists (E4M3 0x7F,
// UE8M0 0xFF) and to the saturated value for E2M1, which has no NaN.
#ifndef QPROF_KERNELS_FORMATS_FP4_CODECS_H_
#define QPROF_KERNELS_FORMATS_FP4_CODECS_H_

#include <cstdint>

#if defined(__CUDACC__)
#define QPROF_HD __host__ __device__ __forceinline__
#else
#define QPROF_HD inline
#endif

namespace qprof::fp4 {

// E2M1: s eem, bias 1, no Inf/NaN. Codes 0..7 = 0, 0.5, 1, 1.5, 2, 3, 4, 6; 8..15 negatives.
QPROF_HD float E2M1ToFloat(uint8_t code);
// RNE with saturation to +-6. The result is a 4-bit code in the low nibble.
QPROF_HD uint8_t FloatToE2M1(float v);

// UE8M0: value 2^(e-127); e = 0 is 2^-127; 0xFF is NaN.
QPROF_HD float Ue8m0ToFloat(uint8_t code);

// E4M3 (fn): bias 7, max 448, subnormals down to 2^-9, 0x7F/0xFF NaN, no Inf.
QPROF_HD float E4M3ToFloat(uint8_t code);
// RNE with saturation to +-448; |v| below half the smallest subnormal rounds to +-0.
QPROF_HD uint8_t FloatToE4M3(float v);

}  // namespace qprof::fp4

#include "kernels/formats/fp4_codecs_inl.h"  // IWYU pragma: export

#endif  // QPROF_KERNELS_FORMATS_FP4_CODECS_H_
