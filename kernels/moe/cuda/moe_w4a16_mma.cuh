// MoE `w4a16_mma` (tensor cores, Marlin-style): slots grouped per expert; each expert's FP4
// weight tile is loaded once per block, dequantised in registers straight into the BF16
// A-fragment of mma.sync.m16n8k16 (FP32 accumulation), and reused for every token routed
// to that expert (tokens are the MMA's n = 8 columns, kNT tiles per pass).
//
// Layout and the k permutation (why no offline reordering is needed):
//  - A warp owns one 16-row m-tile. In a 128-element K chunk, lane (g = lane/4, t = lane%4)
//    loads 16 contiguous bytes (32 elements, k = 32t .. 32t+31) of rows g and g+8: per load
//    instruction 8 rows x 64 contiguous bytes, every fetched sector fully used.
//  - An MMA sums over k, so any k order works if A and B agree. K16 step s (0..7) of the
//    chunk gives the lane physical elements 32t+4s .. 32t+4s+3; the decoder yields pairs
//    (k0,k2) and (k1,k3) (device_helpers.cuh), so logical (2t, 2t+1) <- physical (k0, k2)
//    and logical (2t+8, 2t+9) <- (k1, k3). Activations are stored k-permuted in groups of
//    4 as (k0, k2, k1, k3) (the path's *_permute_bf16 kernel), so b0, b1 are one 8-byte shared load.
//  - GEMM1 fuses gate and up: A rows g <- gate row f, g+8 <- up row inter+f, so one thread
//    holds gate and up of the same (feature, token) and applies SwiGLU in registers; the
//    BF16 hidden state is written k-permuted, ready as GEMM2's B operand.
//  - Scales: MXFP4 2^(e-127) with the decode's 2^126 folded in, minus 2^64 that the FP32
//    epilogue restores (keeps the BF16 factor finite up to e = 192); NVFP4 E4M3 * 2^117,
//    the epilogue multiplies by weight_scale_2 * 2^9. One HMUL2 per decoded pair.
//  - cp.async double buffering: weights, block scales and activations of the next 256-wide
//    K stage load while the current one is decoded and multiplied. Activation rows past
//    the expert's token count are zero-filled.
//
// The body is written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles it into qprof_moe_w4a16_mma_<fmt>_{w13,w2}, and the CPU warp emulation
// (tests/kernels/warp_emu/w4a16_emu_test.cc) runs this same function for every thread,
// checking the cp.async groups and barriers of the double buffer.
#ifndef QPROF_KERNELS_MOE_CUDA_MOE_W4A16_MMA_CUH_
#define QPROF_KERNELS_MOE_CUDA_MOE_W4A16_MMA_CUH_

#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/moe/cuda/fp4_scales.cuh"
#include "kernels/moe/cuda/moe_grouping.h"
#include "kernels/moe/cuda/w4a16_lanes.h"
#include "kernels/moe/params.h"

