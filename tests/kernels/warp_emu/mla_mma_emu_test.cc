// Warp emulation of the tensor-core sparse MLA decode kernel (qprof_attn_sparse_mla_mma,
// sparse_mla_mma.cuh), unsplit: Q staged as BF16, each 32-token KV tile gathered as the
// kernel's cp.async does (padding indices zero-filled and masked), QK^T through the PTX
// model of mma.m16n8k16 with the kernel's fragment offsets (mla_mma_lanes.h), the scores
// through shared memory, the per-lane online softmax (MlaOnlineRescale / MlaProb, quad
// reductions over the 4 lanes of a row), the P fragment, and PV with the V fragments loaded
// by the PTX model of ldmatrix.x4.trans from the kernel's lane addresses. Compared with
// SparseMlaDecodeReferenceCpu within the GPU test's bound (2e-2 for out and lse).
//
// Not emulated: the split-K path and its combine kernel, the cp.async double buffer's
// ordering and the __syncthreads between phases (each phase runs to completion here).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/reg_ops.h"
#include "kernels/mla/cuda/mla_mma_lanes.h"
#include "kernels/mla/mla_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the lane map under test

uint32_t Lds32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Per warp: the online-softmax state of its lanes' two head rows and 16 n8 accumulators.
struct WarpState {
  float m[kLanes][2], l[kLanes][2];
  Acc acc[16] = {};
  WarpState() {
    for (int lane = 0; lane < kLanes; ++lane)
      for (int rr = 0; rr < 2; ++rr) m[lane][rr] = -INFINITY, l[lane][rr] = 0.f;
  }
};
using Scores = float[16][kMmaSsStride];

// Q of heads h0 .. h0+15 as BF16 pairs (rows past `heads` zero).
std::vector<uint8_t> StageQ(const kernels::SparseMlaParams& p, int b, int h0) {
  std::vector<uint8_t> qs(16 * kMmaRowBytes, 0);
  for (int r = 0; r < 16 && h0 + r < p.heads; ++r) {
    const float* q = p.q + (static_cast<int64_t>(b) * p.heads + h0 + r) * kMlaDqk;
    for (int c = 0; c < kMlaDqk; c += 2) {
      const uint32_t v = kernels::reg::PackBf16x2(q[c], q[c + 1]);
      std::memcpy(&qs[r * kMmaRowBytes + c * 2], &v, 4);
    }
  }
  return qs;
}

// Step 2: S[16 heads][32 tokens], warp w computing tokens 8w .. 8w+7, masked and scaled.
void QkScores(const std::vector<uint8_t>& qs, const std::vector<uint8_t>& kt, const int* vld,
              float scale, Scores& ss) {
  for (int w = 0; w < 4; ++w) {
    Acc sacc = {};
    for (int s = 0; s < kMlaDqk / 16; ++s) {
      Regs<4> a;
      Regs<2> bb;
      for (int lane = 0; lane < kLanes; ++lane) {
        const int g = lane >> 2, t = lane & 3;
        for (int r = 0; r < 4; ++r) a[lane][r] = Lds32(&qs[MlaQkARow(g, r) * kMmaRowBytes + MlaQkByte(s, t, r)]);
        const uint8_t* krow = &kt[MlaQkBRow(w, g) * kMmaRowBytes];
        bb[lane][0] = Lds32(krow + MlaQkByte(s, t, 0));
        bb[lane][1] = Lds32(krow + MlaQkByte(s, t, 2));
      }
      sacc = MmaM16n8k16Bf16(a, bb, sacc);
    }
    for (int lane = 0; lane < kLanes; ++lane) {
      const int g = lane >> 2, t = lane & 3;
      for (int i = 0; i < 4; ++i) {
        const int c = MlaScoreCol(w, t, i);
        ss[MlaScoreRow(g, i)][c] = vld[c] ? sacc[lane][i] * scale : -INFINITY;
      }
    }
  }
}

