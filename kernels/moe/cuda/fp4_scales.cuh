// Per-format scale decoding for the CUDA MoE kernels. Block scales are decoded with the
// shared host/device codecs (kernels/formats/fp4_codecs.h), so host references and device
// kernels read the same bits the same way.
#ifndef QPROF_KERNELS_MOE_CUDA_FP4_SCALES_CUH_
#define QPROF_KERNELS_MOE_CUDA_FP4_SCALES_CUH_

#include <stdint.h>

#include "kernels/formats/fp4_codecs.h"

namespace qprof::kernels::cuda {

// Compile-time facts of a format. kBlock elements per scale; 16-byte chunks of packed
// weights hold 32 elements = kScalesPer16B blocks.
template <bool kNvfp4>
struct Fp4Traits {
  static constexpr int kBlock = kNvfp4 ? 16 : 32;
  static constexpr int kScalesPer16B = kNvfp4 ? 2 : 1;
  __device__ __forceinline__ static float Scale(uint8_t code) {
    return kNvfp4 ? fp4::E4M3ToFloat(code) : fp4::Ue8m0ToFloat(code);
  }
};

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_FP4_SCALES_CUH_
