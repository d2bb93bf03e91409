#include "tests/kernels/warp_emu/ptx_warp_model.h"

#include <cmath>
#include <cstring>

#include "kernels/common/mutation.h"

namespace qprof::warp {
namespace {

int GroupId(int lane) { return lane >> 2; }
int ThreadIdInGroup(int lane) { return lane % 4; }

uint16_t Half16(uint32_t reg, int h) { return static_cast<uint16_t>(reg >> (16 * h)); }
uint32_t Nibble(uint32_t reg, int j) { return (reg >> (4 * j)) & 0xFu; }

}  // namespace

// PTX ISA, mma.m16n8k16 .f16/.bf16, fragment A: a0..a7, two per .f16x2/.bf16x2 register.
//   row = groupID      for ai where 0 <= i < 2 || 4 <= i < 6
//         groupID + 8  otherwise
//   col = (threadID_in_group * 2) + (i & 0x1)        for ai where i < 4
//         (threadID_in_group * 2) + (i & 0x1) + 8    for ai where i >= 4
RowCol M16n8k16A(int lane, int i) {
  const int row = ((i >= 0 && i < 2) || (i >= 4 && i < 6)) ? GroupId(lane) : GroupId(lane) + 8;
  const int col = ThreadIdInGroup(lane) * 2 + (i & 1) + (i < 4 ? 0 : 8);
  return {row, col};
}
// Fragment B: b0..b3.
//   row = (threadID_in_group * 2) + (i & 0x1)        for bi where i < 2
//         (threadID_in_group * 2) + (i & 0x1) + 8    for bi where i >= 2
//   col = groupID
RowCol M16n8k16B(int lane, int i) {
  return {ThreadIdInGroup(lane) * 2 + (i & 1) + (i < 2 ? 0 : 8), GroupId(lane)};
}
// Fragments C and D: c0..c3.
//   row = groupID for ci where i < 2, groupID + 8 for ci where i >= 2
//   col = (threadID_in_group * 2) + (i & 0x1)
RowCol M16n8C(int lane, int i) {
  return {i < 2 ? GroupId(lane) : GroupId(lane) + 8, ThreadIdInGroup(lane) * 2 + (i & 1)};
}
// mma.m16n8k64 .e2m1, fragment A: a0..a31, eight 4-bit elements per .b32 register.
//   row = groupID      for ai where 0 <= i < 8 || 16 <= i < 24
//         groupID + 8  otherwise
//   col = (threadID_in_group * 8) + (i & 0x7)        for ai where i < 16
//         (threadID_in_group * 8) + (i & 0x7) + 32   for ai where i >= 16
RowCol M16n8k64A(int lane, int i) {
  const int row = ((i >= 0 && i < 8) || (i >= 16 && i < 24)) ? GroupId(lane) : GroupId(lane) + 8;
  const int col = ThreadIdInGroup(lane) * 8 + (i & 7) + (i < 16 ? 0 : 32);
  return {row, col};
}
// Fragment B: b0..b15.
//   row = (threadID_in_group * 8) + (i & 0x7)        for bi where i < 8
//         (threadID_in_group * 8) + (i & 0x7) + 32   for bi where i >= 8
//   col = groupID
RowCol M16n8k64B(int lane, int i) {
  return {ThreadIdInGroup(lane) * 8 + (i & 7) + (i < 8 ? 0 : 32), GroupId(lane)};
}

// Block scaling (m16n8k64): scale_A is M x SFA_N. The quad's thread selected by thread-id-a
// supplies the scale factors; for M = 16 the rows are split over two threads of each quad:
// with thread-id-a = 0, row r (0..7) comes from lane 4r and row r+8 from lane 4r+1;
// thread-id-a = 1 selects lanes 4r+2 and 4r+3. scale_B (SFB_M x N): column n from lane
// 4n + thread-id-b. Scale factor j of a row/column is byte (byte-id + j) of the register.
int ScaleALane(int m, int thread_id_a) { return 4 * (m % 8) + 2 * thread_id_a + m / 8; }
int ScaleBLane(int n, int thread_id_b) { return 4 * n + thread_id_b; }
int ScaleByte(ScaleKind kind, int j, int byte_id) {
#if QPROF_MUTANT(SHARED_SCALE_BYTES)  // the misreading planted in the kernel too
  return byte_id + (kind == ScaleKind::kMxf4Nvf4Ue4m3x4 ? 3 : 1) - j;
#else
  (void)kind;
  return byte_id + j;
#endif
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float E2M1Value(uint32_t nibble) {
  static const float kMag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (nibble & 8u) ? -kMag[nibble & 7u] : kMag[nibble & 7u];
}

double ScaleValue(ScaleKind kind, uint8_t code) {
  if (kind == ScaleKind::kMxf4Ue8m0x2) {
    return code == 0xFF ? NAN : std::ldexp(1.0, static_cast<int>(code) - 127);
  }
  const int e = (code >> 3) & 0xF, m = code & 7;  // ue4m3: bias 7, no sign
  if (e == 15 && m == 7) return NAN;
  return e == 0 ? std::ldexp(m, -9) : std::ldexp(1.0 + m / 8.0, e - 7);
}

Acc MmaM16n8k16Bf16(const Regs<4>& a, const Regs<2>& b, const Acc& c) {
  float A[16][16], B[16][8], D[16][8];
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 8; ++i) {
      const RowCol p = M16n8k16A(lane, i);
      A[p.row][p.col] = Bf16ToFloat(Half16(a[lane][i / 2], i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8k16B(lane, i);
      B[p.row][p.col] = Bf16ToFloat(Half16(b[lane][i / 2], i % 2));
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8C(lane, i);
      D[p.row][p.col] = c[lane][i];
    }
  }
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      float acc = D[m][n];
      for (int k = 0; k < 16; ++k) acc = std::fma(A[m][k], B[k][n], acc);  // exact products
      D[m][n] = acc;
    }
  }
  Acc d;
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8C(lane, i);
      d[lane][i] = D[p.row][p.col];
    }
  }
  return d;
}

