// Host launchers of the CUDA MoE expert paths (the computation is in kernels/moe/params.h;
// the CPU oracle is MoeReferenceCpu). CUTLASS-style: Check (can_implement) -> workspace
// size -> launch on a stream. All pointers in MoeParams are device pointers here; `out` is
// accumulated; sorted_slots / expert_offsets / slot_hidden in MoeParams are ignored (the
// grouping is computed on the device into the workspace).
//
//  kSlotGemv  SIMT, one (token, slot) per program (kernels qprof_moe_slot_gemv_<fmt>_*).
//             Any arch. dim, inter multiples of 32; dim, inter <= 10240.
//  kW4a16Mma  BF16 mma.sync m16n8k16, tokens grouped per expert (qprof_moe_w4a16_mma_<fmt>_*).
//             sm_80+. dim, inter multiples of 256; tokens*topk <= 8192; experts <= 1024.
//  kFp4Mma    block-scaled FP4 mma.sync m16n8k64 (qprof_moe_fp4_mma_<fmt>_*). sm_120 only
//             (built for 120a); dim, inter multiples of 128; same grouping limits.
// Unsupported shapes or arch -> InvalidArgument / FailedPrecondition, nothing launched.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_CUDA_H_
#define QPROF_KERNELS_MOE_CUDA_MOE_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>

#include "absl/status/status.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

enum class MoeCudaPath { kSlotGemv, kW4a16Mma, kFp4Mma };
const char* MoeCudaPathName(MoeCudaPath path);  // "slot_gemv", "w4a16_mma", "fp4_mma"

// InvalidArgument naming the field when `p` cannot run on `path` (shapes, null pointers).
// Does not touch the device.
absl::Status CheckMoeCuda(const MoeParams& p, MoeCudaPath path);

// Device workspace bytes LaunchMoeCuda needs (256-byte aligned pieces).
size_t MoeCudaWorkspaceBytes(const MoeParams& p, MoeCudaPath path);

// Launches the path on `stream` (asynchronous). `workspace` holds at least
// MoeCudaWorkspaceBytes(p, path) bytes of device memory.
absl::Status LaunchMoeCuda(const MoeParams& p, MoeCudaPath path, void* workspace,
                           size_t workspace_bytes, cudaStream_t stream);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_CUDA_H_
