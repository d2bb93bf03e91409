// MoE `fp4_mma` (native block-scaled FP4 tensor cores, sm_120a only): slots grouped per
// expert as in w4a16_mma, but nothing is dequantised: weights stay E2M1 with their own
// block scales, activations are quantised on the fly to the same format
// (qprof_moe_quant_act_*: NVFP4 with a per-row FP32 scale, or MXFP4), and one
//   mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X
//       .f32.e2m1.e2m1.f32.ue4m3                     (NVFP4, 16-element blocks)
//   mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X
//       .f32.e2m1.e2m1.f32.ue8m0                     (MXFP4, 32-element blocks)
// does 16 rows x 8 tokens x 64 k (SASS: OMMA.SF.16864...).
//
// Fragments (g = lane/4, t = lane%4; nibble j of a register = k 8t+j, natural FP4 order, so
// the checkpoint layout is used as is): a0 = row g, k 8t..8t+7; a1 = row g+8; a2/a3 the
// same rows at k+32; b0 = token g, k 8t..8t+7; b1 at k+32. Scale registers (selectors 0):
// lane 4r holds row r's scale bytes, lane 4r+1 row r+8's; lane 4n holds token n's. Byte b
// scales k 16b..16b+15 (4X) or 32b..32b+31 (2X).
//
// Only sm_120a has this instruction (not sm_100a, which uses tcgen05; not sm_90a). Other
// targets compile a stub body and the launcher refuses to launch there.
//
// The bodies are written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles them for sm_120a, and the CPU warp emulation (tests/kernels/warp_emu/
// fp4_mma_emu_test.cc) runs these same functions, the only execution they have where no
// sm_120 GPU is at hand.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_FP4_MMA_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_FP4_MMA_CUH_

#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/formats/fp4_codecs.h"
#include "kernels/moe/cuda/fp4_mma_lanes.h"
#include "kernels/moe/cuda/fp4_scales.cuh"
#include "kernels/moe/cuda/moe_grouping.h"
#include "kernels/moe/params.h"

#if !defined(__CUDACC__)
#define QPROF_HAS_FP4_MMA 1  // host: the warp emulation runs the sm_120a body
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 1200 && defined(__CUDA_ARCH_FEAT_SM120_ALL)
#define QPROF_HAS_FP4_MMA 1
#else
#define QPROF_HAS_FP4_MMA 0
#endif

