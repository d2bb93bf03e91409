// Small kernels of the decode step (see common_cuda.h).
#include <cuda_runtime.h>
#include <math.h>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/common_cuda.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/device_helpers.cuh"
#include "kernels/common/cuda/gemm_mma.cuh"
#include "kernels/common/cuda/router_topk.cuh"

using namespace qprof::kernels::cuda;

extern "C" __global__ void __launch_bounds__(256)
    qprof_embedding(const int32_t* __restrict__ ids, const uint16_t* __restrict__ table, int dim,
                    float* __restrict__ out) {
  const int r = blockIdx.x;
  const uint16_t* row = table + static_cast<int64_t>(ids[r]) * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x)
    out[static_cast<int64_t>(r) * dim + c] = Bf16BitsToFloat(row[c]);
}

extern "C" __global__ void __launch_bounds__(256)
    qprof_norm_rmsnorm(const float* x, int x_stride, const uint16_t* __restrict__ w, int cols, float eps,
                  float* out, int out_stride) {
  __shared__ float red[32];
  const float* xr = x + static_cast<int64_t>(blockIdx.x) * x_stride;
  float ss = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) ss = fmaf(xr[c], xr[c], ss);
  ss = WarpSum(ss);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0.f;
    v = WarpSum(v);
    if (threadIdx.x == 0) red[0] = v;
  }
  __syncthreads();
  const float inv = 1.0f / sqrtf(red[0] / static_cast<float>(cols) + eps);
  float* o = out + static_cast<int64_t>(blockIdx.x) * out_stride;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) o[c] = xr[c] * inv * Bf16BitsToFloat(w[c]);
}

// One block per row; thread i handles pair i of every head. Angles in double like RopeCpu.
extern "C" __global__ void __launch_bounds__(128)
    qprof_rope(float* x, const int32_t* __restrict__ positions, int heads, int rope_dim,
               int head_stride, int row_stride, float theta) {
  const int r = blockIdx.x;
  const int half = rope_dim / 2;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const double freq = pow(static_cast<double>(theta), -2.0 * i / rope_dim);
    const double a = static_cast<double>(positions[r]) * freq;
    double sd, cd;
    sincos(a, &sd, &cd);
    const float cs = static_cast<float>(cd), sn = static_cast<float>(sd);
    for (int h = 0; h < heads; ++h) {
      float* v = x + static_cast<int64_t>(r) * row_stride + static_cast<int64_t>(h) * head_stride;
      const float p = v[2 * i], q = v[2 * i + 1];
      v[2 * i] = p * cs - q * sn;
      v[2 * i + 1] = p * sn + q * cs;
    }
  }
}

// Three names for one body so that the LM head and the router's gate projection are
// attributed to their own registry ids (gemm.dense, gemm.lm_head, moe.router).
extern "C" __global__ void __launch_bounds__(kGemmWarps * 32)
    qprof_gemm_dense(const float* __restrict__ x, const uint16_t* __restrict__ w, float* y, int m,
                     int n, int k, int accumulate) {
  DenseGemmMmaBody(x, w, y, m, n, k, accumulate);
}
extern "C" __global__ void __launch_bounds__(kGemmWarps * 32)
    qprof_gemm_lm_head(const float* __restrict__ x, const uint16_t* __restrict__ w, float* y, int m,
                       int n, int k, int accumulate) {
  DenseGemmMmaBody(x, w, y, m, n, k, accumulate);
}

extern "C" __global__ void __launch_bounds__(kGemmWarps * 32)
    qprof_moe_router_gemm(const float* __restrict__ x, const uint16_t* __restrict__ w, float* y,
                          int m, int n, int k, int accumulate) {
  DenseGemmMmaBody(x, w, y, m, n, k, accumulate);
}

