// Per-format block facts for the CUDA MoE kernels. Block scales are decoded with the shared
// host/device codecs (kernels/formats/fp4_codecs.h) inside the host-callable lane headers
// (slot_gemv_math.h, w4a16_lanes.h), so host tests and device kernels read the same bits.
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
};

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_FP4_SCALES_CUH_
