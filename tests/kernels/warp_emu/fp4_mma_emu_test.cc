// Warp emulation of the MoE `fp4_mma` path, both kinds: kind::mxf4 scale_vec::2X UE8M0
// (MXFP4) and kind::mxf4nvf4 scale_vec::4X UE4M3 (NVFP4). This is the only execution these
// kernels have here: they need sm_120a, which no GPU lent to the project so far is. The
// kernels' own bodies (moe_group.cuh: AlignBody, CombineBody; moe_fp4_mma.cuh: QuantActBody,
// Fp4MmaBody with its inline-PTX binding) run for every thread of every block of the launch
// plans the launcher uses (Fp4QuantAct1Launch, Fp4Gemm1Launch, ...) through the PTX model.
//
// Two checks per GEMM: (1) each GEMM's output equals a plain dequantise-and-dot oracle fed
// the same FP4 operands (the quantiser's output) to 1e-5 (only the summation order
// differs: this pins the fragment layout, the scale lanes and bytes and the epilogue);
// (2) the whole path is within the GPU test's bound (0.35, FP4 activations) of
// MoeReferenceCpu. The launches must record no emulation error.
#include <cmath>
#include <cstdio>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/formats/fp4_codecs.h"
#include "kernels/moe/cuda/moe_fp4_mma.cuh"
#include "kernels/moe/cuda/moe_group.cuh"
#include "kernels/moe/moe_cpu.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using kernels::Fp4Format;
using namespace kernels::cuda;  // the kernels under test

// Quantised activations of a path (Fp4ActBuffers), owned by the test.
struct ActBuffers {
  std::vector<uint8_t> packed, scales;
  std::vector<float> scale2, hidden;
  Fp4ActBuffers view() { return {packed.data(), scales.data(), scale2.data(), hidden.data()}; }
};

// The oracle of one GEMM over the grouped rows: raw(i, r) = sum_k deq(W[e_i])[r, k] *
// deq(act_i)[k] in double with the same FP4 operands and scales (x act_scale2 * weight
// scale2 for NVFP4).
template <bool kNv>
double RawDot(const ActBuffers& act, int i, const kernels::Fp4Weights& w, int e, int rows_e, int r, int K) {
  constexpr int kBlock = kNv ? 16 : 32;
  auto scale = [](uint8_t c) { return kNv ? double{fp4::E4M3ToFloat(c)} : double{fp4::Ue8m0ToFloat(c)}; };
  auto elem = [](const uint8_t* row, int k) {
    return double{fp4::E2M1ToFloat(static_cast<uint8_t>((row[k / 2] >> (4 * (k & 1))) & 0xF))};
  };
  const int spr = K / kBlock;
  const uint8_t* x = act.packed.data() + static_cast<int64_t>(i) * K / 2;
  const uint8_t* xs = act.scales.data() + static_cast<int64_t>(i) * spr;
  const uint8_t* wr = w.packed + (static_cast<int64_t>(e) * rows_e + r) * K / 2;
  const uint8_t* ws = w.scales + (static_cast<int64_t>(e) * rows_e + r) * spr;
  double acc = 0;
  for (int k = 0; k < K; ++k) acc += elem(wr, k) * scale(ws[k / kBlock]) * elem(x, k) * scale(xs[k / kBlock]);
  return kNv ? acc * double{w.scale2[e]} * act.scale2[i] : acc;
}

struct PathResult {
  std::vector<float> out;
  double gemm1_err = INFINITY, gemm2_err = INFINITY;
  float gemm1_oracle_max = 0.f, gemm2_oracle_max = 0.f;  // max |oracle|: 0 makes the check vacuous
};

float MaxAbs(const std::vector<float>& v) {
  float m = 0.f;
  for (float x : v) m = std::fmax(m, std::fabs(x));
  return m;
}

