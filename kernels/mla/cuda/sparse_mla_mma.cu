// Tensor-core sparse MLA decode kernel and launcher (see sparse_mla_mma.cuh).
#include <algorithm>

#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/smem_opt_in.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/mla/cuda/sparse_mla_mma.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(kMlaMmaThreads) qprof_attn_sparse_mla_mma(SparseMlaArgs a) {
  SparseMlaMmaBody(a);
}
extern "C" __global__ void __launch_bounds__(kMlaCombineThreads)
    qprof_attn_sparse_mla_mma_combine(SparseMlaArgs a) {
  SparseMlaCombineBody(a);
}

namespace qprof::kernels::cuda {

absl::Status CheckSparseMla(const SparseMlaParams& p, const char* k);

int SparseMlaMmaSplitsFor(const SparseMlaParams& p, int sms) { return SparseMlaMmaSplitCount(p, sms); }

int SparseMlaMmaSplits(const SparseMlaParams& p) {
  return SparseMlaMmaSplitsFor(p, CurrentDeviceSmCount(132));  // per device, cached
}

size_t SparseMlaMmaWorkspaceBytes(const SparseMlaParams& p) {
  return SparseMlaMmaWorkspaceBytesFor(p, SparseMlaMmaSplits(p));
}

absl::Status LaunchSparseMlaMma(const SparseMlaParams& p, cudaStream_t stream) {
  return LaunchSparseMlaMma(p, nullptr, 0, stream);
}

absl::Status LaunchSparseMlaMma(const SparseMlaParams& p, void* workspace, size_t workspace_bytes,
                                cudaStream_t stream) {
  RETURN_IF_ERROR_STATUS(CheckSparseMla(p, "sparse_mla_mma"));
  // 95 KB of shared memory: above the 48 KB default, so opt in (every sm_90+ GPU has it).
  // The attribute is per device: once per device (with --tp N each rank's thread opts its
  // own GPU in), thread-safe, on the decoder's first (eager) step, not inside a capture.
  static SmemOptInState* const smem = new SmemOptInState();
  RETURN_IF_ERROR_STATUS(EnsureDynamicSmem(reinterpret_cast<const void*>(qprof_attn_sparse_mla_mma),
                                           kMmaSmemBytes, *smem));
  // Grids and arguments from the plan the warp emulation runs too (sparse_mla_mma.cuh).
  const int splits = SparseMlaMmaSplits(p);
  const size_t need = SparseMlaMmaWorkspaceBytesFor(p, splits);
  const bool split = workspace != nullptr && need > 0 && workspace_bytes >= need;
  const SparseMlaMmaLaunch l = SparseMlaMmaPlan(p, split ? splits : 1, split ? workspace : nullptr);
  qprof_attn_sparse_mla_mma<<<dim3(l.grid.x, l.grid.y, l.grid.z), kMlaMmaThreads, kMmaSmemBytes, stream>>>(
      l.args);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_sparse_mla_mma");
  if (l.args.splits > 1) {
    qprof_attn_sparse_mla_mma_combine<<<dim3(l.combine_grid.x, l.combine_grid.y, l.combine_grid.z),
                                        kMlaCombineThreads, 0, stream>>>(l.args);
    RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_sparse_mla_mma_combine");
  }
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
