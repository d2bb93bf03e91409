// Self-checks of the PTX warp model (ptx_warp_model.h): each fragment table covers its
// matrix exactly once; two independently transcribed tables agree where the ISA says they
// must (ldmatrix.x4 of a row-major A tile yields the mma A fragment, ldmatrix.x4.trans of a
// row-major K x N tile yields B fragments); the scale-factor lanes partition the quads; and
// the MMAs compute a matrix product with the transcribed layouts.
#include <cstring>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/reg_ops.h"
#include "tests/kernels/warp_emu/ptx_warp_model.h"

namespace qprof::warp {
namespace {

template <typename F>
void ExpectBijection(F f, int elems, int rows, int cols, const char* what) {
  std::set<std::pair<int, int>> seen;
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < elems; ++i) {
      const RowCol p = f(lane, i);
      EXPECT_TRUE(p.row >= 0 && p.row < rows && p.col >= 0 && p.col < cols) << what;
      EXPECT_TRUE(seen.insert({p.row, p.col}).second) << what << " twice: " << p.row << "," << p.col;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(rows * cols)) << what;
}

TEST(PtxModelTest, FragmentTablesCoverEachMatrixOnce) {
  ExpectBijection(M16n8k16A, 8, 16, 16, "m16n8k16 A");
  ExpectBijection(M16n8k16B, 4, 16, 8, "m16n8k16 B");
  ExpectBijection(M16n8C, 4, 16, 8, "m16n8 C");
  ExpectBijection(M16n8k64A, 32, 16, 64, "m16n8k64 A");
  ExpectBijection(M16n8k64B, 16, 64, 8, "m16n8k64 B");
}

TEST(PtxModelTest, ScaleLanesPartitionTheQuads) {
  std::set<int> lanes;
  for (int tid = 0; tid < 2; ++tid)
    for (int m = 0; m < 16; ++m) EXPECT_TRUE(lanes.insert(ScaleALane(m, tid)).second) << m << " " << tid;
  EXPECT_EQ(lanes.size(), 32u);
  for (int tid = 0; tid < 4; ++tid)
    for (int n = 0; n < 8; ++n) EXPECT_EQ(ScaleBLane(n, tid) / 4, n);  // column n's own quad
  EXPECT_EQ(ScaleALane(3, 0), 12);
  EXPECT_EQ(ScaleALane(11, 0), 13);
}

uint16_t Bits(int v) { return kernels::reg::FloatToBf16Bits(static_cast<float>(v)); }

TEST(PtxModelTest, LdmatrixOfRowMajorTilesGivesMmaFragments) {
  // A: 16 x 16 row-major (32 bytes per row). Lane l addresses row l % 16, column 8 * (l / 16):
  // matrices 0..3 = (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15).
  std::vector<uint8_t> a(16 * 32);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 16; ++c) {
      const uint16_t v = Bits(r * 16 + c);
      std::memcpy(&a[r * 32 + c * 2], &v, 2);
    }
  std::array<uint32_t, kLanes> addr;
  for (int l = 0; l < kLanes; ++l) addr[l] = (l % 16) * 32 + (l / 16) * 16;
  Regs<4> frag;
  ASSERT_TRUE(LdmatrixX4(a, addr, false, &frag));
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < 8; ++i) {
      const RowCol p = M16n8k16A(l, i);
      EXPECT_EQ(static_cast<uint16_t>(frag[l][i / 2] >> (16 * (i % 2))), Bits(p.row * 16 + p.col));
    }
  // B: K x N = 16 x 16 row-major (n contiguous), .trans: matrices (k 0-7, n 0-7), (k 8-15, n
  // 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15): registers 0,1 = b0,b1 of n-tile 0, 2,3 of tile 1.
  for (int l = 0; l < kLanes; ++l) addr[l] = ((l & 7) + ((l >> 3) & 1) * 8) * 32 + (l >> 4) * 16;
  ASSERT_TRUE(LdmatrixX4(a, addr, true, &frag));
  for (int l = 0; l < kLanes; ++l)
    for (int tile = 0; tile < 2; ++tile)
      for (int i = 0; i < 4; ++i) {
        const RowCol p = M16n8k16B(l, i);  // row = k, col = n within the tile
        EXPECT_EQ(static_cast<uint16_t>(frag[l][2 * tile + i / 2] >> (16 * (i % 2))),
                  Bits(p.row * 16 + 8 * tile + p.col));
      }
}

