// Host launchers of the CUDA MoE expert paths (the computation is in kernels/moe/params.h;
// the CPU oracle is MoeReferenceCpu). CUTLASS-style: Check (can_implement) -> workspace
// size -> launch on a stream. All pointers in MoeParams are device pointers here; `out` is
// accumulated; sorted_slots / expert_offsets / slot_hidden in MoeParams are ignored (the
// grouping is computed on the device into the workspace).
//
// A path is found by its registry name (the family "moe.<name>" of kernels/registry), so
// dispatch is by the registry's choice and an unknown name is an error, never a fallback:
//  slot_gemv  SIMT, one (token, slot) per program (kernels qprof_moe_slot_gemv_<fmt>_*).
//             Any arch. dim, inter multiples of 32; dim, inter <= 10240.
//  w4a16_mma  BF16 mma.sync m16n8k16, tokens grouped per expert (qprof_moe_w4a16_mma_<fmt>_*).
//             sm_80+. dim, inter multiples of 256; tokens*topk <= 8192; experts <= 1024.
//  fp4_mma    block-scaled FP4 mma.sync m16n8k64 (qprof_moe_fp4_mma_<fmt>_*). sm_120 only
//             (built for 120a); dim, inter multiples of 128; same grouping limits.
// Each path's host half (workspace layout, launch sequence) is its moe_<name>_path.cc;
// moe_cuda.cc lists them. Unsupported shapes or arch -> InvalidArgument /
// FailedPrecondition, nothing launched.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_CUDA_H_
#define QPROF_KERNELS_MOE_CUDA_MOE_CUDA_H_

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

struct MoeWorkspace;       // moe_cuda_internal.h
class MoeWorkspaceCarver;

// One MoE path: its limits and its host half.
struct MoeCudaPath {
  const char* name;  // "slot_gemv": registry family "moe.slot_gemv", kernels qprof_moe_slot_gemv_*
  int multiple;      // dim and inter must be multiples of it
  bool grouped;      // tokens grouped by expert (the *_align kernel and its limits)
  int only_sm;       // 0: every build target; else that compute capability only (120)
  // Takes the path's pieces of the workspace, in a fixed order (null base: sizes only).
  void (*layout)(const MoeParams& p, MoeWorkspaceCarver* carver, MoeWorkspace* ws);
  // The path's kernels on `stream`, partial outputs into ws.slot_out (combined after).
  absl::Status (*launch)(const MoeParams& p, const MoeWorkspace& ws, cudaStream_t stream);
};

// Every path, in the registry's order; the path named `name`, or InvalidArgument
// "unknown MoE CUDA path 'x' (paths: slot_gemv, w4a16_mma, fp4_mma)".
const std::vector<const MoeCudaPath*>& MoeCudaPaths();
absl::StatusOr<const MoeCudaPath*> FindMoeCudaPath(const std::string& name);

// InvalidArgument naming the field when `p` cannot run on `path` (shapes, null pointers).
// Does not touch the device.
absl::Status CheckMoeCuda(const MoeParams& p, const MoeCudaPath& path);

// Device workspace bytes LaunchMoeCuda needs (256-byte aligned pieces).
size_t MoeCudaWorkspaceBytes(const MoeParams& p, const MoeCudaPath& path);

// Launches the path on `stream` (asynchronous). `workspace` holds at least
// MoeCudaWorkspaceBytes(p, path) bytes of device memory.
absl::Status LaunchMoeCuda(const MoeParams& p, const MoeCudaPath& path, void* workspace,
                           size_t workspace_bytes, cudaStream_t stream);

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_CUDA_H_
