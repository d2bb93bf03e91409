// Sparse MLA decode on tensor cores (qprof_attn_sparse_mla_mma): mma.sync m16n8k16 BF16
// with FP32 accumulation for both QK^T and PV, over tiles of 32 selected tokens.
//
// Block = 4 warps = one sequence x 16 heads (the MMA's m). Per tile:
//  1. cp.async gathers the 32 selected KV rows (576 BF16 each, rows padded to 1168 bytes so
//     that 8 consecutive rows start in 8 different bank groups) into the other buffer while
//     this tile is computed (double buffering); padding indices (-1) are zero-filled and
//     masked to -inf.
//  2. QK^T: warp w computes tokens 8w..8w+7 for all 16 heads over k = 576 (36 MMAs);
//     Q is staged once as BF16. Scores (scaled) go to shared memory.
//  3. Online softmax in registers: each thread owns exactly the 16 P values of its
//     A fragment (rows g, g+8; tokens 16j+2t.., +8); row max and sum are reduced over the
//     quad of lanes that share a row. FP32 state (m, l) per row; P is rounded to BF16.
//  4. PV: warp w owns output dims 128w..128w+127 (16 n8 tiles, 64 FP32 accumulators per
//     lane); V fragments come straight from the KV tile with ldmatrix.x4.trans (the value
//     is the latent c itself, the first 512 dims of the row).
// Works for any topk (tail tiles masked) and any head count (rows past `heads` are zero).
// Small batches: one block per (sequence, 16 heads) gives only 4 blocks at batch 1 with 64
// heads, so the launcher splits the token tiles over grid.z (flash-decoding) until about two
// blocks per SM run, and qprof_attn_sparse_mla_mma_combine merges the partial softmax states.
//
// Both bodies are written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles them into the kernels, and the CPU warp emulation (tests/kernels/warp_emu/
// mla_mma_emu_test.cc) runs these same functions, split and unsplit, checking the cp.async
// groups and barriers of the double buffer.
#ifndef QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_MMA_CUH_
#define QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_MMA_CUH_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <algorithm>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/mla/cuda/mla_mma_lanes.h"
#include "kernels/mla/cuda/sparse_mla_args.h"
#include "kernels/mla/params.h"

namespace qprof::kernels::cuda {

inline constexpr size_t kMmaSmemBytes =
    16 * kMmaRowBytes + 2 * kMmaTile * kMmaRowBytes + 16 * kMmaSsStride * 4 + 2 * kMmaTile * 4;

// What one thread of SparseMlaMmaBody works on: its block's shared buffers, its sequence
// and 16 heads, its warp and lane (lane map: mla_mma_lanes.h).
struct MlaMmaThread {
  unsigned char* qs;     // [16 heads][kMmaRowBytes] Q as BF16
  unsigned char* kvb;    // [2 buffers][kMmaTile rows][kMmaRowBytes] selected KV rows
  float* ss;             // [16 heads][kMmaSsStride] scaled scores of the tile
  int* vld;              // [2 buffers][kMmaTile] whether each row is a real token
  int b, h0;             // sequence, first head
  int warp, lane, g, t;
  const int32_t* idx;    // the sequence's selected token indices
  const uint16_t* kv_seq;  // the sequence's KV rows
};

// 1. Q of the block's 16 heads into shared memory as BF16 (rows past `heads` zero).
QPROF_WARP_FN void MlaMmaStageQ(const SparseMlaArgs& a, const MlaMmaThread& th) {
  for (int p = ThreadIdxX(); p < 16 * kMlaDqk / 2; p += BlockDimX()) {
    const int r = p / (kMlaDqk / 2), c = (p % (kMlaDqk / 2)) * 2;
    float x0 = 0.f, x1 = 0.f;
    if (th.h0 + r < a.heads) {
      const float* q = a.q + (static_cast<int64_t>(th.b) * a.heads + th.h0 + r) * kMlaDqk + c;
      x0 = q[0];
      x1 = q[1];
    }
    StShared<uint32_t>(th.qs + r * kMmaRowBytes + c * 2, PackBf16x2(x0, x1));
  }
}

// cp.async of token tile `tile` into buffer `buf`; padding indices (-1) are zero-filled and
// marked invalid.
QPROF_WARP_FN void MlaMmaIssueTile(const SparseMlaArgs& a, const MlaMmaThread& th, int tile,
                                   int buf) {
  unsigned char* dst = th.kvb + buf * kMmaTile * kMmaRowBytes;
  for (int p = ThreadIdxX(); p < kMmaTile * (kMlaDqk / 8); p += BlockDimX()) {
    const int r = p / (kMlaDqk / 8), piece = p % (kMlaDqk / 8);
    const int i = tile * kMmaTile + r;
    const int tok = i < a.topk ? th.idx[i] : -1;
#if QPROF_MUTANT(SMEM_STRIDE)  // body mutation: rows staged unpadded (1152 bytes, not 1168)
    CpAsync16(dst + r * (kMlaDqk * 2) + piece * 16,
              th.kv_seq + static_cast<int64_t>(tok >= 0 ? tok : 0) * kMlaDqk + piece * 8, tok >= 0 ? 16 : 0);
#else
    CpAsync16(dst + r * kMmaRowBytes + piece * 16,
              th.kv_seq + static_cast<int64_t>(tok >= 0 ? tok : 0) * kMlaDqk + piece * 8, tok >= 0 ? 16 : 0);
#endif
    if (piece == 0) StShared<int>(th.vld + buf * kMmaTile + r, tok >= 0);
  }
}

// 4. O[16 heads][dims 128w..] += P[16][32] V[32][dims], V straight from the KV tile `kt`.
QPROF_WARP_FN void MlaMmaPv(const MlaMmaThread& th, const unsigned char* kt,
                            const uint32_t (&pa)[2][4], float (&acc)[16][4]) {
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int k = MlaPvLdRow(j, th.lane);
#pragma unroll
    for (int np = 0; np < 8; ++np) {
      const int n = MlaPvLdCol(th.warp, np, th.lane);
      uint32_t r0, r1, r2, r3;
      LdmatrixX4Trans(SharedAddr(kt + k * kMmaRowBytes + n * 2), r0, r1, r2, r3);
      MmaBf16m16n8k16(acc[2 * np], pa[j], r0, r1);
      MmaBf16m16n8k16(acc[2 * np + 1], pa[j], r2, r3);
    }
  }
}

