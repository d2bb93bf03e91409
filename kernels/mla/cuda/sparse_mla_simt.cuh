// Sparse MLA decode, SIMT tiled kernel (qprof_attn_sparse_mla_simt): FP32 FMA over the
// selected latent tokens. Block = 8 warps = 8 heads of one sequence; the KV rows of a tile
// of 16 selected tokens are staged once in shared memory (BF16 -> FP32) and used by all 8
// heads. Each warp keeps its head's online-softmax state (max, sum) and its 512-wide output
// in registers (16 floats per lane), so the only shared-memory traffic per tile is the KV
// tile. Scores: lane-split dot products reduced with shuffles. No tensor instructions.
//
// The body is written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles it into qprof_attn_sparse_mla_simt (sparse_mla_simt.cu), and the CPU warp
// emulation (tests/kernels/warp_emu/mla_simt_emu_test.cc) runs this same function for every
// thread of every block of SparseMlaSimtPlan's grid.
#ifndef QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_SIMT_CUH_
#define QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_SIMT_CUH_

#include <math.h>
#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/mla/cuda/mla_mma_lanes.h"  // kMlaDv, kMlaDqk, the online softmax
#include "kernels/mla/cuda/sparse_mla_args.h"
#include "kernels/mla/params.h"

namespace qprof::kernels::cuda {

inline constexpr int kSimtHeads = 8;   // warps per block
inline constexpr int kSimtTile = 16;   // tokens per tile

QPROF_WARP_FN void SparseMlaSimtBody(const SparseMlaArgs& a) {
  float (&kvs)[kSimtTile][kMlaDqk] = SharedStatic<float[kSimtTile][kMlaDqk]>();  // 36 KB
  int (&valid)[kSimtTile] = SharedStatic<int[kSimtTile]>();
  float (&ssc)[kSimtHeads][kSimtTile] = SharedStatic<float[kSimtHeads][kSimtTile]>();  // this tile's scores per head
  const int b = BlockIdxY();
  const int warp = ThreadIdxX() >> 5, lane = ThreadIdxX() & 31;
  const int h = BlockIdxX() * kSimtHeads + warp;
  const bool head_ok = h < a.heads;
  const float* q = a.q + (static_cast<int64_t>(b) * a.heads + (head_ok ? h : 0)) * kMlaDqk;
  float qr[kMlaDqk / 32];  // lane's 18 query elements: dims lane + 32 i
#pragma unroll
  for (int i = 0; i < kMlaDqk / 32; ++i) qr[i] = LdGlobal<float>(q + (lane + 32 * i));
  float acc[kMlaDv / 32];
#pragma unroll
  for (int i = 0; i < kMlaDv / 32; ++i) acc[i] = 0.f;
  float m = -INFINITY, l = 0.f;
  const int32_t* idx = a.indices + static_cast<int64_t>(b) * a.topk;
#if QPROF_MUTANT(TAIL_ELEMENT)  // body mutation: a partial last tile of selected tokens is skipped
  for (int t0 = 0; t0 + kSimtTile <= a.topk; t0 += kSimtTile) {
#else
  for (int t0 = 0; t0 < a.topk; t0 += kSimtTile) {
#endif
    SyncThreads();
    for (int p = ThreadIdxX(); p < kSimtTile * (kMlaDqk / 8); p += BlockDimX()) {
      const int r = p / (kMlaDqk / 8), c = (p % (kMlaDqk / 8)) * 8;
      const int t = t0 + r < a.topk ? LdGlobal<int32_t>(idx + (t0 + r)) : -1;
      float v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (t >= 0) {
        const U32x4 w = LdGlobal<U32x4>(a.kv + (static_cast<int64_t>(b) * a.kv_seq_stride + t) * kMlaDqk + c);
        const uint32_t ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          v[2 * j] = reg::BitsAsFloat(ws[j] << 16);
          v[2 * j + 1] = reg::BitsAsFloat(ws[j] & 0xFFFF0000u);
        }
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) StShared<float>(&kvs[r][c + j], v[j]);
      if (c == 0) StShared<int>(&valid[r], t >= 0);
    }
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: the tile read before every thread staged its part
    SyncThreads();
#endif
    if (!head_ok) continue;
    float tmax = -INFINITY;
#pragma unroll 1
    for (int r = 0; r < kSimtTile; ++r) {
      float d = 0.f;
#pragma unroll
      for (int i = 0; i < kMlaDqk / 32; ++i) d = fmaf(qr[i], LdShared<float>(&kvs[r][lane + 32 * i]), d);
      d = WarpSum(d) * a.softmax_scale;
      const float sr = LdShared<int>(&valid[r]) ? d : -INFINITY;
      if (lane == 0) StShared<float>(&ssc[warp][r], sr);
      tmax = fmaxf(tmax, sr);
    }
    SyncWarp();
    const MlaRescale rs = MlaOnlineRescale(m, tmax);  // shared with the MMA kernel
    if (rs.none) continue;  // nothing valid yet
    const float alpha = rs.alpha;
    l *= alpha;
#pragma unroll
    for (int i = 0; i < kMlaDv / 32; ++i) acc[i] *= alpha;
#pragma unroll 2
    for (int r = 0; r < kSimtTile; ++r) {
      const float p = MlaProb(LdShared<float>(&ssc[warp][r]), rs);  // 0 for invalid rows
      l += p;
#pragma unroll
      for (int i = 0; i < kMlaDv / 32; ++i) acc[i] = fmaf(p, LdShared<float>(&kvs[r][lane + 32 * i]), acc[i]);
    }
    m = rs.m_new;
    SyncWarp();
  }
  if (!head_ok) return;
  float* o = a.out + (static_cast<int64_t>(b) * a.heads + h) * kMlaDv;
  const float inv = MlaInvSum(l);
#pragma unroll
  for (int i = 0; i < kMlaDv / 32; ++i) StGlobal<float>(o + (lane + 32 * i), acc[i] * inv);
  if (a.lse && lane == 0) StGlobal<float>(a.lse + (static_cast<int64_t>(b) * a.heads + h), MlaLse(m, l));
}

// Launch plan, shared by the launcher (sparse_mla_simt.cu) and the emulation: one block of
// kSimtHeads warps per (8 heads, sequence), static shared memory only.
inline constexpr int kSimtThreads = kSimtHeads * 32;
struct SparseMlaSimtLaunch {
  LaunchDims grid;  // (head blocks, batch)
  SparseMlaArgs args;
};
inline SparseMlaSimtLaunch SparseMlaSimtPlan(const SparseMlaParams& p) {
  return {{static_cast<unsigned>((p.heads + kSimtHeads - 1) / kSimtHeads), static_cast<unsigned>(p.batch), 1},
          {p.q, p.kv, p.indices, p.out, p.lse, p.heads, p.topk, p.kv_seq_stride, p.softmax_scale}};
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_SIMT_CUH_