namespace qprof::kernels::cuda {

// The block-scaled MMA. Selectors byte-id / thread-id are the lane map's constants (the
// same for A and B). Under the FP4_ASM_SWAP mutation the binding passes sfb as sfa.
#if QPROF_MUTANT(FP4_ASM_SWAP)
#define QPROF_FP4_SF_OPERANDS QPROF_PTX_IN_R(sfb), QPROF_PTX_IN_R(sfa)
#else
#define QPROF_FP4_SF_OPERANDS QPROF_PTX_IN_R(sfa), QPROF_PTX_IN_R(sfb)
#endif
template <bool kNvfp4>
QPROF_WARP_FN void MmaFp4(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, uint32_t sfa,
                          uint32_t sfb) {
#if QPROF_HAS_FP4_MMA
  if (kNvfp4) {
    QPROF_PTX("mma.sync.aligned.m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X"
              ".f32.e2m1.e2m1.f32.ue4m3 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3},"
              " %10, {%12,%13}, %11, {%12,%13};",
              (QPROF_PTX_INOUT_F(d[0]), QPROF_PTX_INOUT_F(d[1]), QPROF_PTX_INOUT_F(d[2]), QPROF_PTX_INOUT_F(d[3])),
              (QPROF_PTX_IN_R(a[0]), QPROF_PTX_IN_R(a[1]), QPROF_PTX_IN_R(a[2]), QPROF_PTX_IN_R(a[3]),
               QPROF_PTX_IN_R(b0), QPROF_PTX_IN_R(b1), QPROF_FP4_SF_OPERANDS,
               QPROF_PTX_IN_H(static_cast<uint16_t>(kF4SfByteId)), QPROF_PTX_IN_H(static_cast<uint16_t>(kF4SfThreadId))));
  } else {
    QPROF_PTX("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X"
              ".f32.e2m1.e2m1.f32.ue8m0 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3},"
              " %10, {%12,%13}, %11, {%12,%13};",
              (QPROF_PTX_INOUT_F(d[0]), QPROF_PTX_INOUT_F(d[1]), QPROF_PTX_INOUT_F(d[2]), QPROF_PTX_INOUT_F(d[3])),
              (QPROF_PTX_IN_R(a[0]), QPROF_PTX_IN_R(a[1]), QPROF_PTX_IN_R(a[2]), QPROF_PTX_IN_R(a[3]),
               QPROF_PTX_IN_R(b0), QPROF_PTX_IN_R(b1), QPROF_FP4_SF_OPERANDS,
               QPROF_PTX_IN_H(static_cast<uint16_t>(kF4SfByteId)), QPROF_PTX_IN_H(static_cast<uint16_t>(kF4SfThreadId))));
  }
#endif
}
#undef QPROF_FP4_SF_OPERANDS

// A lane's scale register for one K64 step: the row's (or token's) 2 (MXFP4) or 4 (NVFP4)
// scale bytes, k block j in byte j. Under SHARED_SCALE_BYTES the bytes are reversed (a
// misreading the PTX model is given too: only the CuTe cross-check can tell).
template <bool kNvfp4>
QPROF_WARP_FN uint32_t Fp4ScaleReg(const uint8_t* p) {
  const uint32_t v = kNvfp4 ? Ldg<uint32_t>(p) : Ldg<uint16_t>(p);
#if QPROF_MUTANT(SHARED_SCALE_BYTES)
  return BytePerm(v, 0u, kNvfp4 ? 0x0123u : 0x3201u);
#else
  return v;
#endif
}

struct Fp4MmaArgs {
  const uint8_t* act;              // [rows, K/2] grouped activations, E2M1 natural order
  const uint8_t* act_scales;       // [rows, K/block]
  const float* act_scale2;         // [rows] NVFP4 per-row scale; null for MXFP4
  const int32_t* expert_offsets;   // [experts + 1]
  const int32_t* active_experts;   // [num_active]
  const int32_t* num_active;       // [1]
  const int32_t* sorted_slots;     // [slots]
  const uint8_t* packed;           // [experts, rows_e, K/2]
  const uint8_t* scales;           // [experts, rows_e, K/block]
  const float* scale2;             // [experts] NVFP4; null for MXFP4
  int K, rows_e, inter;
  float swiglu_limit;
  float* hidden;                   // GEMM1 out: [rows, inter] fp32 (grouped order)
  float* slot_out;                 // GEMM2 out: [slots, rows_e] fp32 by slot id
};

template <bool kNvfp4, bool kGateUp>
QPROF_WARP_FN void Fp4MmaBody(const Fp4MmaArgs& a) {
#if QPROF_HAS_FP4_MMA
  using T = Fp4Traits<kNvfp4>;
  if (BlockIdxY() >= *a.num_active) return;
  const int e = a.active_experts[BlockIdxY()];
  const int row0 = a.expert_offsets[e];
  const int count = a.expert_offsets[e + 1] - row0;
  const int warp = ThreadIdxX() >> 5, lane = ThreadIdxX() & 31;
  const int g = LaneGroup(lane), t = LaneInGroup(lane);
  const int tile = BlockIdxX() * kF4Warps + warp;
  const int f0 = MoeTileFirstRow(kGateUp, tile);
  const int64_t row_bytes = a.K / 2;
  const int spr = a.K / T::kBlock;  // scales per row
  const int sf_half = Fp4SfaRowHalf(t);  // which of the lane's rows it feeds scales for
  const int row_a = MoeTileRowA(f0, g), row_b = MoeTileRowB(kGateUp, f0, g, a.inter);
  const int srow = sf_half == 1 ? row_b : row_a;
  const uint8_t* ws = a.scales + (static_cast<int64_t>(e) * a.rows_e + srow) * spr;
  const uint8_t* wrow[2] = {a.packed + (static_cast<int64_t>(e) * a.rows_e + row_a) * row_bytes,
                            a.packed + (static_cast<int64_t>(e) * a.rows_e + row_b) * row_bytes};

  for (int tok0 = 0; tok0 < count; tok0 += kF4NT * 8) {
    float acc[kF4NT][4];
#pragma unroll
    for (int n = 0; n < kF4NT; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    const uint8_t* xb[kF4NT];
    const uint8_t* xs[kF4NT];
#pragma unroll
    for (int n = 0; n < kF4NT; ++n) {
      const int r = row0 + Fp4BToken(tok0, n, g, count);
      xb[n] = a.act + static_cast<int64_t>(r) * row_bytes;
      xs[n] = a.act_scales + static_cast<int64_t>(r) * spr;
    }
#pragma unroll 2
    for (int k64 = 0; k64 < a.K / 64; ++k64) {
      const int kb = Fp4LaneKByte(k64, t);
      // Written out per register (a loop over r costs 8 registers on sm_120a: the compiler
      // then keeps the four addresses instead of one base plus immediates).
      const uint32_t af[4] = {Ldg<uint32_t>(wrow[Fp4ARegRowHalf(0)] + kb + Fp4ARegOffset(0)),
                              Ldg<uint32_t>(wrow[Fp4ARegRowHalf(1)] + kb + Fp4ARegOffset(1)),
                              Ldg<uint32_t>(wrow[Fp4ARegRowHalf(2)] + kb + Fp4ARegOffset(2)),
                              Ldg<uint32_t>(wrow[Fp4ARegRowHalf(3)] + kb + Fp4ARegOffset(3))};
      uint32_t sfa = 0;
      if (sf_half >= 0) sfa = Fp4ScaleReg<kNvfp4>(ws + Fp4ScaleByte(kNvfp4, k64));
#pragma unroll
      for (int n = 0; n < kF4NT; ++n) {
        const uint32_t b0 = Ldg<uint32_t>(xb[n] + kb + Fp4BRegOffset(0));
        const uint32_t b1 = Ldg<uint32_t>(xb[n] + kb + Fp4BRegOffset(1));
        uint32_t sfb = 0;
        if (Fp4SfbLoads(t)) sfb = Fp4ScaleReg<kNvfp4>(xs[n] + Fp4ScaleByte(kNvfp4, k64));
        MmaFp4<kNvfp4>(acc[n], af, b0, b1, sfa, sfb);
      }
    }
    const float ws2 = kNvfp4 ? a.scale2[e] : 1.f;
#pragma unroll
    for (int n = 0; n < kF4NT; ++n) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int tok = MoeTileOutToken(tok0, n, t, h);
        if (tok >= count) continue;
        const float post = kNvfp4 ? ws2 * a.act_scale2[row0 + tok] : 1.f;
        const float top = acc[n][h] * post, bot = acc[n][2 + h] * post;
        if (kGateUp) {
          a.hidden[static_cast<int64_t>(row0 + tok) * a.inter + f0 + g] = MoeSwiGlu(top, bot, a.swiglu_limit);
        } else {
          float* o = a.slot_out + static_cast<int64_t>(a.sorted_slots[row0 + tok]) * a.rows_e;
          o[MoeTileOutRow(f0, g, 0)] = top;
          o[MoeTileOutRow(f0, g, 1)] = bot;
        }
      }
    }
  }
#endif
}

