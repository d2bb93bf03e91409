// Small kernels of the decode step (see common_cuda.h).
#include <cuda_runtime.h>
#include <math.h>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda/common_cuda.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/common/cuda/device_helpers.cuh"

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
    qprof_rmsnorm(const float* x, int x_stride, const uint16_t* __restrict__ w, int cols, float eps,
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

// y[m, n] (+)= sum_k W[n, k] x[m, k]. Warp per n; lane streams 16 B (8 BF16) of the row per
// step; up to kMt rows of x per pass (x read through L1, the same for all warps).
inline constexpr int kGemmMt = 8;
extern "C" __global__ void __launch_bounds__(256)
    qprof_dense_gemm_bf16(const float* __restrict__ x, const uint16_t* __restrict__ w, float* y,
                          int m, int n, int k, int accumulate) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int row = blockIdx.x * 8 + warp;
  if (row >= n) return;
  const uint16_t* wr = w + static_cast<int64_t>(row) * k;
  for (int m0 = 0; m0 < m; m0 += kGemmMt) {
    float acc[kGemmMt];
#pragma unroll
    for (int i = 0; i < kGemmMt; ++i) acc[i] = 0.f;
    for (int c = lane * 8; c < k; c += 32 * 8) {
      const uint4 wv = LdgNc128(wr + c);
      const uint32_t ws[4] = {wv.x, wv.y, wv.z, wv.w};
      float wf[8];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        wf[2 * j] = __uint_as_float(ws[j] << 16);
        wf[2 * j + 1] = __uint_as_float(ws[j] & 0xFFFF0000u);
      }
#pragma unroll
      for (int i = 0; i < kGemmMt; ++i) {
        if (m0 + i >= m) break;
        const float* xr = x + static_cast<int64_t>(m0 + i) * k + c;
        const float4 a = *reinterpret_cast<const float4*>(xr);
        const float4 b = *reinterpret_cast<const float4*>(xr + 4);
        float s = acc[i];
        s = fmaf(wf[0], a.x, s); s = fmaf(wf[1], a.y, s); s = fmaf(wf[2], a.z, s);
        s = fmaf(wf[3], a.w, s); s = fmaf(wf[4], b.x, s); s = fmaf(wf[5], b.y, s);
        s = fmaf(wf[6], b.z, s); s = fmaf(wf[7], b.w, s);
        acc[i] = s;
      }
    }
#pragma unroll
    for (int i = 0; i < kGemmMt; ++i) {
      const float v = WarpSum(acc[i]);
      if (lane == 0 && m0 + i < m) {
        float* o = y + static_cast<int64_t>(m0 + i) * n + row;
        *o = accumulate ? *o + v : v;
      }
    }
  }
}

// Warp per token. k rounds: each round every lane proposes its best remaining expert, the
// warp reduces (key desc, index asc), the winner is marked taken.
extern "C" __global__ void __launch_bounds__(128)
    qprof_router_topk(const float* __restrict__ logits, const float* __restrict__ bias, int tokens,
                      int experts, int topk, float route_scale, int32_t* __restrict__ ids,
                      float* __restrict__ weights) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int t = blockIdx.x * 4 + warp;
  if (t >= tokens) return;
  extern __shared__ unsigned char taken_all[];
  unsigned char* taken = taken_all + warp * experts;
  const float* lg = logits + static_cast<int64_t>(t) * experts;
  for (int e = lane; e < experts; e += 32) taken[e] = 0;
  __syncwarp();
  float sum = 0.f;
  for (int j = 0; j < topk; ++j) {
    float best = -INFINITY;
    int bi = 0x7fffffff;
    for (int e = lane; e < experts; e += 32) {
      if (taken[e]) continue;
      const float s = 1.0f / (1.0f + expf(-lg[e]));
      const float key = s + (bias ? bias[e] : 0.f);
      if (key > best || (key == best && e < bi)) { best = key; bi = e; }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ob = __shfl_xor_sync(0xffffffffu, best, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (ob > best || (ob == best && oi < bi)) { best = ob; bi = oi; }
    }
    if (lane == 0) {
      taken[bi] = 1;
      ids[t * topk + j] = bi;
      const float s = 1.0f / (1.0f + expf(-lg[bi]));
      weights[t * topk + j] = s;
      sum += s;
    }
    __syncwarp();
  }
  if (lane == 0)
    for (int j = 0; j < topk; ++j) weights[t * topk + j] = weights[t * topk + j] / sum * route_scale;
}

extern "C" __global__ void __launch_bounds__(256)
    qprof_argmax(const float* __restrict__ logits, int cols, int32_t* __restrict__ out) {
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
  qprof_rmsnorm<<<p.rows, 256, 0, s>>>(p.x, xs, p.weight, p.cols, p.eps, p.out, os);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_rmsnorm");
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

absl::Status LaunchDenseGemm(const DenseGemmParams& p, cudaStream_t s) {
  if (!p.x || !p.w || !p.y) return Bad("dense_gemm", "x, w and y must be set");
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return Bad("dense_gemm", "m, n, k must be positive");
  if (p.k % 8) return Bad("dense_gemm", "k must be a multiple of 8 (16-byte weight loads)");
  qprof_dense_gemm_bf16<<<(p.n + 7) / 8, 256, 0, s>>>(p.x, p.w, p.y, p.m, p.n, p.k,
                                                     p.accumulate ? 1 : 0);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_dense_gemm_bf16");
  return absl::OkStatus();
}

absl::Status LaunchRouterTopk(const RouterTopkParams& p, cudaStream_t s) {
  if (!p.logits || !p.topk_ids || !p.topk_weights)
    return Bad("router", "logits, topk_ids and topk_weights must be set");
  if (p.topk < 1 || p.topk > p.experts) return Bad("router", "topk outside 1..experts");
  if (p.experts > 8192) return Bad("router", "experts must be <= 8192");
  const size_t smem = 4 * static_cast<size_t>(p.experts);
  qprof_router_topk<<<(p.tokens + 3) / 4, 128, smem, s>>>(p.logits, p.bias, p.tokens, p.experts,
                                                         p.topk, p.route_scale, p.topk_ids,
                                                         p.topk_weights);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_router_topk");
  return absl::OkStatus();
}

absl::Status LaunchArgmax(const ArgmaxParams& p, cudaStream_t s) {
  if (!p.logits || !p.ids) return Bad("argmax", "logits and ids must be set");
  if (p.rows <= 0 || p.cols <= 0) return Bad("argmax", "rows and cols must be positive");
  qprof_argmax<<<p.rows, 256, 0, s>>>(p.logits, p.cols, p.ids);
  RETURN_IF_CUDA_LAUNCH_ERROR("qprof_argmax");
  return absl::OkStatus();
}

}  // namespace qprof::kernels::cuda
