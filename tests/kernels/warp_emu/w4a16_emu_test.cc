// Warp emulation of the MoE `w4a16_mma` path (kernels/moe/cuda/moe_w4a16_mma.cuh) on the
// CPU: every lane of every warp of every block, through the kernel's own lane map and
// register builders (w4a16_lanes.h: W4a16AFragStep, W4a16ScaleRegs, PermK4, ...) and the
// PTX model of mma.m16n8k16 (ptx_warp_model.h). The shared-memory images are built exactly
// as the kernel's cp.async calls fill them (same source offsets, zero-filled rows past the
// expert's tokens). The result is compared with MoeReferenceCpu within the GPU test's bound
// (1e-2: BF16 activations and hidden state).
//
// Not emulated: the align kernel (its contract equals MoeAlignCpu, which is used instead),
// cp.async ordering and __syncthreads placement (the emulation runs each stage to
// completion), and the hardware's MMA summation order.
#include <cstdio>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/reg_ops.h"
#include "kernels/moe/cuda/w4a16_lanes.h"
#include "kernels/moe/moe_cpu.h"
#include "kernels/moe/slot_out.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"

namespace qprof::warp {
namespace {

using kernels::Fp4Format;
using namespace kernels::cuda;  // the lane map under test

struct W4Gemm {
  const uint16_t* act;            // [rows, K] bf16, k-permuted
  const int32_t* offsets;         // [experts + 1]
  const int32_t* sorted;          // [slots]
  const uint8_t* packed;          // [experts, rows_e, K/2]
  const uint8_t* scales;          // [experts, rows_e, K/block]
  const float* scale2;            // [experts] or null
  int K, rows_e, inter;
  float limit;
  uint16_t* hidden;               // GEMM1 out
  float* slot_out;                // GEMM2 out
};

// Shared memory of one warp as the issue() lambda's cp.async calls leave it for stage st.
struct W4Stage {
  uint8_t w[2][2][kLanes][16];  // [chunk][row g | g+8][lane]
  uint8_t s[16][16] = {};       // [scale slot][stage scale bytes]
  std::vector<uint8_t> act = std::vector<uint8_t>(kW4NT * 8 * kW4ActRowBytes, 0);  // zero-filled
};

template <bool kNv, bool kGateUp>
void StageW4(const W4Gemm& a, int e, int f0, int tok0, int st, W4Stage* sm) {
  const int row0 = a.offsets[e], count = a.offsets[e + 1] - row0;
  const int64_t row_bytes = a.K / 2;
  const int spr = a.K / (kNv ? 16 : 32);
  const uint8_t* wbase = a.packed + static_cast<int64_t>(e) * a.rows_e * row_bytes;
  const uint8_t* sbase = a.scales + static_cast<int64_t>(e) * a.rows_e * spr;
  const int64_t kb = W4WeightStageByte(st);
  for (int lane = 0; lane < kLanes; ++lane) {
    const int g = LaneGroup(lane), t = LaneInGroup(lane);
    const int rows[2] = {MoeTileRowA(f0, g), MoeTileRowB(kGateUp, f0, g, a.inter)};
    for (int c = 0; c < 2; ++c)
      for (int h = 0; h < 2; ++h)
        std::memcpy(sm->w[c][h][lane], wbase + rows[h] * row_bytes + kb + W4WeightChunkByte(c) + W4WeightLaneByte(t), 16);
    if (lane < 16) {
      const int row = W4ScaleLoadRow(kGateUp, f0, lane, a.inter);
      const int bytes = W4ScaleBytesPerStage(kNv);
      std::memcpy(sm->s[lane], sbase + static_cast<int64_t>(row) * spr + st * bytes, bytes);
    }
  }
  for (int p = 0; p < kW4NT * 8 * 32; ++p) {
    const int r = p >> 5, piece = p & 31, tok = tok0 + r;
    if (tok < count)
      std::memcpy(&sm->act[r * kW4ActRowBytes + piece * 16],
                  a.act + static_cast<int64_t>(row0 + tok) * a.K + W4ActPieceElem(st, piece), 16);
  }
}

// The two 128-wide chunks of a staged stage: 8 K16 steps each, kW4NT MMAs per step.
template <bool kNv>
void ComputeW4Stage(const W4Stage& sm, Acc (&acc)[kW4NT]) {
  for (int c = 0; c < 2; ++c) {
    uint32_t scale_a[kLanes][2], scale_b[kLanes][2], words[kLanes][2][4];
    for (int lane = 0; lane < kLanes; ++lane) {
      const int g = LaneGroup(lane), t = LaneInGroup(lane);
      W4a16ScaleRegs<kNv>(sm.s[W4ScaleSlot(g, 0)], c, t, scale_a[lane]);
      W4a16ScaleRegs<kNv>(sm.s[W4ScaleSlot(g, 1)], c, t, scale_b[lane]);
      std::memcpy(words[lane][0], sm.w[c][0][lane], 16);
      std::memcpy(words[lane][1], sm.w[c][1][lane], 16);
    }
    for (int step = 0; step < 8; ++step) {
      Regs<4> frag;
      const int h = W4StepHalf(step), wd = W4StepWord(step);
      for (int lane = 0; lane < kLanes; ++lane) {
        uint32_t f[4];
        if (W4StepByteSel(step)) {
          W4a16AFragStep<1>(words[lane][0][wd], words[lane][1][wd], scale_a[lane][h], scale_b[lane][h], f);
        } else {
          W4a16AFragStep<0>(words[lane][0][wd], words[lane][1][wd], scale_a[lane][h], scale_b[lane][h], f);
        }
        for (int r = 0; r < 4; ++r) frag[lane][r] = f[r];
      }
      for (int n = 0; n < kW4NT; ++n) {
        Regs<2> b;
        for (int lane = 0; lane < kLanes; ++lane) {
          const int g = LaneGroup(lane), t = LaneInGroup(lane);
          std::memcpy(b[lane].data(), &sm.act[W4ActRow(n, g) * kW4ActRowBytes + W4ActByte(c, t, step)], 8);
        }
        acc[n] = MmaM16n8k16Bf16(frag, b, acc[n]);
      }
    }
  }
}

// One warp tile (W4a16Body for blockIdx.x * kW4Warps + warp == tile) of expert e.
template <bool kNv, bool kGateUp>
void EmulateTile(const W4Gemm& a, int e, int tile) {
  const int row0 = a.offsets[e], count = a.offsets[e + 1] - row0;
  const int f0 = MoeTileFirstRow(kGateUp, tile);
  for (int tok0 = 0; tok0 < count; tok0 += kW4NT * 8) {
    Acc acc[kW4NT] = {};
    for (int st = 0; st < a.K / kW4StageK; ++st) {
      W4Stage sm;
      StageW4<kNv, kGateUp>(a, e, f0, tok0, st, &sm);
      ComputeW4Stage<kNv>(sm, acc);
    }
    const float post = W4a16PostScale<kNv>(kNv ? a.scale2[e] : 1.f);
    for (int lane = 0; lane < kLanes; ++lane) {
      const int g = LaneGroup(lane), t = LaneInGroup(lane);
      for (int n = 0; n < kW4NT; ++n) {
        for (int h = 0; h < 2; ++h) {
          const int tok = MoeTileOutToken(tok0, n, t, h);
          if (tok >= count) continue;
          const float top = acc[n][lane][h] * post, bot = acc[n][lane][2 + h] * post;
          if (kGateUp) {
            a.hidden[static_cast<int64_t>(row0 + tok) * a.inter + PermK4(f0 + g)] =
                kernels::reg::FloatToBf16Bits(MoeSwiGlu(top, bot, a.limit));
          } else {
            float* o = a.slot_out + static_cast<int64_t>(a.sorted[row0 + tok]) * a.rows_e;
            o[MoeTileOutRow(f0, g, 0)] = top;
            o[MoeTileOutRow(f0, g, 1)] = bot;
          }
        }
      }
    }
  }
}

// The whole path: align (MoeAlignCpu), permute (W4PermGroupBf16), GEMM1, GEMM2, combine.
template <bool kNv>
std::vector<float> EmulateW4a16(const kernels::MoeParams& p) {
  const int slots = p.tokens * p.topk;
  std::vector<int32_t> sorted(slots), offsets(p.experts + 1);
  kernels::MoeAlignCpu(p.topk_ids, p.tokens, p.topk, p.experts, sorted.data(), offsets.data());
  const int rows = offsets[p.experts];
  std::vector<uint16_t> act(static_cast<size_t>(slots) * p.dim, 0);
  for (int i = 0; i < rows; ++i) {
    const float* xr = p.x + static_cast<int64_t>(sorted[i] / p.topk) * p.dim;
    for (int gi = 0; gi < p.dim / 4; ++gi) {
      uint32_t lo, hi;
      W4PermGroupBf16(xr[4 * gi], xr[4 * gi + 1], xr[4 * gi + 2], xr[4 * gi + 3], lo, hi);
      std::memcpy(&act[static_cast<size_t>(i) * p.dim + 4 * gi], &lo, 4);
      std::memcpy(&act[static_cast<size_t>(i) * p.dim + 4 * gi + 2], &hi, 4);
    }
  }
  std::vector<uint16_t> hidden(static_cast<size_t>(slots) * p.inter, 0);
  std::vector<float> slot_out(static_cast<size_t>(slots) * p.dim, NAN);  // poisoned
  W4Gemm g1{act.data(), offsets.data(), sorted.data(), p.w13.packed, p.w13.scales, p.w13.scale2,
            p.dim, 2 * p.inter, p.inter, p.swiglu_limit, hidden.data(), nullptr};
  W4Gemm g2{hidden.data(), offsets.data(), sorted.data(), p.w2.packed, p.w2.scales, p.w2.scale2,
            p.inter, p.dim, p.inter, 0.f, nullptr, slot_out.data()};
  for (int e = 0; e < p.experts; ++e) {
    if (offsets[e + 1] == offsets[e]) continue;  // grids cover active experts only
    for (int tile = 0; tile < p.inter / 8; ++tile) EmulateTile<kNv, true>(g1, e, tile);
  }
  for (int e = 0; e < p.experts; ++e) {
    if (offsets[e + 1] == offsets[e]) continue;
    for (int tile = 0; tile < p.dim / 16; ++tile) EmulateTile<kNv, false>(g2, e, tile);
  }
  std::vector<float> out(static_cast<size_t>(p.tokens) * p.dim, 0.f);
  for (int t = 0; t < p.tokens; ++t)
    for (int n = 0; n < p.dim; ++n)
      out[static_cast<size_t>(t) * p.dim + n] +=
          kernels::MoeCombineSlots(slot_out.data(), p.topk_ids, p.topk_weights, t, p.topk, p.dim, n);
  return out;
}

struct Shape {
  int tokens, dim, inter;
};

class W4a16EmuTest : public ::testing::TestWithParam<std::tuple<Fp4Format, Shape>> {};

TEST_P(W4a16EmuTest, MatchesReference) {
  const auto [format, shape] = GetParam();
  MoeProblem prob;
  MakeMoeProblem(format, shape.tokens, shape.dim, shape.inter, 8, 3, 23 + shape.tokens, &prob);
  ASSERT_TRUE(kernels::MoeReferenceCpu(prob.params).ok());
  const std::vector<float> got = format == Fp4Format::kNvfp4 ? EmulateW4a16<true>(prob.params)
                                                              : EmulateW4a16<false>(prob.params);
  const double err = RelError(got, prob.out);
  std::printf("[ emu      ] w4a16 %s tokens %d dim %d inter %d: rel error %.3g\n",
              kernels::FormatName(format), shape.tokens, shape.dim, shape.inter, err);
  EXPECT_LT(err, 1e-2) << kernels::FormatName(format) << " tokens " << shape.tokens;
  EXPECT_GT(err, 0.0);  // BF16 activations cannot be exact
}

// Tokens 1, 3, 17 (17: a second 16-token pass with one real column); K = 768 is three
// 256-wide stages (an odd count: both buffers and the tail), inter 256 one stage.
INSTANTIATE_TEST_SUITE_P(
    Shapes, W4a16EmuTest,
    ::testing::Combine(::testing::Values(Fp4Format::kMxfp4, Fp4Format::kNvfp4),
                       ::testing::Values(Shape{1, 768, 256}, Shape{3, 256, 512}, Shape{17, 768, 256})));

}  // namespace
}  // namespace qprof::warp