// Step 3 for warp w: each lane's 16 P values (head rows g, g+8), quad max and sum, the
// running state rescaled, and the P fragments of the two k16 steps.
void Softmax(const Scores& ss, WarpState& st, Regs<4> (&pa)[2]) {
  for (int rr = 0; rr < 2; ++rr) {
    float v[kLanes][8], tmax[kLanes], psum[kLanes];
    MlaRescale rs[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) {
      const int g = lane >> 2, t = lane & 3;
      for (int j = 0; j < 2; ++j)
        for (int q = 0; q < 4; ++q) v[lane][4 * j + q] = ss[g + 8 * rr][MlaPCol(j, t, q)];
      tmax[lane] = v[lane][0];
      for (int i = 1; i < 8; ++i) tmax[lane] = fmaxf(tmax[lane], v[lane][i]);
    }
    for (int lane = 0; lane < kLanes; ++lane) {  // quad max (shfl xor 1, 2), then P
      const int q0 = lane & ~3;
      const float qmax = fmaxf(fmaxf(tmax[q0], tmax[q0 + 1]), fmaxf(tmax[q0 + 2], tmax[q0 + 3]));
      rs[lane] = MlaOnlineRescale(st.m[lane][rr], qmax);
      psum[lane] = 0.f;
      for (int i = 0; i < 8; ++i) {
        v[lane][i] = MlaProb(v[lane][i], rs[lane]);
        psum[lane] += v[lane][i];
      }
    }
    for (int lane = 0; lane < kLanes; ++lane) {  // quad sum in the butterfly's order
      const float quad = (psum[lane] + psum[lane ^ 1]) + (psum[lane ^ 2] + psum[(lane ^ 2) ^ 1]);
      st.l[lane][rr] = st.l[lane][rr] * rs[lane].alpha + quad;
      st.m[lane][rr] = rs[lane].m_new;
      for (int n = 0; n < 16; ++n) {
        st.acc[n][lane][2 * rr] *= rs[lane].alpha;
        st.acc[n][lane][2 * rr + 1] *= rs[lane].alpha;
      }
      for (int j = 0; j < 2; ++j) {
        pa[j][lane][MlaPReg(rr, 0)] = kernels::reg::PackBf16x2(v[lane][4 * j], v[lane][4 * j + 1]);
        pa[j][lane][MlaPReg(rr, 1)] = kernels::reg::PackBf16x2(v[lane][4 * j + 2], v[lane][4 * j + 3]);
      }
    }
  }
}

// Step 4 for warp w: O[16][dims 128w ..] += P V, V fragments by ldmatrix.x4.trans.
void Pv(const std::vector<uint8_t>& kt, int w, const Regs<4> (&pa)[2], WarpState& st) {
  for (int j = 0; j < 2; ++j) {
    for (int np = 0; np < 8; ++np) {
      std::array<uint32_t, kLanes> addr;
      for (int lane = 0; lane < kLanes; ++lane)
        addr[lane] = MlaPvLdRow(j, lane) * kMmaRowBytes + MlaPvLdCol(w, np, lane) * 2;
      Regs<4> vr;
      ASSERT_TRUE(LdmatrixX4(kt, addr, /*trans=*/true, &vr)) << "ldmatrix address out of the tile";
      Regs<2> b0, b1;
      for (int lane = 0; lane < kLanes; ++lane) {
        b0[lane] = {vr[lane][0], vr[lane][1]};
        b1[lane] = {vr[lane][2], vr[lane][3]};
      }
      st.acc[2 * np] = MmaM16n8k16Bf16(pa[j], b0, st.acc[2 * np]);
      st.acc[2 * np + 1] = MmaM16n8k16Bf16(pa[j], b1, st.acc[2 * np + 1]);
    }
  }
}

