// Warp emulation of the dense BF16 tensor-core GEMM (qprof_gemm_dense / _lm_head /
// qprof_moe_router_gemm): the kernel body itself (DenseGemmMmaBody, gemm_mma.cuh) runs for
// every thread of every block of the launcher's grid (DenseGemmGrid) through the PTX model
// of mma.m16n8k16 and ld.global.nc, and is compared with DenseGemmReferenceCpu within the GPU
// test's bound (1e-2: activations rounded to BF16 in registers), for both epilogues: y = Wx
// and the fused residual add y += Wx. Shapes: m = 1, 3, 17 tokens (padded columns), n = 333
// features (a partial last warp tile, clamped rows), k = 288 (nine 32-wide chunks: an odd
// count against the kernel's unroll by 2).
#include <cstdio>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/gemm_mma.cuh"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the kernel under test

struct GemmCase {
  int m;
  bool accumulate;
};

class GemmEmuTest : public ::testing::TestWithParam<GemmCase> {};

TEST_P(GemmEmuTest, MatchesReference) {
  const auto [m, accumulate] = GetParam();
  const int n = 333, k = 288;
  std::mt19937 rng(17 + m);
  const std::vector<float> x = RandomFloats(static_cast<size_t>(m) * k, rng);
  const std::vector<float> wf = RandomFloats(static_cast<size_t>(n) * k, rng, 0.1f);
  std::vector<uint16_t> w(wf.size());
  kernels::FloatToBf16N(wf.data(), static_cast<int64_t>(wf.size()), w.data());
  // The residual y starts as random values (accumulate) or NaN (every output must be written).
  const std::vector<float> y0 = accumulate ? RandomFloats(static_cast<size_t>(m) * n, rng)
                                           : std::vector<float>(static_cast<size_t>(m) * n, NAN);
  std::vector<float> want = y0, got = y0;
  kernels::DenseGemmParams p{m, n, k, x.data(), w.data(), want.data(), accumulate, nullptr};
  ASSERT_TRUE(kernels::DenseGemmReferenceCpu(p).ok());

  WarpEmu emu;
  emu.AddGlobal(x, "x");
  emu.AddGlobal(w, "w");
  emu.AddGlobal(got, "y");
  const bool ok = emu.Launch("qprof_gemm_dense", DenseGemmGrid(n), kGemmThreads, 0, [&] {
    DenseGemmMmaBody(x.data(), w.data(), got.data(), m, n, k, accumulate ? 1 : 0);
  });
  EXPECT_TRUE(ok) << emu.ErrorReport();
  const double err = RelError(got, want);  // +inf if an output was never written
  std::printf("[ emu      ] gemm_dense m %d n %d k %d%s: rel error %.3g (%lld warp collectives)\n", m, n, k,
              accumulate ? " accumulate" : "", err, static_cast<long long>(emu.counters().warp_collectives));
  EXPECT_LT(err, 1e-2) << "m " << m;
  EXPECT_GT(err, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Tokens, GemmEmuTest,
                         ::testing::Values(GemmCase{1, false}, GemmCase{3, false}, GemmCase{17, false},
                                           GemmCase{1, true}, GemmCase{17, true}));

}  // namespace
}  // namespace qprof::warp