TEST(PtxModelTest, Bf16MmaIsAMatrixProduct) {
  Regs<4> a;
  Regs<2> b;
  Acc c;
  auto av = [](int m, int k) { return static_cast<float>((m * 3 + k) % 7 - 3); };
  auto bv = [](int k, int n) { return static_cast<float>((k + 2 * n) % 5 - 2); };
  for (int l = 0; l < kLanes; ++l) {
    for (int r = 0; r < 4; ++r) {
      const RowCol p0 = M16n8k16A(l, 2 * r), p1 = M16n8k16A(l, 2 * r + 1);
      a[l][r] = kernels::reg::PackBf16x2(av(p0.row, p0.col), av(p1.row, p1.col));
    }
    for (int r = 0; r < 2; ++r) {
      const RowCol p0 = M16n8k16B(l, 2 * r), p1 = M16n8k16B(l, 2 * r + 1);
      b[l][r] = kernels::reg::PackBf16x2(bv(p0.row, p0.col), bv(p1.row, p1.col));
    }
    for (int i = 0; i < 4; ++i) c[l][i] = 0.5f;
  }
  const Acc d = MmaM16n8k16Bf16(a, b, c);
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8C(l, i);
      float want = 0.5f;
      for (int k = 0; k < 16; ++k) want += av(p.row, k) * bv(k, p.col);
      EXPECT_EQ(d[l][i], want);
    }
}

TEST(PtxModelTest, BlockScaledMmaAppliesEachScaleToItsBlock) {
  // A = B = all ones (E2M1 0x2 = 1.0); NVFP4 scales: row m block j = 2^(m%4) * (j+1)/... use
  // codes so that D[m][n] = sum_j 16 * sa(m, j) * sb(n, j).
  Regs<4> a;
  Regs<2> b;
  for (auto& r : a) r.fill(0x22222222u);
  for (auto& r : b) r.fill(0x22222222u);
  std::array<uint32_t, kLanes> sfa{}, sfb{};
  auto code_a = [](int m, int j) { return static_cast<uint8_t>(0x30 + ((m + j) % 8)); };  // 0.5 .. 0.9375
  auto code_b = [](int n, int j) { return static_cast<uint8_t>(0x38 + ((n * 3 + j) % 8)); };  // 1 .. 1.875
  for (int m = 0; m < 16; ++m)
    for (int j = 0; j < 4; ++j) sfa[ScaleALane(m, 0)] |= static_cast<uint32_t>(code_a(m, j)) << (8 * j);
  for (int n = 0; n < 8; ++n)
    for (int j = 0; j < 4; ++j) sfb[ScaleBLane(n, 0)] |= static_cast<uint32_t>(code_b(n, j)) << (8 * j);
  const Acc d = MmaM16n8k64Fp4(ScaleKind::kMxf4Nvf4Ue4m3x4, a, b, Acc{}, sfa, {0, 0}, sfb, {0, 0});
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8C(l, i);
      double want = 0;
      for (int j = 0; j < 4; ++j)
        want += 16 * ScaleValue(ScaleKind::kMxf4Nvf4Ue4m3x4, code_a(p.row, j)) *
                ScaleValue(ScaleKind::kMxf4Nvf4Ue4m3x4, code_b(p.col, j));
      EXPECT_EQ(d[l][i], static_cast<float>(want));
    }
}

}  // namespace
}  // namespace qprof::warp
