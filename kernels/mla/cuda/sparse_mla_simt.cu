// SIMT sparse MLA decode kernel and launcher (see sparse_mla_simt.cuh).
#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/mla/cuda/sparse_mla_simt.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(kSimtThreads)
    qprof_attn_sparse_mla_simt(SparseMlaArgs a) {
  SparseMlaSimtBody(a);
}

namespace qprof::kernels::cuda {

absl::Status CheckSparseMla(const SparseMlaParams& p, const char* k) {
  if (p.d_v != kMlaDv || p.d_qk != kMlaDqk)
    return absl::InvalidArgumentError(absl::StrCat(k, ": needs d_v 512 and d_qk 576, got ", p.d_v,
                                                   " and ", p.d_qk));
  if (p.batch <= 0 || p.heads <= 0 || p.topk < 0 || p.kv_seq_stride <= 0 || p.batch > 65535)
    return absl::InvalidArgumentError(absl::StrCat(k, ": bad dims batch=", p.batch,
                                                   " heads=", p.heads, " topk=", p.topk));
  if (!p.q || !p.kv || !p.indices || !p.out)
    return absl::InvalidArgumentError(absl::StrCat(k, ": q, kv, indices and out must be set"));
  return absl::OkStatus();
}

absl::Status LaunchSparseMlaSimt(const SparseMlaParams& p, cudaStream_t stream) {
  RETURN_IF_ERROR_STATUS(CheckSparseMla(p, "sparse_mla_simt"));
  const SparseMlaSimtLaunch l = SparseMlaSimtPlan(p);  // shared with the warp emulation
  qprof_attn_sparse_mla_simt<<<dim3(l.grid.x, l.grid.y, l.grid.z), kSimtThreads, 0, stream>>>(l.args);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_sparse_mla_simt");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
