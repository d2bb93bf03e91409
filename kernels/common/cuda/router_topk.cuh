// MoE router top-k (qprof_moe_router_topk): a warp per token. k rounds: each round every
// lane proposes its best untaken expert (experts lane, lane + 32, ...), the warp reduces the
// proposals with a butterfly (key desc, index asc: RouterBetter), lane 0 marks the winner
// taken in the warp's shared byte map and writes id and score; weights are renormalised at
// the end. The rule, NaN included, is kernels/common/router_math.h (shared with
// RouterTopkCpu): keys are never NaN and the first candidate always beats the (-inf,
// INT_MAX) start, so the winner is always a valid, untaken expert.
//
// The body is written against the warp primitives (kernels/common/cuda/warp_ops.h): nvcc
// compiles it into qprof_moe_router_topk (common_kernels.cu), and the CPU warp emulation
// (tests/kernels/warp_emu/router_emu_test.cc) runs this same function for every thread of
// every block of RouterTopkPlan's grid.
#ifndef QPROF_KERNELS_COMMON_CUDA_ROUTER_TOPK_CUH_
#define QPROF_KERNELS_COMMON_CUDA_ROUTER_TOPK_CUH_

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/common/cuda/warp_ops.h"
#include "kernels/common/params.h"
#include "kernels/common/router_math.h"

namespace qprof::kernels::cuda {

inline constexpr int kRouterWarps = 4;  // tokens per block
inline constexpr int kRouterThreads = kRouterWarps * 32;

// The kernel's ranking: RouterBetter (a body mutation flips its tie rule here only, so that
// the CPU reference keeps the true rule).
QPROF_WARP_FN bool RouterKernelBetter(float key_a, int a, float key_b, int b) {
#if QPROF_MUTANT(TIE_ORDER)  // body mutation: equal keys go to the higher expert index
  return key_a > key_b || (key_a == key_b && a > b);
#else
  return RouterBetter(key_a, a, key_b, b);
#endif
}

QPROF_WARP_FN void RouterTopkBody(const float* __restrict__ logits, const float* __restrict__ bias,
                                  int tokens, int experts, int topk, float route_scale,
                                  int32_t* __restrict__ ids, float* __restrict__ weights) {
  const int warp = ThreadIdxX() >> 5, lane = ThreadIdxX() & 31;
  const int t = BlockIdxX() * kRouterWarps + warp;
  if (t >= tokens) return;
  unsigned char* taken = DynamicShared() + warp * experts;
  const float* lg = logits + static_cast<int64_t>(t) * experts;
  for (int e = lane; e < experts; e += 32) StShared<unsigned char>(taken + e, 0);
  SyncWarp();
  float sum = 0.f;
  for (int j = 0; j < topk; ++j) {
    float best = -INFINITY;
    int bi = 0x7fffffff;
#if QPROF_MUTANT(TAIL_ELEMENT)  // body mutation: the last expert is never proposed
    for (int e = lane; e < experts - 1; e += 32) {
#else
    for (int e = lane; e < experts; e += 32) {
#endif
      if (LdShared<unsigned char>(taken + e)) continue;
      const float key = RouterKey(LdGlobal<float>(lg + e), bias ? LdGlobal<float>(bias + e) : 0.f);
      if (RouterKernelBetter(key, e, best, bi)) { best = key; bi = e; }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
#if QPROF_MUTANT(WARP_SUM_LANE)  // body mutation: the first step pairs lane l with l ^ 8, not l ^ 16
      const int src = o == 16 ? 8 : o;
#else
      const int src = o;
#endif
      const float ob = ShflXor(best, src);
      const int oi = ShflXor(bi, src);
      if (RouterKernelBetter(ob, oi, best, bi)) { best = ob; bi = oi; }
    }
    if (lane == 0) {
      StShared<unsigned char>(taken + bi, 1);
      StGlobal<int32_t>(ids + (t * topk + j), bi);
      const float s = RouterScore(LdGlobal<float>(lg + bi));
      StGlobal<float>(weights + (t * topk + j), s);
      sum += s;
    }
#if !QPROF_MUTANT(DROP_BARRIER)  // body mutation: the next round reads `taken` unordered
    SyncWarp();
#endif
  }
  if (lane == 0)
    for (int j = 0; j < topk; ++j)
      StGlobal<float>(weights + (t * topk + j), RouterWeight(LdGlobal<float>(weights + (t * topk + j)), sum, route_scale));
}

// Launch plan, shared by the launcher (common_kernels.cu) and the emulation: kRouterWarps
// tokens per block of kRouterThreads, one `taken` byte per expert and warp in dynamic
// shared memory.
struct RouterTopkLaunch {
  LaunchDims grid;
  size_t smem;
};
inline RouterTopkLaunch RouterTopkPlan(const RouterTopkParams& p) {
  return {{static_cast<unsigned>((p.tokens + kRouterWarps - 1) / kRouterWarps), 1, 1},
          static_cast<size_t>(kRouterWarps) * p.experts};
}

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_COMMON_CUDA_ROUTER_TOPK_CUH_