// The path as LaunchMoeCuda runs it for fp4_mma: align, quantise x, GEMM1 (+ SwiGLU),
// quantise the hidden state, GEMM2, combine; each GEMM checked against the oracle on the
// operands the quantiser produced.
template <bool kNv>
void RunFp4Mma(const MoeProblem& prob, WarpEmu* emu, PathResult* res) {
  constexpr int kBlock = kNv ? 16 : 32;
  const kernels::MoeParams& p = prob.params;
  const int slots = p.tokens * p.topk, kmax = std::max(p.dim, p.inter);
  AddMoeGlobals(prob, emu);
  MoeGroupBuffers g;
  ASSERT_TRUE(EmulateMoeAlign(p, emu, &g)) << emu->ErrorReport();
  const MoeGrouping gr = g.grouping();
  ActBuffers b;
  b.packed.assign(static_cast<size_t>(slots) * kmax / 2, 0);
  b.scales.assign(static_cast<size_t>(slots) * kmax / kBlock, 0);
  b.scale2.assign(slots, NAN);
  b.hidden.assign(static_cast<size_t>(slots) * p.inter, NAN);
  std::vector<float> slot_out(static_cast<size_t>(slots) * p.dim, NAN);
  res->out.assign(static_cast<size_t>(p.tokens) * p.dim, 0.f);
  emu->AddGlobal(b.packed, "act.packed");
  emu->AddGlobal(b.scales, "act.scales");
  emu->AddGlobal(b.scale2, "act.scale2");
  emu->AddGlobal(b.hidden, "hidden");
  emu->AddGlobal(slot_out, "slot_out");
  emu->AddGlobal(res->out, "out");
  const int rows = g.offsets[p.experts];

  const Fp4QuantActLaunch q1 = Fp4QuantAct1Launch(p, gr, b.view());
  emu->Launch("quant_act", q1.grid, kQuantActThreads, 0, [&] { QuantActBody<kNv>(q1.args); });
  const Fp4MmaLaunch a1 = Fp4Gemm1Launch(p, gr, b.view());
  emu->Launch("fp4_mma_w13", a1.grid, kF4Threads, 0, [&] { Fp4MmaBody<kNv, true>(a1.args); });
  std::vector<float> got, want;
  for (int e = 0; e < p.experts; ++e) {
    for (int i = g.offsets[e]; i < g.offsets[e + 1]; ++i) {
      for (int f = 0; f < p.inter; ++f) {
        const double gate = RawDot<kNv>(b, i, p.w13, e, 2 * p.inter, f, p.dim);
        const double up = RawDot<kNv>(b, i, p.w13, e, 2 * p.inter, p.inter + f, p.dim);
        want.push_back(kernels::SwiGlu(static_cast<float>(gate), static_cast<float>(up), p.swiglu_limit));
        got.push_back(b.hidden[static_cast<size_t>(i) * p.inter + f]);
      }
    }
  }
  res->gemm1_err = rows > 0 ? RelError(got, want) : INFINITY;
  res->gemm1_oracle_max = MaxAbs(want);

  const Fp4QuantActLaunch q2 = Fp4QuantAct2Launch(p, gr, b.view());
  emu->Launch("quant_act", q2.grid, kQuantActThreads, 0, [&] { QuantActBody<kNv>(q2.args); });
  const Fp4MmaLaunch a2 = Fp4Gemm2Launch(p, gr, b.view(), slot_out.data());
  emu->Launch("fp4_mma_w2", a2.grid, kF4Threads, 0, [&] { Fp4MmaBody<kNv, false>(a2.args); });
  got.clear();
  want.clear();
  for (int e = 0; e < p.experts; ++e) {
    for (int i = g.offsets[e]; i < g.offsets[e + 1]; ++i) {
      for (int r = 0; r < p.dim; ++r) {
        want.push_back(static_cast<float>(RawDot<kNv>(b, i, p.w2, e, p.dim, r, p.inter)));
        got.push_back(slot_out[static_cast<size_t>(g.sorted[i]) * p.dim + r]);
      }
    }
  }
  res->gemm2_err = rows > 0 ? RelError(got, want) : INFINITY;
  res->gemm2_oracle_max = MaxAbs(want);
  EmulateMoeCombine(p, slot_out.data(), emu, res->out.data());
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
  WarpEmu emu;
  PathResult r;
  if (format == Fp4Format::kNvfp4) {
    RunFp4Mma<true>(prob, &emu, &r);
  } else {
    RunFp4Mma<false>(prob, &emu, &r);
  }
  EXPECT_EQ(emu.error_count(), 0) << emu.ErrorReport();
  const char* name = kernels::FormatName(format);
  const double path_err = RelError(r.out, prob.out);
  std::printf("[ emu      ] fp4_mma %s tokens %d dim %d inter %d: GEMM1/GEMM2 vs oracle %.3g / %.3g,"
              " path vs reference %.3g (%lld warp collectives)\n", name, shape.tokens, shape.dim, shape.inter,
              r.gemm1_err, r.gemm2_err, path_err, static_cast<long long>(emu.counters().warp_collectives));
  EXPECT_LT(r.gemm1_err, 1e-5) << name << " GEMM1 vs oracle, tokens " << shape.tokens;
  EXPECT_LT(r.gemm2_err, 1e-5) << name << " GEMM2 vs oracle, tokens " << shape.tokens;
  // An all-zero oracle (its FP4 operands quantised to zero) would make a GEMM's check pass
  // without exercising it: under the SCALE_LANE mutant GEMM1's output, and so GEMM2's
  // input, collapses to zero.
  EXPECT_GT(r.gemm1_oracle_max, 0.f) << name << " GEMM1's oracle is all zero";
  EXPECT_GT(r.gemm2_oracle_max, 0.f) << name << " GEMM2's oracle is all zero";
  EXPECT_LT(path_err, 0.35) << name << " path vs MoeReferenceCpu, tokens " << shape.tokens;
}

// Tokens 1, 3, 17; K = 384 is six K64 steps (three of the kernel's unrolled pairs) and
// K = 128 two; 17 tokens leave a second pass with one real column.
INSTANTIATE_TEST_SUITE_P(
    Shapes, Fp4MmaEmuTest,
    ::testing::Combine(::testing::Values(Fp4Format::kMxfp4, Fp4Format::kNvfp4),
                       ::testing::Values(Shape{1, 384, 128}, Shape{3, 128, 384}, Shape{17, 256, 128})));

}  // namespace
}  // namespace qprof::warp
