// A CPU model of the warp-level PTX instructions our tensor-core kernels use, transcribed
// from the PTX ISA (sections "Matrix fragments for mma.m16n8k16 with floating point type",
// "Matrix fragments for mma.m16n8k64" (.e2m1), "Block Scaling for mma.sync" and
// "Warp-level matrix load instruction: ldmatrix"), and cross-checked against CUTLASS/CuTe's
// MMA_Traits layouts (cute_crosscheck_test.cc). A warp's registers are arrays indexed by lane.
//
// What the model decides: which matrix element each register (and each byte/nibble of it)
// holds, which lane supplies each scale factor, which row address each ldmatrix lane gives.
// What it does not decide: the tensor core's internal summation order and precision. The
// model multiplies exactly and sums in a fixed order (FP32 FMA in k order for BF16; double
// then one rounding for block-scaled FP4), so emulated results differ from a GPU's in the
// last bits, well inside the GPU tests' error bounds.
#ifndef QPROF_TESTS_WARP_EMU_PTX_WARP_MODEL_H_
#define QPROF_TESTS_WARP_EMU_PTX_WARP_MODEL_H_

#include <array>
#include <cstdint>
#include <vector>

namespace qprof::warp {

constexpr int kLanes = 32;
template <int N>
using Regs = std::array<std::array<uint32_t, N>, kLanes>;  // [lane][register]
using Acc = std::array<std::array<float, 4>, kLanes>;        // [lane][d0..d3]

// The PTX ISA's fragment formulas: groupID = lane >> 2, threadID_in_group = lane % 4.
struct RowCol {
  int row, col;
};
// mma.m16n8k16 .bf16: element i (a0..a7; register i/2, half i%2) of A (16 x 16, row).
RowCol M16n8k16A(int lane, int i);
// element i (b0..b3; register i/2, half i%2) of B (16 x 8, col): row = k, col = n.
RowCol M16n8k16B(int lane, int i);
// element i (c0..c3 / d0..d3) of C/D (16 x 8).
RowCol M16n8C(int lane, int i);
// mma.m16n8k64 .e2m1: element i (a0..a31; register i/8, nibble i%8) of A (16 x 64).
RowCol M16n8k64A(int lane, int i);
// element i (b0..b15; register i/8, nibble i%8) of B (64 x 8): row = k, col = n.
RowCol M16n8k64B(int lane, int i);

enum class ScaleKind {
  kMxf4Ue8m0x2,    // kind::mxf4 .block_scale.scale_vec::2X .ue8m0 (32-element blocks)
  kMxf4Nvf4Ue4m3x4  // kind::mxf4nvf4 .block_scale.scale_vec::4X .ue4m3 (16-element blocks)
};

// Block scaling: the lane whose scale register holds row m's (column n's) scale factors,
// for the selector thread-id-a (0..1) / thread-id-b (0..3); and the byte holding scale
// factor j (k block j) for byte-id (scale_vec::2X: 0 or 2; 4X: 0).
int ScaleALane(int m, int thread_id_a);
int ScaleBLane(int n, int thread_id_b);
int ScaleByte(ScaleKind kind, int j, int byte_id);

// D = A * B + C, mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32.
Acc MmaM16n8k16Bf16(const Regs<4>& a, const Regs<2>& b, const Acc& c);

struct ScaleSel {
  int byte_id = 0, thread_id = 0;
};
// D = (A * scale_A)(B * scale_B) + C, mma.sync.aligned.m16n8k64.row.col.<kind>.block_scale
// .f32.e2m1.e2m1.f32.<stype>. sfa/sfb: each lane's 32-bit scale register.
Acc MmaM16n8k64Fp4(ScaleKind kind, const Regs<4>& a, const Regs<2>& b, const Acc& c,
                   const std::array<uint32_t, kLanes>& sfa, ScaleSel sel_a,
                   const std::array<uint32_t, kLanes>& sfb, ScaleSel sel_b);

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lane l supplies the byte address of row
// l % 8 of matrix l / 8 (rows of eight 16-bit elements); register i of each lane receives
// two elements of matrix i. `rows[l]` = the 16 bytes at lane l's address.
using LdmatrixRows = std::array<std::array<uint8_t, 16>, kLanes>;
void LdmatrixX4Rows(const LdmatrixRows& rows, bool trans, Regs<4>* out);
// The same on a byte image: returns false (and leaves `out` untouched) when an address is
// unaligned or a row runs past the end of `smem`.
bool LdmatrixX4(const std::vector<uint8_t>& smem, const std::array<uint32_t, kLanes>& addr,
                bool trans, Regs<4>* out);

// The element values the model uses.
float Bf16ToFloat(uint16_t b);
float E2M1Value(uint32_t nibble);
double ScaleValue(ScaleKind kind, uint8_t code);

}  // namespace qprof::warp

#endif  // QPROF_TESTS_WARP_EMU_PTX_WARP_MODEL_H_