namespace qprof::kernels::cuda {

struct W4a16Smem {
  U32x4 w[2][kW4Warps][2][2][32];                  // [stage][warp][k128][row g|g+8][lane]
  U32x4 s[2][kW4Warps][16];                        // [stage][warp][m row] scale bytes
  unsigned char act[2][kW4NT * 8][kW4ActRowBytes];  // [stage][token][k] bf16 permuted
};

struct W4a16Args {
  const uint16_t* act;             // [rows, K] bf16 grouped by expert, k-permuted
  const int32_t* expert_offsets;   // [experts + 1]
  const int32_t* active_experts;   // [num_active]
  const int32_t* num_active;       // [1]
  const int32_t* sorted_slots;     // [slots]
  const uint8_t* packed;           // [experts, rows_e, K/2]
  const uint8_t* scales;           // [experts, rows_e, K/block]
  const float* scale2;             // [experts] NVFP4; null for MXFP4
  int K;
  int rows_e;                      // rows per expert matrix (2*inter or dim)
  int inter;                       // GEMM1: features (gate rows 0..inter-1)
  float swiglu_limit;
  uint16_t* hidden;                // GEMM1 out: [rows, inter] bf16 permuted
  float* slot_out;                 // GEMM2 out: [slots, rows_e] fp32 by slot id
};

// What one thread of W4a16Body works on: its expert's rows and weights, its warp's m-tile
// and its lane's place in it.
struct W4a16Thread {
  int e, row0, count;         // expert, its first activation row, its tokens
  int warp, lane, g, t;       // lane map: w4a16_lanes.h
  int f0, row_a, row_b;       // first feature of the tile; weight rows of MMA rows g, g+8
  int64_t row_bytes;          // K / 2
  int scales_per_row;         // K / block
  const uint8_t* wbase;       // the expert's packed weights
  const uint8_t* sbase;       // and block scales
};

// Stage `st` of the weights, scales and activations (tokens tok0..) into buffer `buf`, with
// cp.async; activation rows past the expert's token count are zero-filled.
template <bool kNvfp4, bool kGateUp>
QPROF_WARP_FN void W4a16IssueStage(const W4a16Args& a, const W4a16Thread& th, W4a16Smem& sm,
                                   int tok0, int st, int buf) {
  constexpr int kScaleBytes = W4ScaleBytesPerStage(kNvfp4);  // per row per stage: 8 or 16
  const int warp = th.warp, lane = th.lane;
  const int64_t kb = W4WeightStageByte(st);
#pragma unroll
  for (int c = 0; c < 2; ++c) {
    CpAsync16(&sm.w[buf][warp][c][0][lane], th.wbase + th.row_a * th.row_bytes + kb + W4WeightChunkByte(c) + W4WeightLaneByte(th.t), 16);
    CpAsync16(&sm.w[buf][warp][c][1][lane], th.wbase + th.row_b * th.row_bytes + kb + W4WeightChunkByte(c) + W4WeightLaneByte(th.t), 16);
  }
  if (lane < 16) {  // one row's stage scales per lane: 8 (MXFP4) or 16 (NVFP4) bytes
    const int row = W4ScaleLoadRow(kGateUp, th.f0, lane, a.inter);
    const uint8_t* src = th.sbase + static_cast<int64_t>(row) * th.scales_per_row + st * kScaleBytes;
    if (kNvfp4) {
      CpAsync16(&sm.s[buf][warp][lane], src, 16);
    } else {
      CpAsync8(&sm.s[buf][warp][lane], src);
    }
  }
  // Activations: kW4NT*8 rows x 32 pieces of 16 bytes; rows past `count` zero-filled.
  for (int p = ThreadIdxX(); p < kW4NT * 8 * 32; p += kW4Threads) {
    const int r = p >> 5, piece = p & 31;
    const int tok = tok0 + r;
    const bool ok = tok < th.count;
    const uint16_t* src = a.act + static_cast<int64_t>(th.row0 + (ok ? tok : 0)) * a.K +
                          W4ActPieceElem(st, piece);
#if QPROF_MUTANT(SMEM_STRIDE)  // body mutation: rows staged without the 16-byte padding
    CpAsync16(&sm.act[buf][0][0] + r * (kW4StageK * 2) + piece * 16, src, ok ? 16 : 0);
#else
    CpAsync16(&sm.act[buf][r][piece * 16], src, ok ? 16 : 0);
#endif
  }
}

// Epilogue of a pass of tokens tok0..: d0,d1 are MMA row g, tokens 2t, 2t+1; d2,d3 row g+8.
// GEMM1 applies SwiGLU and writes the BF16 hidden state k-permuted; GEMM2 writes FP32 rows
// by slot.
template <bool kNvfp4, bool kGateUp>
QPROF_WARP_FN void W4a16Epilogue(const W4a16Args& a, const W4a16Thread& th, int tok0,
                                 const float (&acc)[kW4NT][4]) {
  const float post = W4a16PostScale<kNvfp4>(kNvfp4 ? a.scale2[th.e] : 1.f);
#pragma unroll
  for (int n = 0; n < kW4NT; ++n) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int tok = MoeTileOutToken(tok0, n, th.t, h);
      if (tok >= th.count) continue;
      const float top = acc[n][h] * post;       // row g
      const float bot = acc[n][2 + h] * post;   // row g + 8
      if (kGateUp) {
        const float hv = MoeSwiGlu(top, bot, a.swiglu_limit);
        a.hidden[static_cast<int64_t>(th.row0 + tok) * a.inter + PermK4(th.f0 + th.g)] = FloatToBf16Bits(hv);
      } else {
        const int slot = a.sorted_slots[th.row0 + tok];
        float* o = a.slot_out + static_cast<int64_t>(slot) * a.rows_e;
        o[MoeTileOutRow(th.f0, th.g, 0)] = top;
        o[MoeTileOutRow(th.f0, th.g, 1)] = bot;
      }
    }
  }
}