// The block's result: unnormalised partials and (m, l) for the combine kernel when the
// tiles are split over grid.z, else the normalised output and the log-sum-exp.
QPROF_WARP_FN void MlaMmaWrite(const SparseMlaArgs& a, const MlaMmaThread& th,
                               const float (&m)[2], const float (&l)[2],
                               const float (&acc)[16][4]) {
  const int b = th.b, warp = th.warp, t = th.t;
  if (a.splits > 1) {  // unnormalised partials for the combine kernel
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const int h = th.h0 + th.g + 8 * rr;
      if (h >= a.heads) continue;
      const int64_t ph = (static_cast<int64_t>(b) * a.heads + h) * a.splits + BlockIdxZ();
      float* o = a.part_o + ph * kMlaDv + MlaOutDim(warp, 0, t);
#pragma unroll
      for (int n = 0; n < 16; ++n) StGlobal<F32x2>(o + 8 * n, F32x2{acc[n][2 * rr], acc[n][2 * rr + 1]});
      if (warp == 0 && t == 0) {
        a.part_ml[2 * ph] = m[rr];
        a.part_ml[2 * ph + 1] = l[rr];
      }
    }
    return;
  }
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int h = th.h0 + th.g + 8 * rr;
    if (h >= a.heads) continue;
    const float inv = MlaInvSum(l[rr]);
    float* o = a.out + (static_cast<int64_t>(b) * a.heads + h) * kMlaDv + MlaOutDim(warp, 0, t);
#pragma unroll
    for (int n = 0; n < 16; ++n)
      StGlobal<F32x2>(o + 8 * n, F32x2{acc[n][2 * rr] * inv, acc[n][2 * rr + 1] * inv});
    if (a.lse && warp == 0 && t == 0)
      a.lse[static_cast<int64_t>(b) * a.heads + h] = MlaLse(m[rr], l[rr]);
  }
}

// This thread's block, sequence, heads, warp and lane.
QPROF_WARP_FN MlaMmaThread MlaMmaThreadOf(const SparseMlaArgs& a) {
  MlaMmaThread th;
  th.qs = DynamicShared();
  th.kvb = th.qs + 16 * kMmaRowBytes;
  th.ss = reinterpret_cast<float*>(th.kvb + 2 * kMmaTile * kMmaRowBytes);
  th.vld = reinterpret_cast<int*>(th.ss + 16 * kMmaSsStride);
  th.b = BlockIdxY();
  th.h0 = BlockIdxX() * 16;
  th.warp = ThreadIdxX() >> 5;
  th.lane = ThreadIdxX() & 31;
  th.g = th.lane >> 2;
  th.t = th.lane & 3;
  th.idx = a.indices + static_cast<int64_t>(th.b) * a.topk;
  th.kv_seq = a.kv + static_cast<int64_t>(th.b) * a.kv_seq_stride * kMlaDqk;
  return th;
}