// One block: sequence b, heads h0 .. h0+15, unsplit.
void EmulateBlock(const kernels::SparseMlaParams& p, int b, int h0) {
  const std::vector<uint8_t> qs = StageQ(p, b, h0);
  const int32_t* idx = p.indices + static_cast<int64_t>(b) * p.topk;
  const uint16_t* kv_seq = p.kv + static_cast<int64_t>(b) * p.kv_seq_stride * kMlaDqk;
  WarpState st[4];
  for (int tile = 0; tile < (p.topk + kMmaTile - 1) / kMmaTile; ++tile) {
    std::vector<uint8_t> kt(kMmaTile * kMmaRowBytes, 0);  // step 1: the gathered tile
    int vld[kMmaTile];
    for (int r = 0; r < kMmaTile; ++r) {
      const int i = tile * kMmaTile + r;
      const int tok = i < p.topk ? idx[i] : -1;
      vld[r] = tok >= 0;
      if (tok >= 0) std::memcpy(&kt[r * kMmaRowBytes], kv_seq + static_cast<int64_t>(tok) * kMlaDqk, kMlaDqk * 2);
    }
    Scores ss;
    QkScores(qs, kt, vld, p.softmax_scale, ss);
    for (int w = 0; w < 4; ++w) {
      Regs<4> pa[2];
      Softmax(ss, st[w], pa);
      Pv(kt, w, pa, st[w]);
    }
  }
  for (int w = 0; w < 4; ++w) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const int g = lane >> 2, t = lane & 3;
      for (int rr = 0; rr < 2; ++rr) {
        const int h = h0 + g + 8 * rr;
        if (h >= p.heads) continue;
        const float inv = MlaInvSum(st[w].l[lane][rr]);
        float* o = p.out + (static_cast<int64_t>(b) * p.heads + h) * kMlaDv;
        for (int n = 0; n < 16; ++n) {
          o[MlaOutDim(w, n, t)] = st[w].acc[n][lane][2 * rr] * inv;
          o[MlaOutDim(w, n, t) + 1] = st[w].acc[n][lane][2 * rr + 1] * inv;
        }
        if (p.lse && w == 0 && t == 0)
          p.lse[static_cast<int64_t>(b) * p.heads + h] = MlaLse(st[w].m[lane][rr], st[w].l[lane][rr]);
      }
    }
  }
}

struct Shape {
  int batch, heads, topk;
};

class MlaMmaEmuTest : public ::testing::TestWithParam<Shape> {};

TEST_P(MlaMmaEmuTest, MatchesReference) {
  const Shape sh = GetParam();
  std::mt19937 rng(7 + sh.batch + sh.topk);
  const int stride = sh.topk + 37;
  kernels::SparseMlaParams p;
  p.batch = sh.batch;
  p.heads = sh.heads;
  p.topk = sh.topk;
  p.kv_seq_stride = stride;
  p.softmax_scale = 1.f / 24.f;
  const std::vector<float> q = RandomFloats(static_cast<size_t>(sh.batch) * sh.heads * kMlaDqk, rng);
  const std::vector<float> kvf = RandomFloats(static_cast<size_t>(sh.batch) * stride * kMlaDqk, rng);
  std::vector<uint16_t> kv(kvf.size());
  kernels::FloatToBf16N(kvf.data(), static_cast<int64_t>(kvf.size()), kv.data());
  std::vector<int32_t> lens(sh.batch), idx(static_cast<size_t>(sh.batch) * sh.topk);
  for (int b = 0; b < sh.batch; ++b) {
    lens[b] = stride - b % 7;
    std::uniform_int_distribution<int> tok(0, lens[b] - 1);
    for (int i = 0; i < sh.topk; ++i) idx[b * sh.topk + i] = (i >= sh.topk - 1 - b % 5) ? -1 : tok(rng);
  }
  std::vector<float> want(static_cast<size_t>(sh.batch) * sh.heads * kMlaDv), want_lse(sh.batch * sh.heads);
  p.q = q.data();
  p.kv = kv.data();
  p.seq_lens = lens.data();
  p.indices = idx.data();
  p.out = want.data();
  p.lse = want_lse.data();
  ASSERT_TRUE(kernels::SparseMlaDecodeReferenceCpu(p).ok());
  std::vector<float> got(want.size(), NAN), got_lse(want_lse.size(), NAN);
  p.out = got.data();
  p.lse = got_lse.data();
  for (int b = 0; b < sh.batch; ++b)
    for (int h0 = 0; h0 < sh.heads; h0 += 16) EmulateBlock(p, b, h0);
  const double err = RelError(got, want);
  std::printf("[ emu      ] sparse_mla_mma batch %d heads %d topk %d: rel error out %.3g, lse %.3g\n",
              sh.batch, sh.heads, sh.topk, err, RelError(got_lse, want_lse));
  EXPECT_LT(err, 2e-2) << "batch " << sh.batch << " topk " << sh.topk;
  EXPECT_GT(err, 0.0);  // BF16 q and P cannot be exact
  EXPECT_LT(RelError(got_lse, want_lse), 2e-2);
}

// 20 heads: a second head block with 4 real rows; topk 100 = three full tiles and a tail
// of 4, topk 17 a single partial tile; the last indices of each sequence are padding (-1).
INSTANTIATE_TEST_SUITE_P(Shapes, MlaMmaEmuTest,
                         ::testing::Values(Shape{1, 20, 100}, Shape{3, 16, 17}, Shape{2, 20, 64}));

}  // namespace
}  // namespace qprof::warp