template <bool kNvfp4, bool kGateUp>
QPROF_WARP_FN void W4a16Body(const W4a16Args& a) {
  using T = Fp4Traits<kNvfp4>;
  W4a16Smem& sm = SharedStatic<W4a16Smem>();
  if (BlockIdxY() >= *a.num_active) return;
  W4a16Thread th;
  th.e = a.active_experts[BlockIdxY()];
  th.row0 = a.expert_offsets[th.e];
  th.count = a.expert_offsets[th.e + 1] - th.row0;
  th.warp = ThreadIdxX() >> 5;
  th.lane = ThreadIdxX() & 31;
  th.g = LaneGroup(th.lane);
  th.t = LaneInGroup(th.lane);
  // Physical weight rows of this warp's MMA rows g and g+8 (lane map: w4a16_lanes.h).
  const int tile = BlockIdxX() * kW4Warps + th.warp;
  th.f0 = MoeTileFirstRow(kGateUp, tile);
  th.row_a = MoeTileRowA(th.f0, th.g);
  th.row_b = MoeTileRowB(kGateUp, th.f0, th.g, a.inter);
  th.row_bytes = a.K / 2;
  th.scales_per_row = a.K / T::kBlock;
  th.wbase = a.packed + static_cast<int64_t>(th.e) * a.rows_e * th.row_bytes;
  th.sbase = a.scales + static_cast<int64_t>(th.e) * a.rows_e * th.scales_per_row;
  const int stages = a.K / kW4StageK;

  for (int tok0 = 0; tok0 < th.count; tok0 += kW4NT * 8) {
    float acc[kW4NT][4];
#pragma unroll
    for (int n = 0; n < kW4NT; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    W4a16IssueStage<kNvfp4, kGateUp>(a, th, sm, tok0, 0, 0);
    CpAsyncCommit();
    for (int st = 0; st < stages; ++st) {
      const int buf = st & 1;
      if (st + 1 < stages) W4a16IssueStage<kNvfp4, kGateUp>(a, th, sm, tok0, st + 1, buf ^ 1);
      CpAsyncCommit();
#if QPROF_MUTANT(CP_ASYNC_WAIT)  // body mutation: waits for all but the two newest groups
      CpAsyncWait<2>();
#else
      CpAsyncWait<1>();
#endif
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: other threads' cp.async data read unordered
      SyncThreads();
#endif
      // The MMAs of the staged buffer: both 128-element K chunks, the weights dequantised
      // in registers into the A fragment, every token tile of the pass.
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const U32x4 wa = LdShared<U32x4>(&sm.w[buf][th.warp][c][0][th.lane]);
        const U32x4 wb = LdShared<U32x4>(&sm.w[buf][th.warp][c][1][th.lane]);
        const unsigned char* sa = reinterpret_cast<const unsigned char*>(&sm.s[buf][th.warp][W4ScaleSlot(th.g, 0)]);
        const unsigned char* sb = reinterpret_cast<const unsigned char*>(&sm.s[buf][th.warp][W4ScaleSlot(th.g, 1)]);
        uint32_t scale_a[2], scale_b[2];
        W4a16ScaleRegs<kNvfp4>([&](int i) -> uint32_t { return LdShared<uint8_t>(sa + i); }, c, th.t, scale_a);
        W4a16ScaleRegs<kNvfp4>([&](int i) -> uint32_t { return LdShared<uint8_t>(sb + i); }, c, th.t, scale_b);
        const uint32_t wa_w[4] = {wa.x, wa.y, wa.z, wa.w};
        const uint32_t wb_w[4] = {wb.x, wb.y, wb.z, wb.w};
#pragma unroll
        for (int s = 0; s < 8; ++s) {
          uint32_t frag[4];
          const int h = W4StepHalf(s);
          if (W4StepByteSel(s)) {
#if QPROF_MUTANT(UNPACK_SHIFT)  // body mutation: bytes 2-3 taken as (word >> 8), i.e. bytes 1-2
            W4a16AFragStep<0>(wa_w[W4StepWord(s)] >> 8, wb_w[W4StepWord(s)] >> 8, scale_a[h], scale_b[h], frag);
#else
            W4a16AFragStep<1>(wa_w[W4StepWord(s)], wb_w[W4StepWord(s)], scale_a[h], scale_b[h], frag);
#endif
          } else {
            W4a16AFragStep<0>(wa_w[W4StepWord(s)], wb_w[W4StepWord(s)], scale_a[h], scale_b[h], frag);
          }
          const int kbyte = W4ActByte(c, th.t, s);
#pragma unroll
          for (int n = 0; n < kW4NT; ++n) {
            const U32x2 b = LdShared<U32x2>(&sm.act[buf][W4ActRow(n, th.g)][kbyte]);
            MmaBf16m16n8k16(acc[n], frag, b.x, b.y);
          }
        }
      }
      SyncThreads();  // every warp is done with `buf` before the next stage refills it
    }
    W4a16Epilogue<kNvfp4, kGateUp>(a, th, tok0, acc);
  }
}

