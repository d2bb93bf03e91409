// Tensor-core sparse MLA decode kernel and launcher (see sparse_mla_mma.cuh).
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/mla/cuda/sparse_mla_mma.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(128) qprof_attn_sparse_mla_mma(SparseMlaArgs a) {
  SparseMlaMmaBody(a);
}

namespace qprof::kernels::cuda {

absl::Status CheckSparseMla(const SparseMlaParams& p, const char* k);

absl::Status LaunchSparseMlaMma(const SparseMlaParams& p, cudaStream_t stream) {
  RETURN_IF_ERROR_STATUS(CheckSparseMla(p, "sparse_mla_mma"));
  // 95 KB of shared memory: above the 48 KB default, so opt in (every sm_90+ GPU has it).
  // Once per process (the decoder's first, eager step), not inside a graph capture.
  static bool attribute_set = false;
  if (!attribute_set) {
    QPROF_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(qprof_attn_sparse_mla_mma,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    static_cast<int>(kMmaSmemBytes)));
    attribute_set = true;
  }
  SparseMlaArgs a{p.q, p.kv, p.indices, p.out, p.lse, p.heads, p.topk, p.kv_seq_stride,
                  p.softmax_scale};
  qprof_attn_sparse_mla_mma<<<dim3((p.heads + 15) / 16, p.batch), 128, kMmaSmemBytes, stream>>>(a);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_sparse_mla_mma");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