// Appends the new token's latent KV row and index key (FP32 -> BF16) at each sequence's
// position: kv[(b*stride + pos[b]) * d_qk + c] = bf16(kv_new[b, c]); same for index keys.
extern "C" __global__ void __launch_bounds__(256)
    qprof_attn_kv_append(const float* __restrict__ kv_new, const float* __restrict__ ik_new,
                         const int32_t* __restrict__ pos, int stride, int d_qk, int index_dim,
                         uint16_t* __restrict__ kv, uint16_t* __restrict__ ikeys) {
  const int b = blockIdx.x;
  const int64_t row = static_cast<int64_t>(b) * stride + pos[b];
  for (int c = threadIdx.x; c < d_qk; c += blockDim.x)
    kv[row * d_qk + c] = FloatToBf16Bits(kv_new[static_cast<int64_t>(b) * d_qk + c]);
  for (int c = threadIdx.x; c < index_dim; c += blockDim.x)
    ikeys[row * index_dim + c] = FloatToBf16Bits(ik_new[static_cast<int64_t>(b) * index_dim + c]);
}

// Warp per token (router_topk.cuh).
extern "C" __global__ void __launch_bounds__(kRouterThreads)
    qprof_moe_router_topk(const float* __restrict__ logits, const float* __restrict__ bias, int tokens,
                          int experts, int topk, float route_scale, int32_t* __restrict__ ids,
                          float* __restrict__ weights) {
  RouterTopkBody(logits, bias, tokens, experts, topk, route_scale, ids, weights);
}

extern "C" __global__ void __launch_bounds__(256)
    qprof_sampling_argmax(const float* __restrict__ logits, int cols, int32_t* __restrict__ out) {
  __shared__ float sv[32];
  __shared__ int si[32];
  const float* l = logits + static_cast<int64_t>(blockIdx.x) * cols;
  float best = -INFINITY;
  int bi = 0x7fffffff;
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    if (l[c] > best) { best = l[c]; bi = c; }  // strict: lowest index per thread; NaN never wins
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ob = __shfl_xor_sync(0xffffffffu, best, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (ob > best || (ob == best && oi < bi)) { best = ob; bi = oi; }
  }
  if ((threadIdx.x & 31) == 0) { sv[threadIdx.x >> 5] = best; si[threadIdx.x >> 5] = bi; }
  __syncthreads();
  if (threadIdx.x == 0) {
    best = sv[0];
    bi = si[0];
    for (int w = 1; w < blockDim.x / 32; ++w)
      if (sv[w] > best || (sv[w] == best && si[w] < bi)) { best = sv[w]; bi = si[w]; }
    out[blockIdx.x] = bi == 0x7fffffff ? 0 : bi;  // all NaN/-inf: index 0 like ArgmaxCpu
  }
}

namespace qprof::kernels::cuda {
namespace {
absl::Status Bad(const char* op, const char* what) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": ", what));
}
}  // namespace

absl::Status LaunchEmbedding(const EmbeddingParams& p, cudaStream_t s) {
  if (!p.ids || !p.table || !p.out) return Bad("embedding", "ids, table and out must be set");
  if (p.rows <= 0 || p.dim <= 0) return Bad("embedding", "rows and dim must be positive");
  qprof_embedding<<<p.rows, 256, 0, s>>>(p.ids, p.table, p.dim, p.out);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_embedding");
  return absl::OkStatus();
}

absl::Status LaunchRmsNorm(const RmsNormParams& p, cudaStream_t s) {
  if (!p.x || !p.weight || !p.out) return Bad("rmsnorm", "x, weight and out must be set");
  if (p.rows <= 0 || p.cols <= 0) return Bad("rmsnorm", "rows and cols must be positive");
  const int xs = p.x_stride > 0 ? p.x_stride : p.cols;
  const int os = p.out_stride > 0 ? p.out_stride : p.cols;
  qprof_norm_rmsnorm<<<p.rows, 256, 0, s>>>(p.x, xs, p.weight, p.cols, p.eps, p.out, os);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_norm_rmsnorm");
  return absl::OkStatus();
}

absl::Status LaunchRope(const RopeParams& p, cudaStream_t s) {
  if (!p.x || !p.positions) return Bad("rope", "x and positions must be set");
  if (p.rows <= 0 || p.heads <= 0 || p.rope_dim <= 0 || p.rope_dim % 2)
    return Bad("rope", "rows, heads positive and rope_dim positive and even");
  qprof_rope<<<p.rows, 128, 0, s>>>(p.x, p.positions, p.heads, p.rope_dim, p.head_stride,
                                    p.row_stride, p.theta);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_rope");
  return absl::OkStatus();
}

