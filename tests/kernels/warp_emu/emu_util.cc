#include "tests/kernels/warp_emu/emu_util.h"

#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "kernels/moe/cuda/moe_group.cuh"

namespace qprof::warp {
namespace {

void AppendExperts(kernels::Fp4Format format, int experts, int rows, int cols, std::mt19937& rng,
                   std::vector<uint8_t>* packed, std::vector<uint8_t>* scales,
                   std::vector<float>* scale2) {
  for (int e = 0; e < experts; ++e) {
    const std::vector<float> w = RandomFloats(static_cast<size_t>(rows) * cols, rng, 0.05f);
    if (format == kernels::Fp4Format::kMxfp4) {
      auto m = fp4::QuantizeMxfp4(w.data(), rows, cols, "w");
      packed->insert(packed->end(), m->packed.begin(), m->packed.end());
      scales->insert(scales->end(), m->scales.begin(), m->scales.end());
    } else {
      auto m = fp4::QuantizeNvfp4(w.data(), rows, cols, "w");
      packed->insert(packed->end(), m->packed.begin(), m->packed.end());
      scales->insert(scales->end(), m->scales.begin(), m->scales.end());
      scale2->push_back(m->scale2);
    }
  }
}

}  // namespace

void MakeMoeProblem(kernels::Fp4Format format, int tokens, int dim, int inter, int experts,
                    int topk, uint32_t seed, MoeProblem* p) {
  std::mt19937 rng(seed);
  AppendExperts(format, experts, 2 * inter, dim, rng, &p->w13_packed, &p->w13_scales, &p->w13_scale2);
  AppendExperts(format, experts, dim, inter, rng, &p->w2_packed, &p->w2_scales, &p->w2_scale2);
  p->x = RandomFloats(static_cast<size_t>(tokens) * dim, rng);
  p->ids.resize(static_cast<size_t>(tokens) * topk);
  p->weights.resize(p->ids.size());
  std::uniform_int_distribution<int> pick(0, experts - 1);
  std::uniform_real_distribution<float> uw(0.1f, 1.f);
  for (int t = 0; t < tokens; ++t) {
    for (int j = 0; j < topk; ++j) {
      int e;
      bool dup;
      do {
        e = (pick(rng) * pick(rng)) % experts;
        dup = false;
        for (int i = 0; i < j; ++i) dup |= p->ids[t * topk + i] == e;
      } while (dup);
      p->ids[t * topk + j] = (t % 5 == 4 && j == topk - 1) ? -1 : e;
      p->weights[t * topk + j] = uw(rng);
    }
  }
  p->out.assign(static_cast<size_t>(tokens) * dim, 0.f);
  kernels::MoeParams& m = p->params;
  m.format = format;
  m.tokens = tokens;
  m.dim = dim;
  m.inter = inter;
  m.experts = experts;
  m.topk = topk;
  m.swiglu_limit = 7.f;
  m.x = p->x.data();
  m.topk_ids = p->ids.data();
  m.topk_weights = p->weights.data();
  const bool nv = format == kernels::Fp4Format::kNvfp4;
  m.w13 = {p->w13_packed.data(), p->w13_scales.data(), nv ? p->w13_scale2.data() : nullptr};
  m.w2 = {p->w2_packed.data(), p->w2_scales.data(), nv ? p->w2_scale2.data() : nullptr};
  m.out = p->out.data();
}

void AddMoeGlobals(const MoeProblem& p, WarpEmu* emu) {
  emu->AddGlobal(p.w13_packed, "w13.packed");
  emu->AddGlobal(p.w13_scales, "w13.scales");
  emu->AddGlobal(p.w13_scale2, "w13.scale2");
  emu->AddGlobal(p.w2_packed, "w2.packed");
  emu->AddGlobal(p.w2_scales, "w2.scales");
  emu->AddGlobal(p.w2_scale2, "w2.scale2");
  emu->AddGlobal(p.x, "x");
  emu->AddGlobal(p.weights, "topk_weights");
  emu->AddGlobal(p.ids, "topk_ids");
}

bool EmulateMoeAlign(const kernels::MoeParams& p, WarpEmu* emu, MoeGroupBuffers* g) {
  using namespace kernels::cuda;  // NOLINT: the kernel bodies
  const int slots = p.tokens * p.topk;
  g->sorted.assign(slots, 0x7eadbeef);  // poison: every entry must be written
  g->offsets.assign(p.experts + 1, 0x7eadbeef);
  g->active.assign(p.experts, 0x7eadbeef);
  g->num_active.assign(1, 0x7eadbeef);
  emu->AddGlobal(g->sorted, "sorted_slots");
  emu->AddGlobal(g->offsets, "expert_offsets");
  emu->AddGlobal(g->active, "active_experts");
  emu->AddGlobal(g->num_active, "num_active");
  MoeGrouping gr = g->grouping();
  return emu->Launch("align", LaunchDims{1, 1, 1}, kAlignThreads, MoeAlignSmemBytes(slots, p.experts), [&] {
    AlignBody(p.topk_ids, slots, p.experts, gr.sorted_slots, gr.expert_offsets, gr.active_experts, gr.num_active);
  });
}

bool EmulateMoeCombine(const kernels::MoeParams& p, const float* slot_out, WarpEmu* emu, float* out) {
  using namespace kernels::cuda;  // NOLINT: the kernel bodies
  return emu->Launch("combine", MoeCombineGrid(p), kCombineThreads, 0, [&] {
    CombineBody(slot_out, p.topk_ids, p.topk_weights, p.topk, p.dim, out);
  });
}

}  // namespace qprof::warp
