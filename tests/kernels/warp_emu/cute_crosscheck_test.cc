// Cross-check of the PTX warp model's transcription (ptx_warp_model.cc) against CUTLASS /
// CuTe's MMA_Traits, evaluated on the host: SM80_16x8x16_F32BF16BF16F32_TN (A, B, C) and
// SM120_16x8x64_TN_VS for E2M1 with UE4M3 / VS 16 and UE8M0 / VS 32 (A, B, C, SFA, SFB).
// CuTe layouts map (thread, value) to a column-major index into the (M, K), (N, K) or
// (M, N) tile: m + M*k, n + N*k, m + M*n.
//
// Built only when the nvidia-cutlass pip package's headers (cutlass_library/source/include)
// and libcu++ (the CUDA toolkit's include/cccl) are found at configure time; otherwise the
// same file is built with QPROF_NO_CUTE set to the reason and the test skips. CuTe's host
// path compiles with plain g++ -std=c++17 given those two include directories: no nvcc.
#include "gtest/gtest.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"

#ifndef QPROF_NO_CUTE
#include <cute/atom/mma_traits_sm120.hpp>
#include <cute/atom/mma_traits_sm80.hpp>
#include <cute/tensor.hpp>
#endif

namespace qprof::warp {
namespace {

#ifdef QPROF_NO_CUTE

TEST(CuteCrossCheckTest, Skipped) { GTEST_SKIP() << QPROF_NO_CUTE; }

#else

template <typename L>
int Idx(L layout, int t, int v) {
  return static_cast<int>(layout(t, v));
}

TEST(CuteCrossCheckTest, Sm80Bf16M16n8k16MatchesModel) {
  using T = cute::MMA_Traits<cute::SM80_16x8x16_F32BF16BF16F32_TN>;
  for (int t = 0; t < 32; ++t) {
    for (int v = 0; v < 8; ++v) {
      const RowCol p = M16n8k16A(t, v);
      EXPECT_EQ(Idx(typename T::ALayout{}, t, v), p.row + 16 * p.col) << "A t" << t << " v" << v;
    }
    for (int v = 0; v < 4; ++v) {
      const RowCol b = M16n8k16B(t, v);  // row = k, col = n
      EXPECT_EQ(Idx(typename T::BLayout{}, t, v), b.col + 8 * b.row) << "B t" << t << " v" << v;
      const RowCol c = M16n8C(t, v);
      EXPECT_EQ(Idx(typename T::CLayout{}, t, v), c.row + 16 * c.col) << "C t" << t << " v" << v;
    }
  }
}

template <typename SfType, int kVs>
void CheckSm120() {
  using T = cute::MMA_Traits<
      cute::SM120::BLOCKSCALED::SM120_16x8x64_TN_VS<cute::float_e2m1_t, cute::float_e2m1_t, float, SfType, kVs>>;
  for (int t = 0; t < 32; ++t) {
    for (int v = 0; v < 32; ++v) {
      const RowCol p = M16n8k64A(t, v);
      EXPECT_EQ(Idx(typename T::ALayout{}, t, v), p.row + 16 * p.col) << "A t" << t << " v" << v;
    }
    for (int v = 0; v < 16; ++v) {
      const RowCol b = M16n8k64B(t, v);
      EXPECT_EQ(Idx(typename T::BLayout{}, t, v), b.col + 8 * b.row) << "B t" << t << " v" << v;
    }
    for (int v = 0; v < 4; ++v) {
      const RowCol c = M16n8C(t, v);
      EXPECT_EQ(Idx(typename T::CLayout{}, t, v), c.row + 16 * c.col) << "C t" << t << " v" << v;
    }
    // SFA: thread t holds the scale factors of one row for all 64 k (value v = k). CuTe
    // maps the quad's lanes 0/1 (thread-id-a 0) and 2/3 (thread-id-a 1) to the same rows.
    const int tid_a = (t % 4) / 2;
    for (int v = 0; v < 64; ++v) {
      const int idx = Idx(typename T::SFALayout{}, t, v);
      const int m = idx % 16, k = idx / 16;
      EXPECT_EQ(k, v) << "SFA t" << t;
      EXPECT_EQ(ScaleALane(m, tid_a), t) << "SFA row " << m << " tid " << tid_a;
      const int idx_b = Idx(typename T::SFBLayout{}, t, v);
      EXPECT_EQ(idx_b / 8, v) << "SFB t" << t;
      EXPECT_EQ(ScaleBLane(idx_b % 8, t % 4), t) << "SFB column " << idx_b % 8;
    }
  }
  // Scale factor j covers k = j*VS .. j*VS + VS-1, and sits in byte j (byte-id 0).
  EXPECT_EQ(T::SFVecSize, kVs);
  for (int j = 0; j < 64 / kVs; ++j) EXPECT_EQ(ScaleByte(j, 0), j);
}

TEST(CuteCrossCheckTest, Sm120Nvf4Ue4m3Vs16MatchesModel) { CheckSm120<cute::float_ue4m3_t, 16>(); }
TEST(CuteCrossCheckTest, Sm120Mxf4Ue8m0Vs32MatchesModel) { CheckSm120<cute::float_ue8m0_t, 32>(); }

#endif

}  // namespace
}  // namespace qprof::warp
