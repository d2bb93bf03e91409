// Indexer scoring and top-k kernels and launcher (see indexer.cuh).
#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/smem_opt_in.h"
#include "kernels/mla/cuda/indexer.cuh"
#include "kernels/mla/cuda/mla_cuda.h"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(kIdxScoreThreads)
    qprof_attn_indexer_score(const float* __restrict__ q, const float* __restrict__ w,
                             const uint16_t* __restrict__ keys, const int32_t* __restrict__ lens,
                             int heads, int dim, int stride, float* __restrict__ scores) {
  IndexerScoreBody(q, w, keys, lens, heads, dim, stride, scores);
}

extern "C" __global__ void __launch_bounds__(kIdxTopkThreads)
    qprof_attn_indexer_topk(const float* __restrict__ scores, const int32_t* __restrict__ lens,
                            int stride, int index_topk, int window, int out_topk,
                            int32_t* __restrict__ indices, int32_t* __restrict__ counts) {
  IndexerTopkBody(scores, lens, stride, index_topk, window, out_topk, indices, counts);
}

namespace qprof::kernels::cuda {

absl::Status LaunchIndexerTopk(const IndexerParams& p, cudaStream_t stream) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError("indexer: " + m); };
  if (!p.q || !p.head_weights || !p.keys || !p.seq_lens || !p.scores || !p.indices)
    return bad("q, head_weights, keys, seq_lens, scores and indices must be set");
  if (p.batch <= 0 || p.batch > 65535 || p.index_heads <= 0 || p.index_heads > kIdxMaxHeads ||
      p.index_dim <= 0 || p.index_dim > kIdxMaxDim || p.kv_seq_stride <= 0 ||
      p.kv_seq_stride > kIdxMaxLen || p.out_topk <= 0 || p.index_topk < 0 || p.window < 0)
    return bad(absl::StrCat("unsupported shape: batch ", p.batch, ", index_heads ", p.index_heads,
                            " (<= 64), index_dim ", p.index_dim, " (<= 128), kv_seq_stride ",
                            p.kv_seq_stride, " (<= 12288), out_topk ", p.out_topk));
  const IndexerLaunch l = IndexerPlan(p);  // shared with the warp emulation
  qprof_attn_indexer_score<<<dim3(l.score_grid.x, l.score_grid.y, l.score_grid.z), kIdxScoreThreads, 0,
                             stream>>>(p.q, p.head_weights, p.keys, p.seq_lens, p.index_heads,
                                       p.index_dim, p.kv_seq_stride, p.scores);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_indexer_score");
  // The 48 KiB default covers static + dynamic shared memory (the kernel has ~150 B of
  // its own), so the opt-in compares their sum, per device (kernels/common/per_device.h).
  static SmemOptInState* const topk_smem = new SmemOptInState();
  RETURN_IF_ERROR_STATUS(
      EnsureDynamicSmem(reinterpret_cast<const void*>(qprof_attn_indexer_topk), l.topk_smem, *topk_smem));
  qprof_attn_indexer_topk<<<dim3(l.topk_grid.x, l.topk_grid.y, l.topk_grid.z), kIdxTopkThreads, l.topk_smem,
                            stream>>>(p.scores, p.seq_lens, p.kv_seq_stride, p.index_topk, p.window,
                                      p.out_topk, p.indices, p.counts);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_indexer_topk");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