// Launch plans, shared by the launchers (moe_w4a16_mma_launch.cuh) and the emulation:
// GEMM1 (W13, gate and up fused, SwiGLU -> BF16 hidden, k-permuted) and GEMM2 (W2 ->
// slot_out), kW4Threads threads and sizeof(W4a16Smem) static shared memory per block. Grids
// cover the active experts only (blockIdx.y < *num_active; min(slots, experts) rows).
struct W4a16Launch {
  LaunchDims grid;
  W4a16Args args;
};
inline unsigned W4a16ExpertRows(const MoeParams& p) {
  const int slots = p.tokens * p.topk;
  return static_cast<unsigned>(slots < p.experts ? slots : p.experts);  // active experts <= both
}
inline W4a16Launch W4a16Gemm1Launch(const MoeParams& p, const MoeGrouping& g, const uint16_t* act,
                                    uint16_t* hidden) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  return {{static_cast<unsigned>(p.inter / (kW4Warps * 8)), W4a16ExpertRows(p), 1},
          {act, g.expert_offsets, g.active_experts, g.num_active, g.sorted_slots, p.w13.packed,
           p.w13.scales, nv ? p.w13.scale2 : nullptr, p.dim, 2 * p.inter, p.inter, p.swiglu_limit,
           hidden, nullptr}};
}
inline W4a16Launch W4a16Gemm2Launch(const MoeParams& p, const MoeGrouping& g, const uint16_t* hidden,
                                    float* slot_out) {
  const bool nv = p.format == Fp4Format::kNvfp4;
  return {{static_cast<unsigned>(p.dim / (kW4Warps * 16)), W4a16ExpertRows(p), 1},
          {hidden, g.expert_offsets, g.active_experts, g.num_active, g.sorted_slots, p.w2.packed,
           p.w2.scales, nv ? p.w2.scale2 : nullptr, p.inter, p.dim, p.inter, 0.f, nullptr, slot_out}};
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MOE_CUDA_MOE_W4A16_MMA_CUH_