// Quantises rows of FP32 activations to the weight format (one block per row).
// src row i = x[gather ? sorted_slots[i] / topk : i]. NVFP4: row scale2 = amax/(6*448),
// block E4M3 = RNE(max(amax_b / (6*scale2), 2^-9)), all-zero block 1.0; MXFP4: the OCP
// recipe (shared_exp = floor(log2 amax) - 2). Same recipes as kernels/formats.
struct QuantActArgs {
  const float* x;
  const int32_t* sorted_slots;   // null: no gather
  const int32_t* expert_offsets; // [experts+1]: rows = expert_offsets[experts]
  int experts, topk, K;
  uint8_t* out;                  // [rows, K/2]
  uint8_t* out_scales;           // [rows, K/block]
  float* out_scale2;             // [rows] NVFP4
};

template <bool kNvfp4>
QPROF_WARP_FN void QuantActBody(const QuantActArgs& a) {
  using T = Fp4Traits<kNvfp4>;
  const int i = BlockIdxX();
  if (i >= a.expert_offsets[a.experts]) return;
  const int src = a.sorted_slots ? a.sorted_slots[i] / a.topk : i;
  const float* x = a.x + static_cast<int64_t>(src) * a.K;
  float* red = SharedStatic<float[32]>();
  float s2 = 1.f;
  if (kNvfp4) {
    float m = 0.f;
    for (int k = ThreadIdxX(); k < a.K; k += BlockDimX()) m = fmaxf(m, fabsf(x[k]));
    m = WarpMax(m);
    if ((ThreadIdxX() & 31) == 0) StShared<float>(red + (ThreadIdxX() >> 5), m);
    SyncThreads();
    if (ThreadIdxX() < 32) {
      float v = ThreadIdxX() < BlockDimX() / 32 ? LdShared<float>(red + ThreadIdxX()) : 0.f;
      v = WarpMax(v);
      if (ThreadIdxX() == 0) StShared<float>(red, v);
    }
    SyncThreads();
    s2 = fp4::Nvfp4Scale2FromAmax(LdShared<float>(red));
    if (ThreadIdxX() == 0) a.out_scale2[i] = s2;
  }
  for (int b = ThreadIdxX(); b < a.K / T::kBlock; b += BlockDimX()) {
    uint8_t* packed = a.out + static_cast<int64_t>(i) * (a.K / 2) + b * (T::kBlock / 2);
    a.out_scales[static_cast<int64_t>(i) * (a.K / T::kBlock) + b] =
        QuantActBlock<kNvfp4>(x + b * T::kBlock, s2, packed);
  }
}

