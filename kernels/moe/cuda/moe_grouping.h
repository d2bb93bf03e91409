// Device buffers the grouped MoE paths (w4a16_mma, fp4_mma) pass between their kernels:
// the expert grouping written by the *_align kernel and fp4_mma's quantised activations.
// Plain structs (no CUDA headers), shared by the launchers and the CPU warp emulation.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_GROUPING_H_
#define QPROF_KERNELS_MOE_CUDA_MOE_GROUPING_H_

#include <cstdint>

namespace qprof::kernels::cuda {

// Device grouping produced by the paths' *_align kernel, shared by the grouped paths.
struct MoeGrouping {
  int32_t* sorted_slots;     // [slots]
  int32_t* expert_offsets;   // [experts + 1]
  int32_t* active_experts;   // [experts]
  int32_t* num_active;       // [1]
};

struct Fp4ActBuffers {
  uint8_t* packed;    // [slots, max(dim, inter)/2]
  uint8_t* scales;    // [slots, max(dim, inter)/16]
  float* scale2;      // [slots]
  float* hidden;      // [slots, inter]
};

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_GROUPING_H_