Acc MmaM16n8k64Fp4(ScaleKind kind, const Regs<4>& a, const Regs<2>& b, const Acc& c,
                   const std::array<uint32_t, kLanes>& sfa, ScaleSel sel_a,
                   const std::array<uint32_t, kLanes>& sfb, ScaleSel sel_b) {
  const int block = kind == ScaleKind::kMxf4Ue8m0x2 ? 32 : 16;
  double A[16][64], B[64][8], D[16][8];
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 32; ++i) {
      const RowCol p = M16n8k64A(lane, i);
      A[p.row][p.col] = E2M1Value(Nibble(a[lane][i / 8], i % 8));
    }
    for (int i = 0; i < 16; ++i) {
      const RowCol p = M16n8k64B(lane, i);
      B[p.row][p.col] = E2M1Value(Nibble(b[lane][i / 8], i % 8));
    }
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8C(lane, i);
      D[p.row][p.col] = c[lane][i];
    }
  }
  auto sf = [&](const std::array<uint32_t, kLanes>& regs, int lane, int j, int byte_id) {
    const uint8_t code = static_cast<uint8_t>(regs[lane] >> (8 * ScaleByte(kind, j, byte_id)));
    return ScaleValue(kind, code);
  };
  for (int m = 0; m < 16; ++m) {
    for (int n = 0; n < 8; ++n) {
      double acc = 0;
      for (int k = 0; k < 64; ++k) {
        const double sa = sf(sfa, ScaleALane(m, sel_a.thread_id), k / block, sel_a.byte_id);
        const double sb = sf(sfb, ScaleBLane(n, sel_b.thread_id), k / block, sel_b.byte_id);
        acc += (A[m][k] * sa) * (B[k][n] * sb);
      }
      D[m][n] = static_cast<float>(acc + D[m][n]);
    }
  }
  Acc d;
  for (int lane = 0; lane < kLanes; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const RowCol p = M16n8C(lane, i);
      d[lane][i] = static_cast<float>(D[p.row][p.col]);
    }
  }
  return d;
}

// PTX ISA, ldmatrix: "each thread in the warp provides the address of one row": threads
// 0-7 the rows of matrix 0, 8-15 matrix 1, 16-23 matrix 2, 24-31 matrix 3 (.x4). Each row
// is eight .b16 elements, 16-byte aligned. Without .trans, thread l receives in register i
// the elements (row l/4, cols 2*(l%4), 2*(l%4)+1) of matrix i; .trans delivers the matrix
// transposed: elements (rows 2*(l%4), 2*(l%4)+1, col l/4).
void LdmatrixX4Rows(const LdmatrixRows& rows, bool trans, Regs<4>* out) {
  auto elem = [&](int mat, int row, int col) {
    const uint8_t* p = rows[8 * mat + row].data() + 2 * col;
    return static_cast<uint32_t>(p[0] | (p[1] << 8));
  };
  for (int l = 0; l < kLanes; ++l) {
    for (int i = 0; i < 4; ++i) {
      const int r = l / 4, c = 2 * (l % 4);
      const uint32_t lo = trans ? elem(i, c, r) : elem(i, r, c);
      const uint32_t hi = trans ? elem(i, c + 1, r) : elem(i, r, c + 1);
      (*out)[l][i] = lo | (hi << 16);
    }
  }
}

bool LdmatrixX4(const std::vector<uint8_t>& smem, const std::array<uint32_t, kLanes>& addr,
                bool trans, Regs<4>* out) {
  LdmatrixRows rows;
  for (int l = 0; l < kLanes; ++l) {
    if (addr[l] % 16 != 0 || static_cast<size_t>(addr[l]) + 16 > smem.size()) return false;
    std::memcpy(rows[l].data(), smem.data() + addr[l], 16);
  }
  LdmatrixX4Rows(rows, trans, out);
  return true;
}

}  // namespace qprof::warp
