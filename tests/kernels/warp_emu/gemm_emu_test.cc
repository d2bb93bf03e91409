// Warp emulation of the dense BF16 tensor-core GEMM (qprof_gemm_dense, common_kernels.cu):
// every lane of every warp through the kernel's lane map (gemm_lanes.h) and the PTX model of
// mma.m16n8k16, compared with DenseGemmReferenceCpu within the GPU test's bound (1e-2:
// activations rounded to BF16 in registers). Shapes: m = 1, 3, 17 tokens (padded columns),
// n = 333 features (a partial last warp tile, clamped rows), k = 288 (nine 32-wide chunks:
// an odd count against the kernel's unroll by 2).
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/gemm_lanes.h"
#include "kernels/common/reg_ops.h"
#include "tests/kernels/warp_emu/emu_util.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"

namespace qprof::warp {
namespace {

using namespace kernels::cuda;  // the lane map under test

// DenseGemmMmaBody for every block and warp; y must hold m * n (accumulate = false).
void EmulateDenseGemm(const float* x, const uint16_t* w, float* y, int m, int n, int k) {
  const int blocks = (n + kGemmWarps * 16 - 1) / (kGemmWarps * 16);
  for (int block = 0; block < blocks; ++block) {
    for (int warp = 0; warp < kGemmWarps; ++warp) {
      const int r0 = GemmFirstRow(block, warp);
      if (r0 >= n) continue;
      for (int m0 = 0; m0 < m; m0 += 8 * kGemmNt) {
        Acc acc[kGemmNt] = {};
        for (int k0 = 0; k0 < k; k0 += kGemmChunkK) {
          uint32_t wv[kLanes][2][4];
          float xv[kLanes][kGemmNt][8];
          for (int lane = 0; lane < kLanes; ++lane) {
            const int g = lane >> 2, t = lane & 3;
            for (int h = 0; h < 2; ++h)
              std::memcpy(wv[lane][h], w + static_cast<int64_t>(GemmRowClamped(r0, g, h, n)) * k + GemmLaneK(t) + k0, 16);
            for (int j = 0; j < kGemmNt; ++j)
              std::memcpy(xv[lane][j], x + static_cast<int64_t>(GemmTokenClamped(m0, j, g, m)) * k + GemmLaneK(t) + k0, 32);
          }
          for (int s = 0; s < 2; ++s) {
            Regs<4> a;
            for (int lane = 0; lane < kLanes; ++lane)
              for (int r = 0; r < 4; ++r) a[lane][r] = wv[lane][GemmARegRow(r)][GemmARegWord(s, r)];
            for (int j = 0; j < kGemmNt; ++j) {
              Regs<2> b;
              for (int lane = 0; lane < kLanes; ++lane) {
                const float* v = xv[lane][j];
                b[lane][0] = kernels::reg::PackBf16x2(v[GemmBElem(s, 0, 0)], v[GemmBElem(s, 0, 1)]);
                b[lane][1] = kernels::reg::PackBf16x2(v[GemmBElem(s, 1, 0)], v[GemmBElem(s, 1, 1)]);
              }
              acc[j] = MmaM16n8k16Bf16(a, b, acc[j]);
            }
          }
        }
        for (int lane = 0; lane < kLanes; ++lane) {
          const int g = lane >> 2, t = lane & 3;
          for (int j = 0; j < kGemmNt; ++j) {
            for (int h = 0; h < 2; ++h) {
              const int tok = GemmOutToken(m0, j, t, h);
              if (tok >= m) continue;
              float* yr = y + static_cast<int64_t>(tok) * n;
              if (r0 + g < n) yr[r0 + g] = acc[j][lane][h];
              if (r0 + 8 + g < n) yr[r0 + 8 + g] = acc[j][lane][2 + h];
            }
          }
        }
      }
    }
  }
}

class GemmEmuTest : public ::testing::TestWithParam<int> {};

TEST_P(GemmEmuTest, MatchesReference) {
  const int m = GetParam(), n = 333, k = 288;
  std::mt19937 rng(17 + m);
  const std::vector<float> x = RandomFloats(static_cast<size_t>(m) * k, rng);
  const std::vector<float> wf = RandomFloats(static_cast<size_t>(n) * k, rng, 0.1f);
  std::vector<uint16_t> w(wf.size());
  kernels::FloatToBf16N(wf.data(), static_cast<int64_t>(wf.size()), w.data());
  std::vector<float> want(static_cast<size_t>(m) * n), got(want.size(), NAN);
  kernels::DenseGemmParams p{m, n, k, x.data(), w.data(), want.data(), false, nullptr};
  ASSERT_TRUE(kernels::DenseGemmReferenceCpu(p).ok());
  EmulateDenseGemm(x.data(), w.data(), got.data(), m, n, k);
  const double err = RelError(got, want);  // +inf if an output was never written
  std::printf("[ emu      ] gemm_dense m %d n %d k %d: rel error %.3g\n", m, n, k, err);
  EXPECT_LT(err, 1e-2) << "m " << m;
  EXPECT_GT(err, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Tokens, GemmEmuTest, ::testing::Values(1, 3, 17));

}  // namespace
}  // namespace qprof::warp
