// Tensor-core sparse MLA decode kernel and launcher (see sparse_mla_mma.cuh).
#include <algorithm>

#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/smem_opt_in.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/mla/cuda/sparse_mla_mma.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(128) qprof_attn_sparse_mla_mma(SparseMlaArgs a) {
  SparseMlaMmaBody(a);
}
extern "C" __global__ void __launch_bounds__(128)
    qprof_attn_sparse_mla_mma_combine(SparseMlaArgs a) {
  SparseMlaCombineBody(a);
}

namespace qprof::kernels::cuda {

absl::Status CheckSparseMla(const SparseMlaParams& p, const char* k);

int SparseMlaMmaSplitsFor(const SparseMlaParams& p, int sms) {
  const int blocks = p.batch * ((p.heads + 15) / 16);
  const int tiles = (p.topk + kMmaTile - 1) / kMmaTile;
  // Aim for ~2 blocks per SM; keep >= 2 tiles per split (the cp.async double buffer).
  int splits = (2 * sms + blocks - 1) / blocks;
  splits = std::min(splits, std::max(1, tiles / 2));
  return std::max(1, std::min(splits, 64));
}

int SparseMlaMmaSplits(const SparseMlaParams& p) {
  return SparseMlaMmaSplitsFor(p, CurrentDeviceSmCount(132));  // per device, cached
}

size_t SparseMlaMmaWorkspaceBytes(const SparseMlaParams& p) {
  const int splits = SparseMlaMmaSplits(p);
  if (splits <= 1) return 0;
  const size_t rows = static_cast<size_t>(p.batch) * p.heads * splits;
  return rows * (kMlaDv + 2) * sizeof(float) + 256;
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
  SparseMlaArgs a{p.q, p.kv, p.indices, p.out, p.lse, p.heads, p.topk, p.kv_seq_stride,
                  p.softmax_scale};
  const size_t need = SparseMlaMmaWorkspaceBytes(p);
  if (workspace != nullptr && need > 0 && workspace_bytes >= need) {
    a.splits = SparseMlaMmaSplits(p);
    a.part_o = static_cast<float*>(workspace);
    a.part_ml = a.part_o + static_cast<size_t>(p.batch) * p.heads * a.splits * kMlaDv;
  }
  qprof_attn_sparse_mla_mma<<<dim3((p.heads + 15) / 16, p.batch, a.splits), 128, kMmaSmemBytes,
                              stream>>>(a);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_sparse_mla_mma");
  if (a.splits > 1) {
    qprof_attn_sparse_mla_mma_combine<<<dim3(p.heads, p.batch), 128, 0, stream>>>(a);
    RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_sparse_mla_mma_combine");
  }
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