// Launch plans, shared by the launcher (moe_fp4_mma_launch.cuh) and the emulation: the
// activation quantiser (one block of kQuantActThreads per grouped row: the grid covers all
// slots, blocks past the grouped rows exit), GEMM1 (W13 + SwiGLU -> FP32 hidden), the
// hidden state's quantiser and GEMM2 (W2 -> slot_out); kF4Threads per GEMM block.
inline constexpr unsigned kQuantActThreads = 128;
struct Fp4QuantActLaunch {
  LaunchDims grid;
  QuantActArgs args;
};
struct Fp4MmaLaunch {
  LaunchDims grid;
  Fp4MmaArgs args;
};
inline unsigned Fp4ExpertRows(const MoeParams& p) {
  const int slots = p.tokens * p.topk;
  return static_cast<unsigned>(slots < p.experts ? slots : p.experts);
}
inline Fp4QuantActLaunch Fp4QuantAct1Launch(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b) {
  return {{static_cast<unsigned>(p.tokens * p.topk), 1, 1},
          {p.x, g.sorted_slots, g.expert_offsets, p.experts, p.topk, p.dim, b.packed, b.scales, b.scale2}};
}
inline Fp4QuantActLaunch Fp4QuantAct2Launch(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b) {
  return {{static_cast<unsigned>(p.tokens * p.topk), 1, 1},
          {b.hidden, nullptr, g.expert_offsets, p.experts, p.topk, p.inter, b.packed, b.scales, b.scale2}};
}
inline Fp4MmaLaunch Fp4Gemm1Launch(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  return {{static_cast<unsigned>(p.inter / (kF4Warps * 8)), Fp4ExpertRows(p), 1},
          {b.packed, b.scales, nv ? b.scale2 : nullptr, g.expert_offsets, g.active_experts, g.num_active,
           g.sorted_slots, p.w13.packed, p.w13.scales, nv ? p.w13.scale2 : nullptr, p.dim, 2 * p.inter,
           p.inter, p.swiglu_limit, b.hidden, nullptr}};
}
inline Fp4MmaLaunch Fp4Gemm2Launch(const MoeParams& p, const MoeGrouping& g, const Fp4ActBuffers& b,
                                   float* slot_out) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  return {{static_cast<unsigned>(p.dim / (kF4Warps * 16)), Fp4ExpertRows(p), 1},
          {b.packed, b.scales, nv ? b.scale2 : nullptr, g.expert_offsets, g.active_experts, g.num_active,
           g.sorted_slots, p.w2.packed, p.w2.scales, nv ? p.w2.scale2 : nullptr, p.inter, p.dim, p.inter, 0.f,
           nullptr, slot_out}};
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_FP4_MMA_CUH_