QPROF_WARP_FN void SparseMlaMmaBody(const SparseMlaArgs& a) {
  const MlaMmaThread th = MlaMmaThreadOf(a);
  const int warp = th.warp, g = th.g, t = th.t;
  MlaMmaStageQ(a, th);

  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  float acc[16][4];
#pragma unroll
  for (int n = 0; n < 16; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  const int all_tiles = (a.topk + kMmaTile - 1) / kMmaTile;
  const int per_split = (all_tiles + a.splits - 1) / a.splits;
  const int tile0 = BlockIdxZ() * per_split;
  const int tiles = MinI(all_tiles, tile0 + per_split);  // this block: [tile0, tiles)
  if (tile0 < tiles) MlaMmaIssueTile(a, th, tile0, 0);
  CpAsyncCommit();
  for (int tile = tile0; tile < tiles; ++tile) {
    const int buf = (tile - tile0) & 1;
    if (tile + 1 < tiles) MlaMmaIssueTile(a, th, tile + 1, buf ^ 1);
    CpAsyncCommit();
#if QPROF_MUTANT(CP_ASYNC_WAIT)  // body mutation: waits for all but the two newest groups
    CpAsyncWait<2>();
#else
    CpAsyncWait<1>();
#endif
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: other threads' cp.async data read unordered
    SyncThreads();
#endif
    const unsigned char* kt = th.kvb + buf * kMmaTile * kMmaRowBytes;
    // 2. S[16 heads][tokens 8w..8w+7], scaled, to `ss`; padded tokens -inf.
    float sacc[4] = {0.f, 0.f, 0.f, 0.f};
    const unsigned char* krow = kt + MlaQkBRow(warp, g) * kMmaRowBytes;
#pragma unroll 6
    for (int s = 0; s < kMlaDqk / 16; ++s) {
      uint32_t af[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) af[r] = LdShared<uint32_t>(th.qs + MlaQkARow(g, r) * kMmaRowBytes + MlaQkByte(s, t, r));
      MmaBf16m16n8k16(sacc, af, LdShared<uint32_t>(krow + MlaQkByte(s, t, 0)),
                      LdShared<uint32_t>(krow + MlaQkByte(s, t, 2)));
    }
    {
      const int* v = th.vld + buf * kMmaTile;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int c = MlaScoreCol(warp, t, i);
        StShared<float>(th.ss + MlaScoreRow(g, i) * kMmaSsStride + c,
                        LdShared<int>(v + c) ? sacc[i] * a.softmax_scale : -INFINITY);
      }
    }
    SyncThreads();  // every warp's scores are in `ss`
    // 3. online softmax on this thread's fragment values.
    uint32_t pa[2][4];
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      const float* srow = th.ss + (g + 8 * rr) * kMmaSsStride;
      float v[8];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
#pragma unroll
        for (int q = 0; q < 4; ++q) v[4 * j + q] = LdShared<float>(srow + MlaPCol(j, t, q));
      }
      float tmax = v[0];
#pragma unroll
      for (int i = 1; i < 8; ++i) tmax = fmaxf(tmax, v[i]);
      tmax = fmaxf(tmax, ShflXor(tmax, 1));
      tmax = fmaxf(tmax, ShflXor(tmax, 2));
      const MlaRescale rs = MlaOnlineRescale(m[rr], tmax);
      const float alpha = rs.alpha, mn = rs.m_new;
      float psum = 0.f;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        v[i] = MlaProb(v[i], rs);
        psum += v[i];
      }
      psum += ShflXor(psum, 1);
      psum += ShflXor(psum, 2);
      l[rr] = l[rr] * alpha + psum;
      m[rr] = mn;
