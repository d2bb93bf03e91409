// Warp emulation of the MoE `fp4_mma` path (kernels/moe/cuda/moe_fp4_mma.cuh), both kinds:
// kind::mxf4 scale_vec::2X UE8M0 (MXFP4) and kind::mxf4nvf4 scale_vec::4X UE4M3 (NVFP4).
// This is the only execution of these kernels we have: they need sm_120a, which no GPU
// lent to the project so far is. Every lane's loads go through the kernel's lane map
// (fp4_mma_lanes.h), activations are quantised with the kernel's QuantActBlock, and the
// MMA is the PTX model (ptx_warp_model.h) with the kernel's scale selectors.
//
// Two checks per GEMM: (1) each GEMM's output equals a plain dequantise-and-dot oracle fed
// the same FP4 operands to 1e-5 (only the summation order differs: this pins the fragment
// layout, the scale lanes and bytes and the epilogue); (2) the whole path is within the
// GPU test's bound (0.35, FP4 activations) of MoeReferenceCpu.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "kernels/moe/cuda/fp4_mma_lanes.h"
#include "kernels/moe/moe_cpu.h"
#include "kernels/moe/slot_out.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"

namespace qprof::warp {
namespace {

using kernels::Fp4Format;
using namespace kernels::cuda;  // the lane map under test

struct QuantAct {  // the path's Fp4ActBuffers
  std::vector<uint8_t> packed, scales;
  std::vector<float> scale2;
};

// qprof_moe_fp4_mma_<fmt>_quant_act: row i = src[gather ? sorted[i] / topk : i].
template <bool kNv>
QuantAct Quantise(const float* x, const int32_t* sorted, int topk, int rows, int K) {
  constexpr int kBlock = kNv ? 16 : 32;
  QuantAct q;
  q.packed.assign(static_cast<size_t>(rows) * K / 2, 0);
  q.scales.assign(static_cast<size_t>(rows) * K / kBlock, 0);
  q.scale2.assign(rows, 1.f);
  for (int i = 0; i < rows; ++i) {
    const float* xr = x + static_cast<int64_t>(sorted ? sorted[i] / topk : i) * K;
    float s2 = 1.f;
    if (kNv) {
      float m = 0.f;
      for (int k = 0; k < K; ++k) m = fmaxf(m, fabsf(xr[k]));
      s2 = fp4::Nvfp4Scale2FromAmax(m);
      q.scale2[i] = s2;
    }
    for (int b = 0; b < K / kBlock; ++b)
      q.scales[static_cast<size_t>(i) * (K / kBlock) + b] =
          QuantActBlock<kNv>(xr + b * kBlock, s2, &q.packed[static_cast<size_t>(i) * (K / 2) + b * (kBlock / 2)]);
  }
  return q;
}

struct F4Gemm {
  const QuantAct* act;
  const int32_t* offsets;
  const int32_t* sorted;
  const uint8_t* packed;
  const uint8_t* scales;
  const float* scale2;
  int K, rows_e, inter;
  float limit;
  float* hidden;    // GEMM1: [rows, inter] (grouped order)
  float* raw;       // [rows, rows_e]: the epilogue's top/bot before SwiGLU (for the oracle)
  float* slot_out;  // GEMM2
};

uint32_t Load(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  std::memcpy(&v, p, bytes);
  return v;
}

template <bool kNv, bool kGateUp>
void EmulateTile(const F4Gemm& a, int e, int tile) {
  constexpr int kBlock = kNv ? 16 : 32;
  const ScaleKind kind = kNv ? ScaleKind::kMxf4Nvf4Ue4m3x4 : ScaleKind::kMxf4Ue8m0x2;
  const int row0 = a.offsets[e], count = a.offsets[e + 1] - row0;
  const int f0 = MoeTileFirstRow(kGateUp, tile);
  const int64_t row_bytes = a.K / 2;
  const int spr = a.K / kBlock;
  const int sf_bytes = Fp4ScalesPerK64(kNv);
  for (int tok0 = 0; tok0 < count; tok0 += kF4NT * 8) {
    Acc acc[kF4NT] = {};
    for (int k64 = 0; k64 < a.K / 64; ++k64) {
      Regs<4> af;
      std::array<uint32_t, kLanes> sfa{};
      Regs<2> b[kF4NT];
      std::array<uint32_t, kLanes> sfb[kF4NT] = {};
      for (int lane = 0; lane < kLanes; ++lane) {
        const int g = LaneGroup(lane), t = LaneInGroup(lane);
        const int row_a = MoeTileRowA(f0, g), row_b = MoeTileRowB(kGateUp, f0, g, a.inter);
        const uint8_t* wrow[2] = {a.packed + (static_cast<int64_t>(e) * a.rows_e + row_a) * row_bytes,
                                  a.packed + (static_cast<int64_t>(e) * a.rows_e + row_b) * row_bytes};
        const int kb = Fp4LaneKByte(k64, t);
        for (int r = 0; r < 4; ++r) af[lane][r] = Load(wrow[Fp4ARegRowHalf(r)] + kb + Fp4ARegOffset(r), 4);
        const int sf_half = Fp4SfaRowHalf(t);
        if (sf_half >= 0) {
          const int srow = sf_half == 1 ? row_b : row_a;
          sfa[lane] = Load(a.scales + (static_cast<int64_t>(e) * a.rows_e + srow) * spr + Fp4ScaleByte(kNv, k64), sf_bytes);
        }
        for (int n = 0; n < kF4NT; ++n) {
          const int r = row0 + Fp4BToken(tok0, n, g, count);
          const uint8_t* xb = a.act->packed.data() + static_cast<int64_t>(r) * row_bytes;
          b[n][lane][0] = Load(xb + kb + Fp4BRegOffset(0), 4);
          b[n][lane][1] = Load(xb + kb + Fp4BRegOffset(1), 4);
          if (Fp4SfbLoads(t))
            sfb[n][lane] = Load(a.act->scales.data() + static_cast<int64_t>(r) * spr + Fp4ScaleByte(kNv, k64), sf_bytes);
        }
      }
      for (int n = 0; n < kF4NT; ++n)
        acc[n] = MmaM16n8k64Fp4(kind, af, b[n], acc[n], sfa, {kF4SfByteId, kF4SfThreadId}, sfb[n],
                                {kF4SfByteId, kF4SfThreadId});
    }
    const float ws2 = kNv ? a.scale2[e] : 1.f;
    for (int lane = 0; lane < kLanes; ++lane) {
      const int g = LaneGroup(lane), t = LaneInGroup(lane);
      for (int n = 0; n < kF4NT; ++n) {
        for (int h = 0; h < 2; ++h) {
          const int tok = MoeTileOutToken(tok0, n, t, h);
          if (tok >= count) continue;
          const float post = kNv ? ws2 * a.act->scale2[row0 + tok] : 1.f;
          const float top = acc[n][lane][h] * post, bot = acc[n][lane][2 + h] * post;
          float* raw = a.raw + static_cast<int64_t>(row0 + tok) * a.rows_e;
          raw[kGateUp ? MoeTileRowA(f0, g) : MoeTileOutRow(f0, g, 0)] = top;
          raw[kGateUp ? MoeTileRowB(true, f0, g, a.inter) : MoeTileOutRow(f0, g, 1)] = bot;
          if (kGateUp) {
            a.hidden[static_cast<int64_t>(row0 + tok) * a.inter + f0 + g] = MoeSwiGlu(top, bot, a.limit);
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

// Oracle for one GEMM: raw[i, r] = sum_k deq(W[e_i])[r, k] * deq(act)[i, k] in double, with
// the same FP4 operands and scales (x act_scale2 * weight scale2 for NVFP4).
template <bool kNv>
double GemmOracleError(const F4Gemm& a, int experts) {
  constexpr int kBlock = kNv ? 16 : 32;
  auto scale = [](uint8_t c) { return kNv ? double{fp4::E4M3ToFloat(c)} : double{fp4::Ue8m0ToFloat(c)}; };
  auto elem = [](const uint8_t* row, int k) {
    return double{fp4::E2M1ToFloat(static_cast<uint8_t>((row[k / 2] >> (4 * (k & 1))) & 0xF))};
  };
  std::vector<float> got, want;
  const int spr = a.K / kBlock;
  for (int e = 0; e < experts; ++e) {
    for (int i = a.offsets[e]; i < a.offsets[e + 1]; ++i) {
      const uint8_t* x = a.act->packed.data() + static_cast<int64_t>(i) * a.K / 2;
      const uint8_t* xs = a.act->scales.data() + static_cast<int64_t>(i) * spr;
      for (int r = 0; r < a.rows_e; ++r) {
        const uint8_t* w = a.packed + (static_cast<int64_t>(e) * a.rows_e + r) * a.K / 2;
        const uint8_t* ws = a.scales + (static_cast<int64_t>(e) * a.rows_e + r) * spr;
        double acc = 0;
        for (int k = 0; k < a.K; ++k) acc += elem(w, k) * scale(ws[k / kBlock]) * elem(x, k) * scale(xs[k / kBlock]);
        if (kNv) acc *= double{a.scale2[e]} * a.act->scale2[i];
        want.push_back(static_cast<float>(acc));
        got.push_back(a.raw[static_cast<int64_t>(i) * a.rows_e + r]);
      }
    }
  }
  return RelError(got, want);
}

template <bool kNv>
std::vector<float> EmulateFp4Mma(const kernels::MoeParams& p, double* gemm1_err, double* gemm2_err) {
  const int slots = p.tokens * p.topk;
  std::vector<int32_t> sorted(slots), offsets(p.experts + 1);
  kernels::MoeAlignCpu(p.topk_ids, p.tokens, p.topk, p.experts, sorted.data(), offsets.data());
  const int rows = offsets[p.experts];
  const QuantAct x = Quantise<kNv>(p.x, sorted.data(), p.topk, rows, p.dim);
  std::vector<float> hidden(static_cast<size_t>(rows) * p.inter, NAN);
  std::vector<float> raw1(static_cast<size_t>(rows) * 2 * p.inter, NAN);
  std::vector<float> raw2(static_cast<size_t>(rows) * p.dim, NAN);
  std::vector<float> slot_out(static_cast<size_t>(slots) * p.dim, NAN);
  F4Gemm g1{&x, offsets.data(), sorted.data(), p.w13.packed, p.w13.scales, p.w13.scale2,
            p.dim, 2 * p.inter, p.inter, p.swiglu_limit, hidden.data(), raw1.data(), nullptr};
  for (int e = 0; e < p.experts; ++e) {
    if (offsets[e + 1] == offsets[e]) continue;
    for (int tile = 0; tile < p.inter / 8; ++tile) EmulateTile<kNv, true>(g1, e, tile);
  }
  *gemm1_err = GemmOracleError<kNv>(g1, p.experts);
  const QuantAct h = Quantise<kNv>(hidden.data(), nullptr, p.topk, rows, p.inter);
  F4Gemm g2{&h, offsets.data(), sorted.data(), p.w2.packed, p.w2.scales, p.w2.scale2,
            p.inter, p.dim, p.inter, 0.f, nullptr, raw2.data(), slot_out.data()};
  for (int e = 0; e < p.experts; ++e) {
    if (offsets[e + 1] == offsets[e]) continue;
    for (int tile = 0; tile < p.dim / 16; ++tile) EmulateTile<kNv, false>(g2, e, tile);
  }
  *gemm2_err = GemmOracleError<kNv>(g2, p.experts);
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

class Fp4MmaEmuTest : public ::testing::TestWithParam<std::tuple<Fp4Format, Shape>> {};

TEST_P(Fp4MmaEmuTest, MatchesOracleAndReference) {
  const auto [format, shape] = GetParam();
  MoeProblem prob;
  MakeMoeProblem(format, shape.tokens, shape.dim, shape.inter, 8, 3, 37 + shape.tokens, &prob);
  ASSERT_TRUE(kernels::MoeReferenceCpu(prob.params).ok());
  double e1 = 0, e2 = 0;
  const std::vector<float> got = format == Fp4Format::kNvfp4 ? EmulateFp4Mma<true>(prob.params, &e1, &e2)
                                                              : EmulateFp4Mma<false>(prob.params, &e1, &e2);
  const char* name = kernels::FormatName(format);
  std::printf("[ emu      ] fp4_mma %s tokens %d dim %d inter %d: GEMM1/GEMM2 vs oracle %.3g / %.3g,"
              " path vs reference %.3g\n", name, shape.tokens, shape.dim, shape.inter, e1, e2,
              RelError(got, prob.out));
  EXPECT_LT(e1, 1e-5) << name << " GEMM1 vs oracle, tokens " << shape.tokens;
  EXPECT_LT(e2, 1e-5) << name << " GEMM2 vs oracle, tokens " << shape.tokens;
  EXPECT_LT(RelError(got, prob.out), 0.35) << name << " path vs MoeReferenceCpu, tokens " << shape.tokens;
}

// Tokens 1, 3, 17; K = 384 is six K64 steps (three of the kernel's unrolled pairs) and
// K = 128 two; 17 tokens leave a second pass with one real column.
INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp4MmaEmuTest,
    ::testing::Combine(::testing::Values(Fp4Format::kMxfp4, Fp4Format::kNvfp4),
                       ::testing::Values(Shape{1, 384, 128}, Shape{3, 128, 384}, Shape{17, 256, 128})));

}  // namespace
}  // namespace qprof::warp
