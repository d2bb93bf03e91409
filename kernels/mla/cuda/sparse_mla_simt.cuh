// Sparse MLA decode, SIMT tiled kernel (qprof_attn_sparse_mla_simt): FP32 FMA over the
// selected latent tokens. Block = 8 warps = 8 heads of one sequence; the KV rows of a tile
// of 16 selected tokens are staged once in shared memory (BF16 -> FP32) and used by all 8
// heads. Each warp keeps its head's online-softmax state (max, sum) and its 512-wide output
// in registers (16 floats per lane), so the only shared-memory traffic per tile is the KV
// tile. Scores: lane-split dot products reduced with shuffles. No tensor instructions.
#ifndef QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_SIMT_CUH_
#define QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_SIMT_CUH_

#include <math.h>
#include <stdint.h>

#include "kernels/common/cuda/device_helpers.cuh"
#include "kernels/mla/cuda/mla_mma_lanes.h"  // kMlaDv, kMlaDqk
#include "kernels/mla/cuda/sparse_mla_args.h"

namespace qprof::kernels::cuda {

inline constexpr int kSimtHeads = 8;   // warps per block
inline constexpr int kSimtTile = 16;   // tokens per tile

__device__ __forceinline__ void SparseMlaSimtBody(const SparseMlaArgs& a) {
  __shared__ float kvs[kSimtTile][kMlaDqk];  // 36 KB
  __shared__ int valid[kSimtTile];
  __shared__ float ssc[kSimtHeads][kSimtTile];  // this tile's scores per head
  const int b = blockIdx.y;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int h = blockIdx.x * kSimtHeads + warp;
  const bool head_ok = h < a.heads;
  const float* q = a.q + (static_cast<int64_t>(b) * a.heads + (head_ok ? h : 0)) * kMlaDqk;
  float qr[kMlaDqk / 32];  // lane's 18 query elements: dims lane + 32 i
#pragma unroll
  for (int i = 0; i < kMlaDqk / 32; ++i) qr[i] = q[lane + 32 * i];
  float acc[kMlaDv / 32];
#pragma unroll
  for (int i = 0; i < kMlaDv / 32; ++i) acc[i] = 0.f;
  float m = -INFINITY, l = 0.f;
  const int32_t* idx = a.indices + static_cast<int64_t>(b) * a.topk;
  for (int t0 = 0; t0 < a.topk; t0 += kSimtTile) {
    __syncthreads();
    for (int p = threadIdx.x; p < kSimtTile * (kMlaDqk / 8); p += blockDim.x) {
      const int r = p / (kMlaDqk / 8), c = (p % (kMlaDqk / 8)) * 8;
      const int t = t0 + r < a.topk ? idx[t0 + r] : -1;
      float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (t >= 0) {
        const uint4 w = *reinterpret_cast<const uint4*>(
            a.kv + (static_cast<int64_t>(b) * a.kv_seq_stride + t) * kMlaDqk + c);
        const uint32_t ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          v[2 * j] = __uint_as_float(ws[j] << 16);
          v[2 * j + 1] = __uint_as_float(ws[j] & 0xFFFF0000u);
        }
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) kvs[r][c + j] = v[j];
      if (c == 0) valid[r] = t >= 0;
    }
    __syncthreads();
    if (!head_ok) continue;
    float tmax = -INFINITY;
#pragma unroll 1
    for (int r = 0; r < kSimtTile; ++r) {
      float d = 0.f;
#pragma unroll
      for (int i = 0; i < kMlaDqk / 32; ++i) d = fmaf(qr[i], kvs[r][lane + 32 * i], d);
      d = WarpSum(d) * a.softmax_scale;
      const float sr = valid[r] ? d : -INFINITY;
      if (lane == 0) ssc[warp][r] = sr;
      tmax = fmaxf(tmax, sr);
    }
    __syncwarp();
    const MlaRescale rs = MlaOnlineRescale(m, tmax);  // shared with the MMA kernel
    if (rs.none) continue;  // nothing valid yet
    const float alpha = rs.alpha;
    l *= alpha;
#pragma unroll
    for (int i = 0; i < kMlaDv / 32; ++i) acc[i] *= alpha;
#pragma unroll 2
    for (int r = 0; r < kSimtTile; ++r) {
      const float p = MlaProb(ssc[warp][r], rs);  // 0 for invalid rows
      l += p;
#pragma unroll
      for (int i = 0; i < kMlaDv / 32; ++i) acc[i] = fmaf(p, kvs[r][lane + 32 * i], acc[i]);
    }
    m = rs.m_new;
    __syncwarp();
  }
  if (!head_ok) return;
  float* o = a.out + (static_cast<int64_t>(b) * a.heads + h) * kMlaDv;
  const float inv = MlaInvSum(l);
#pragma unroll
  for (int i = 0; i < kMlaDv / 32; ++i) o[lane + 32 * i] = acc[i] * inv;
  if (a.lse && lane == 0) a.lse[static_cast<int64_t>(b) * a.heads + h] = MlaLse(m, l);
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_SIMT_CUH_
