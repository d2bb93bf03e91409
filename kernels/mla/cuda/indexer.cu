// Indexer scoring and top-k kernels and launcher (see indexer.cuh).
#include <math.h>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/smem_opt_in.h"
#include "kernels/common/cuda/device_helpers.cuh"
#include "kernels/mla/cuda/indexer.cuh"
#include "kernels/mla/cuda/mla_cuda.h"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(256)
    qprof_attn_indexer_score(const float* __restrict__ q, const float* __restrict__ w,
                             const uint16_t* __restrict__ keys, const int32_t* __restrict__ lens,
                             int heads, int dim, int stride, float* __restrict__ scores) {
  __shared__ float qs[kIdxMaxHeads][kIdxMaxDim + 1];
  __shared__ float ks[kIdxTile][kIdxMaxDim + 1];
  const int b = blockIdx.y, t0 = blockIdx.x * kIdxTile;
  const int len = lens[b];
  if (t0 >= len) return;
  for (int p = threadIdx.x; p < heads * dim; p += blockDim.x)
    qs[p / dim][p % dim] = q[(static_cast<int64_t>(b) * heads) * dim + p];
  for (int p = threadIdx.x; p < kIdxTile * dim; p += blockDim.x) {
    const int r = p / dim, c = p % dim;
    ks[r][c] = t0 + r < len
                   ? Bf16BitsToFloat(keys[(static_cast<int64_t>(b) * stride + t0 + r) * dim + c])
                   : 0.f;
  }
  __syncthreads();
  const int tok = threadIdx.x >> 4, grp = threadIdx.x & 15;
  float acc = IndexerHeadShare(&qs[0][0], kIdxMaxDim + 1, w + static_cast<int64_t>(b) * heads, ks[tok],
                               heads, dim, grp);
  acc += __shfl_xor_sync(0xffffffffu, acc, 1);
  acc += __shfl_xor_sync(0xffffffffu, acc, 2);
  acc += __shfl_xor_sync(0xffffffffu, acc, 4);
  acc += __shfl_xor_sync(0xffffffffu, acc, 8);
  if (grp == 0 && t0 + tok < len) scores[static_cast<int64_t>(b) * stride + t0 + tok] = acc;
}

extern "C" __global__ void __launch_bounds__(1024)
    qprof_attn_indexer_topk(const float* __restrict__ scores, const int32_t* __restrict__ lens,
                            int stride, int index_topk, int window, int out_topk,
                            int32_t* __restrict__ indices, int32_t* __restrict__ counts) {
  extern __shared__ float sc[];  // [len]
  __shared__ int warp_counts[32];
  __shared__ int base;
  const int b = blockIdx.x, len = lens[b];
  for (int t = threadIdx.x; t < len; t += blockDim.x) sc[t] = scores[static_cast<int64_t>(b) * stride + t];
  if (threadIdx.x == 0) base = 0;
  __syncthreads();
  int32_t* out = indices + static_cast<int64_t>(b) * out_topk;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int t0 = 0; t0 < len; t0 += blockDim.x) {
    const int t = t0 + threadIdx.x;
    bool chosen = false;
    if (t < len) {
      chosen = IndexerChosen(sc, len, t, index_topk, window);
    }
    const unsigned mask = __ballot_sync(0xffffffffu, chosen);
    if (lane == 0) warp_counts[warp] = __popc(mask);
    __syncthreads();
    int before = base;
    for (int w = 0; w < warp; ++w) before += warp_counts[w];
    const int pos = before + __popc(mask & ((1u << lane) - 1u));
    if (chosen && pos < out_topk) out[pos] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
      int total = 0;
      for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w) total += warp_counts[w];
      base += total;
    }
    __syncthreads();
  }
  const int n = base < out_topk ? base : out_topk;
  for (int i = n + threadIdx.x; i < out_topk; i += blockDim.x) out[i] = -1;
  if (counts && threadIdx.x == 0) counts[b] = n;
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
  qprof_attn_indexer_score<<<dim3((p.kv_seq_stride + kIdxTile - 1) / kIdxTile, p.batch), 256, 0,
                             stream>>>(p.q, p.head_weights, p.keys, p.seq_lens, p.index_heads,
                                       p.index_dim, p.kv_seq_stride, p.scores);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_indexer_score");
  // The 48 KiB default covers static + dynamic shared memory (the kernel has ~150 B of
  // its own), so the opt-in compares their sum, per device (kernels/common/per_device.h).
  const size_t smem = static_cast<size_t>(p.kv_seq_stride) * sizeof(float);
  static SmemOptInState* const topk_smem = new SmemOptInState();
  RETURN_IF_ERROR_STATUS(
      EnsureDynamicSmem(reinterpret_cast<const void*>(qprof_attn_indexer_topk), smem, *topk_smem));
  qprof_attn_indexer_topk<<<p.batch, 1024, smem, stream>>>(p.scores, p.seq_lens, p.kv_seq_stride,
                                                           p.index_topk, p.window, p.out_topk,
                                                           p.indices, p.counts);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_indexer_topk");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