absl::Status LaunchDenseGemmImpl(const DenseGemmParams& p, cudaStream_t s, int which) {
  const char* name = which == 1 ? "qprof_gemm_lm_head" : which == 2 ? "qprof_moe_router_gemm"
                                                                    : "qprof_gemm_dense";
  if (!p.x || !p.w || !p.y) return Bad(name, "x, w and y must be set");
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return Bad(name, "m, n, k must be positive");
  if (p.k % 32) return Bad(name, "k must be a multiple of 32 (16-byte weight loads per lane)");
  const LaunchDims g = DenseGemmGrid(p.n);  // shared with the warp emulation
  const dim3 grid(g.x, g.y, g.z);
  if (which == 1) {
    qprof_gemm_lm_head<<<grid, kGemmThreads, 0, s>>>(p.x, p.w, p.y, p.m, p.n, p.k, p.accumulate);
  } else if (which == 2) {
    qprof_moe_router_gemm<<<grid, kGemmThreads, 0, s>>>(p.x, p.w, p.y, p.m, p.n, p.k, p.accumulate);
  } else {
    qprof_gemm_dense<<<grid, kGemmThreads, 0, s>>>(p.x, p.w, p.y, p.m, p.n, p.k, p.accumulate);
  }
  RETURN_IF_CUDA_LAUNCH_ERROR(name);
  return absl::OkStatus();
}

absl::Status LaunchDenseGemm(const DenseGemmParams& p, cudaStream_t s) {
  return LaunchDenseGemmImpl(p, s, 0);
}
absl::Status LaunchLmHead(const DenseGemmParams& p, cudaStream_t s) {
  return LaunchDenseGemmImpl(p, s, 1);
}
absl::Status LaunchRouterGemm(const DenseGemmParams& p, cudaStream_t s) {
  return LaunchDenseGemmImpl(p, s, 2);
}

absl::Status LaunchKvAppend(const float* kv_new, const float* ik_new, const int32_t* positions,
                            int batch, int stride, int d_qk, int index_dim, uint16_t* kv,
                            uint16_t* index_keys, cudaStream_t s) {
  if (!kv_new || !ik_new || !positions || !kv || !index_keys || batch <= 0)
    return Bad("kv_append", "pointers must be set and batch positive");
  qprof_attn_kv_append<<<batch, 256, 0, s>>>(kv_new, ik_new, positions, stride, d_qk, index_dim,
                                             kv, index_keys);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_attn_kv_append");
  return absl::OkStatus();
}

absl::Status LaunchRouterTopk(const RouterTopkParams& p, cudaStream_t s) {
  if (!p.logits || !p.topk_ids || !p.topk_weights)
    return Bad("router", "logits, topk_ids and topk_weights must be set");
  if (p.topk < 1 || p.topk > p.experts) return Bad("router", "topk outside 1..experts");
  if (p.experts > 8192) return Bad("router", "experts must be <= 8192");
  const RouterTopkLaunch l = RouterTopkPlan(p);  // shared with the warp emulation
  qprof_moe_router_topk<<<dim3(l.grid.x, l.grid.y, l.grid.z), kRouterThreads, l.smem, s>>>(
      p.logits, p.bias, p.tokens, p.experts, p.topk, p.route_scale, p.topk_ids, p.topk_weights);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_moe_router_topk");
  return absl::OkStatus();
}

absl::Status LaunchArgmax(const ArgmaxParams& p, cudaStream_t s) {
  if (!p.logits || !p.ids) return Bad("argmax", "logits and ids must be set");
  if (p.rows <= 0 || p.cols <= 0) return Bad("argmax", "rows and cols must be positive");
  qprof_sampling_argmax<<<p.rows, 256, 0, s>>>(p.logits, p.cols, p.ids);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_sampling_argmax");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