#pragma unroll
      for (int n = 0; n < 16; ++n) {
        acc[n][2 * rr] *= alpha;
        acc[n][2 * rr + 1] *= alpha;
      }
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        pa[j][MlaPReg(rr, 0)] = PackBf16x2(v[4 * j], v[4 * j + 1]);
        pa[j][MlaPReg(rr, 1)] = PackBf16x2(v[4 * j + 2], v[4 * j + 3]);
      }
    }
    MlaMmaPv(th, kt, pa, acc);
    SyncThreads();  // every warp is done with `buf` and `ss` before they are refilled
  }
  MlaMmaWrite(a, th, m, l, acc);
}

// Merges split partials: M = max m_s, L = sum l_s e^(m_s - M), out = sum acc_s e^(m_s - M) / L,
// lse = M + log L. One block per (sequence, head), 128 threads x 4 dims.
QPROF_WARP_FN void SparseMlaCombineBody(const SparseMlaArgs& a) {
  const int64_t bh = static_cast<int64_t>(BlockIdxY()) * a.heads + BlockIdxX();
  const float* ml = a.part_ml + bh * a.splits * 2;
  float mx = -INFINITY;
  for (int s = 0; s < a.splits; ++s) mx = fmaxf(mx, ml[2 * s]);
  float total = 0.f;
  for (int s = 0; s < a.splits; ++s)
    total += ml[2 * s + 1] > 0.f ? ml[2 * s + 1] * MlaExp(ml[2 * s] - mx) : 0.f;
  const float inv = total > 0.f ? 1.f / total : 0.f;
  for (int d = ThreadIdxX(); d < kMlaDv; d += BlockDimX()) {
    float v = 0.f;
    for (int s = 0; s < a.splits; ++s) {
      if (ml[2 * s + 1] > 0.f) v += a.part_o[(bh * a.splits + s) * kMlaDv + d] * MlaExp(ml[2 * s] - mx);
    }
    a.out[bh * kMlaDv + d] = v * inv;
  }
  if (a.lse && ThreadIdxX() == 0) a.lse[bh] = total > 0.f ? mx + logf(total) : -INFINITY;
}

// Launch plans, shared by the launcher (sparse_mla_mma.cu) and the emulation.
inline constexpr unsigned kMlaMmaThreads = 128;      // 4 warps: one sequence x 16 heads
inline constexpr unsigned kMlaCombineThreads = 128;  // per (sequence, head): 4 dims a thread

// Blocks the token tiles are split over with `sms` SMs: aim for ~2 blocks per SM, keep >= 2
// tiles per split (the cp.async double buffer), at most 64.
inline int SparseMlaMmaSplitCount(const SparseMlaParams& p, int sms) {
  const int blocks = p.batch * ((p.heads + 15) / 16);
  const int tiles = (p.topk + kMmaTile - 1) / kMmaTile;
  int splits = (2 * sms + blocks - 1) / blocks;
  splits = std::min(splits, std::max(1, tiles / 2));
  return std::max(1, std::min(splits, 64));
}
// Workspace of a split launch: partial outputs and (m, l) per (sequence, head, split).
inline size_t SparseMlaMmaWorkspaceBytesFor(const SparseMlaParams& p, int splits) {
  if (splits <= 1) return 0;
  const size_t rows = static_cast<size_t>(p.batch) * p.heads * splits;
  return rows * (kMlaDv + 2) * sizeof(float) + 256;
}
struct SparseMlaMmaLaunch {
  LaunchDims grid;          // (head blocks, batch, splits); kMlaMmaThreads, kMmaSmemBytes dynamic
  LaunchDims combine_grid;  // (heads, batch): only when args.splits > 1
  SparseMlaArgs args;
};
// `splits` > 1 needs a workspace of SparseMlaMmaWorkspaceBytesFor(p, splits) bytes.
inline SparseMlaMmaLaunch SparseMlaMmaPlan(const SparseMlaParams& p, int splits, void* workspace) {
  SparseMlaMmaLaunch l{{}, {}, {p.q, p.kv, p.indices, p.out, p.lse, p.heads, p.topk, p.kv_seq_stride,
                                p.softmax_scale}};
  if (splits > 1 && workspace != nullptr) {
    l.args.splits = splits;
    l.args.part_o = static_cast<float*>(workspace);
    l.args.part_ml = l.args.part_o + static_cast<size_t>(p.batch) * p.heads * splits * kMlaDv;
  }
  l.grid = {static_cast<unsigned>((p.heads + 15) / 16), static_cast<unsigned>(p.batch),
            static_cast<unsigned>(l.args.splits)};
  l.combine_grid = {static_cast<unsigned>(p.heads), static_cast<unsigned>(p.batch), 1};
  return l;
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_MMA_CUH_
