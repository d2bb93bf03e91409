// Helpers of the warp-emulation tests: seeded random data, relative error (the GPU tests'
// metric: ||got - want|| / ||want||), random MoE problems like the GPU tests', and the
// grouping kernels every grouped MoE path launches (align, combine), run through the
// emulation.
#ifndef QPROF_TESTS_WARP_EMU_EMU_UTIL_H_
#define QPROF_TESTS_WARP_EMU_EMU_UTIL_H_

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/moe/cuda/moe_grouping.h"
#include "kernels/moe/params.h"
#include "tests/kernels/rel_error.h"
#include "tests/kernels/warp_emu/warp_emu.h"

namespace qprof::warp {

inline std::vector<float> RandomFloats(size_t n, std::mt19937& rng, float scale = 1.f) {
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// ||got - want|| / ||want|| in double (tests/kernels/rel_error.h): +inf if `got` has a
// NaN/Inf, or is non-zero against an all-zero reference beyond a stated bound.
using ::qprof::kernel_test::RelError;

// A random MoE problem: FP4 experts quantised with kernels/formats, activations, routing
// with distinct experts per token skewed towards low ids (odd expert loads), and every
// fifth token's last slot skipped (id -1). Owns the storage `params` points to.
struct MoeProblem {
  kernels::MoeParams params;
  std::vector<uint8_t> w13_packed, w13_scales, w2_packed, w2_scales;
  std::vector<float> w13_scale2, w2_scale2, x, weights, out;
  std::vector<int32_t> ids;
};
void MakeMoeProblem(kernels::Fp4Format format, int tokens, int dim, int inter, int experts,
                    int topk, uint32_t seed, MoeProblem* p);
// Registers every buffer of the problem as global memory of `emu`.
void AddMoeGlobals(const MoeProblem& p, WarpEmu* emu);

// The grouping a path's *_align kernel writes (device buffers, here host vectors).
struct MoeGroupBuffers {
  std::vector<int32_t> sorted, offsets, active, num_active;
  kernels::cuda::MoeGrouping grouping() {
    return {sorted.data(), offsets.data(), active.data(), num_active.data()};
  }
};
// Runs the align kernel's body (AlignBody, moe_group.cuh) through `emu` as the launcher
// does (one block, kAlignThreads, MoeAlignSmemBytes), registering the buffers; returns
// false on an emulation error. The result is then compared with MoeAlignCpu by the caller.
bool EmulateMoeAlign(const kernels::MoeParams& p, WarpEmu* emu, MoeGroupBuffers* g);
// Runs the combine kernel's body (CombineBody): out[t] += sum_j w * slot_out[t*topk + j].
bool EmulateMoeCombine(const kernels::MoeParams& p, const float* slot_out, WarpEmu* emu, float* out);

}  // namespace qprof::warp

#endif  // QPROF_TESTS_WARP_EMU_EMU_UTIL_H_
