#include "kernels/moe/moe_cpu.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/common/thread_pool.h"
#include "kernels/common/vec.h"
#include "kernels/formats/mxfp4.h"
#include "kernels/formats/nvfp4.h"
#include "kernels/moe/fp4_decode.h"

namespace qprof::kernels {
namespace {

// Output rows per work item. 16 rows of a 4096-wide FP32 tile = 256 KiB: stays in L2
// while every token of the expert reuses it (grouped path).
constexpr int kRowTile = 16;
// Below this many weight elements decoded per call, worker wake-ups cost more than they save.
constexpr int64_t kInlineWork = 1 << 16;

struct Dims {
  int64_t dim, inter, block;
  int64_t w13_row_bytes() const { return dim / 2; }
  int64_t w13_row_scales() const { return dim / block; }
  int64_t w2_row_bytes() const { return inter / 2; }
  int64_t w2_row_scales() const { return inter / block; }
  // Start of expert e's matrices.
  int64_t w13_packed(int64_t e) const { return e * 2 * inter * (dim / 2); }
  int64_t w13_scales(int64_t e) const { return e * 2 * inter * (dim / block); }
  int64_t w2_packed(int64_t e) const { return e * dim * (inter / 2); }
  int64_t w2_scales(int64_t e) const { return e * dim * (inter / block); }
};

Dims DimsOf(const MoeParams& p) { return {p.dim, p.inter, BlockSize(p.format)}; }

float Scale2(const Fp4Weights& w, int64_t e, Fp4Format f) {
  return f == Fp4Format::kNvfp4 ? w.scale2[e] : 1.0f;
}

// Decodes rows [r0, r1) of one expert matrix into buf ([r1-r0, k]).
void DecodeRows(const Fp4Tables& t, Fp4Format f, const uint8_t* packed,
                const uint8_t* scales, float scale2, int64_t k, int64_t block, int64_t r0,
                int64_t r1, float* buf) {
  for (int64_t r = r0; r < r1; ++r) {
    DecodeFp4Row(t, f, packed + r * (k / 2), scales + r * (k / block), scale2, k,
                 buf + (r - r0) * k);
  }
}

// out[t] += sum_j w[t,j] * y[t*topk+j], j in order: the same combine for every path.
void Combine(const MoeParams& p, const std::vector<float>& y) {
  for (int t = 0; t < p.tokens; ++t) {
    float* out = p.out + int64_t{t} * p.dim;
    for (int j = 0; j < p.topk; ++j) {
      int64_t s = int64_t{t} * p.topk + j;
      if (p.topk_ids[s] < 0) continue;
      Axpy(p.topk_weights[s], &y[s * p.dim], out, p.dim);
    }
  }
}

// ---- slot path: work item = (slot, row tile); weights decoded for every slot. ----
QPROF_CPU_CLONES void SlotUpTile(const MoeParams& p, const Fp4Tables& t, int64_t s,
                                 int64_t r0, int64_t r1, float* hidden,
                                 std::vector<float>& buf) {
  const Dims d = DimsOf(p);
  const int64_t e = p.topk_ids[s];
  const float* x = p.x + (s / p.topk) * d.dim;
  const uint8_t* pk = p.w13.packed + d.w13_packed(e);
  const uint8_t* sc = p.w13.scales + d.w13_scales(e);
  const float s2 = Scale2(p.w13, e, p.format);
  buf.resize(static_cast<size_t>(d.dim));
  for (int64_t r = r0; r < r1; ++r) {
    DecodeRows(t, p.format, pk, sc, s2, d.dim, d.block, r, r + 1, buf.data());
    float g = Dot(buf.data(), x, d.dim);
    DecodeRows(t, p.format, pk, sc, s2, d.dim, d.block, d.inter + r, d.inter + r + 1,
               buf.data());
    float u = Dot(buf.data(), x, d.dim);
    hidden[s * d.inter + r] = SwiGlu(g, u, p.swiglu_limit);
  }
}

QPROF_CPU_CLONES void SlotDownTile(const MoeParams& p, const Fp4Tables& t, int64_t s,
                                   int64_t r0, int64_t r1, const float* hidden, float* y,
                                   std::vector<float>& buf) {
  const Dims d = DimsOf(p);
  const int64_t e = p.topk_ids[s];
  const float s2 = Scale2(p.w2, e, p.format);
  buf.resize(static_cast<size_t>(d.inter));
  for (int64_t r = r0; r < r1; ++r) {
    DecodeRows(t, p.format, p.w2.packed + d.w2_packed(e), p.w2.scales + d.w2_scales(e), s2,
               d.inter, d.block, r, r + 1, buf.data());
    y[s * d.dim + r] = Dot(buf.data(), hidden + s * d.inter, d.inter);
  }
}

// ---- grouped path: work item = (expert, row tile); the tile is decoded once. ----
QPROF_CPU_CLONES void GroupedUpTile(const MoeParams& p, const Fp4Tables& t, int64_t e,
                                    const int32_t* slots, int64_t nslots, int64_t r0,
                                    int64_t r1, float* hidden, std::vector<float>& buf) {
  const Dims d = DimsOf(p);
  const int64_t rows = r1 - r0;
  buf.resize(static_cast<size_t>(2 * rows * d.dim));
  const uint8_t* pk = p.w13.packed + d.w13_packed(e);
  const uint8_t* sc = p.w13.scales + d.w13_scales(e);
  const float s2 = Scale2(p.w13, e, p.format);
  DecodeRows(t, p.format, pk, sc, s2, d.dim, d.block, r0, r1, buf.data());
  DecodeRows(t, p.format, pk, sc, s2, d.dim, d.block, d.inter + r0, d.inter + r1,
             buf.data() + rows * d.dim);
  for (int64_t i = 0; i < nslots; ++i) {
    const int64_t s = slots[i];
    const float* x = p.x + (s / p.topk) * d.dim;
    for (int64_t r = 0; r < rows; ++r) {
      float g = Dot(buf.data() + r * d.dim, x, d.dim);
      float u = Dot(buf.data() + (rows + r) * d.dim, x, d.dim);
      hidden[s * d.inter + r0 + r] = SwiGlu(g, u, p.swiglu_limit);
    }
  }
}

QPROF_CPU_CLONES void GroupedDownTile(const MoeParams& p, const Fp4Tables& t, int64_t e,
                                      const int32_t* slots, int64_t nslots, int64_t r0,
                                      int64_t r1, const float* hidden, float* y,
                                      std::vector<float>& buf) {
  const Dims d = DimsOf(p);
  buf.resize(static_cast<size_t>((r1 - r0) * d.inter));
  DecodeRows(t, p.format, p.w2.packed + d.w2_packed(e), p.w2.scales + d.w2_scales(e),
             Scale2(p.w2, e, p.format), d.inter, d.block, r0, r1, buf.data());
  for (int64_t i = 0; i < nslots; ++i) {
    const int64_t s = slots[i];
    for (int64_t r = r0; r < r1; ++r) {
      y[s * d.dim + r] = Dot(buf.data() + (r - r0) * d.inter, hidden + s * d.inter, d.inter);
    }
  }
}

}  // namespace

absl::Status ValidateMoeParams(const MoeParams& p) {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError("moe: " + m); };
  if (p.tokens < 0 || p.dim <= 0 || p.inter <= 0 || p.experts <= 0 || p.topk <= 0) {
    return bad(absl::StrCat("bad dims tokens=", p.tokens, " dim=", p.dim, " inter=", p.inter,
                            " experts=", p.experts, " topk=", p.topk));
  }
  const int block = BlockSize(p.format);
  if (p.dim % block || p.inter % block) {
    return bad(absl::StrCat("dim ", p.dim, " and inter ", p.inter,
                            " must be multiples of the block ", block));
  }
  if (!p.x) return bad("x is null");
  if (!p.topk_ids) return bad("topk_ids is null");
  if (!p.topk_weights) return bad("topk_weights is null");
  if (!p.out) return bad("out is null");
  if (!p.w13.packed || !p.w13.scales) return bad("w13 is null");
  if (!p.w2.packed || !p.w2.scales) return bad("w2 is null");
  if (p.format == Fp4Format::kNvfp4 && (!p.w13.scale2 || !p.w2.scale2)) {
    return bad("nvfp4 weights need scale2");
  }
  for (int64_t s = 0; s < int64_t{p.tokens} * p.topk; ++s) {
    if (p.topk_ids[s] >= p.experts) {
      return bad(absl::StrCat("topk_ids[", s, "] = ", p.topk_ids[s], " >= experts ",
                              p.experts));
    }
  }
  return absl::OkStatus();
}

void MoeAlignCpu(const int32_t* topk_ids, int tokens, int topk, int experts,
                 int32_t* sorted_slots, int32_t* expert_offsets) {
  const int64_t slots = int64_t{tokens} * topk;
  std::fill(expert_offsets, expert_offsets + experts + 1, 0);
  for (int64_t s = 0; s < slots; ++s) {
    if (topk_ids[s] >= 0) ++expert_offsets[topk_ids[s] + 1];
  }
  for (int e = 0; e < experts; ++e) expert_offsets[e + 1] += expert_offsets[e];
  std::vector<int32_t> fill(expert_offsets, expert_offsets + experts);
  for (int64_t s = 0; s < slots; ++s) {
    if (topk_ids[s] >= 0) sorted_slots[fill[topk_ids[s]]++] = static_cast<int32_t>(s);
  }
  for (int64_t i = expert_offsets[experts]; i < slots; ++i) sorted_slots[i] = -1;
}

int CountUniqueExperts(const int32_t* topk_ids, int tokens, int topk, int experts) {
  std::vector<char> seen(std::max(experts, 0), 0);
  int n = 0;
  for (int64_t s = 0; s < int64_t{tokens} * topk; ++s) {
    int e = topk_ids[s];
    if (e >= 0 && e < experts && !seen[e]) {
      seen[e] = 1;
      ++n;
    }
  }
  return n;
}

absl::Status MoeReferenceCpu(const MoeParams& p) {
  if (absl::Status s = ValidateMoeParams(p); !s.ok()) return s;
  const Dims d = DimsOf(p);
  std::vector<float> w13(2 * d.inter * d.dim), w2(d.dim * d.inter), h(d.inter);
  std::vector<float> y(int64_t{p.tokens} * p.topk * d.dim, 0.0f);
  // Dequantises expert e whole with the format's reference decoder.
  auto dequant = [&](const Fp4Weights& w, int64_t packed_off, int64_t scale_off, int64_t e,
                     int64_t rows, int64_t cols, float* out) {
    const uint8_t* pk = w.packed + packed_off;
    const uint8_t* sc = w.scales + scale_off;
    if (p.format == Fp4Format::kMxfp4) {
      fp4::Mxfp4Matrix m;
      m.rows = rows;
      m.cols = cols;
      m.packed.assign(pk, pk + rows * cols / 2);
      m.scales.assign(sc, sc + rows * cols / 32);
      fp4::DequantizeMxfp4(m, out);
    } else {
      fp4::Nvfp4Matrix m;
      m.rows = rows;
      m.cols = cols;
      m.packed.assign(pk, pk + rows * cols / 2);
      m.scales.assign(sc, sc + rows * cols / 16);
      m.scale2 = w.scale2[e];
      fp4::DequantizeNvfp4(m, out);
    }
  };
  for (int64_t e = 0; e < p.experts; ++e) {
    bool used = false;
    for (int64_t s = 0; s < int64_t{p.tokens} * p.topk; ++s) used |= p.topk_ids[s] == e;
    if (!used) continue;
    dequant(p.w13, d.w13_packed(e), d.w13_scales(e), e, 2 * d.inter, d.dim, w13.data());
    dequant(p.w2, d.w2_packed(e), d.w2_scales(e), e, d.dim, d.inter, w2.data());
    for (int64_t s = 0; s < int64_t{p.tokens} * p.topk; ++s) {
      if (p.topk_ids[s] != e) continue;
      const float* x = p.x + (s / p.topk) * d.dim;
      for (int64_t i = 0; i < d.inter; ++i) {
        float g = 0, u = 0;  // FP32, index order
        for (int64_t k = 0; k < d.dim; ++k) {
          g += w13[i * d.dim + k] * x[k];
          u += w13[(d.inter + i) * d.dim + k] * x[k];
        }
        h[i] = SwiGlu(g, u, p.swiglu_limit);
      }
      for (int64_t r = 0; r < d.dim; ++r) {
        float acc = 0;
        for (int64_t k = 0; k < d.inter; ++k) acc += w2[r * d.inter + k] * h[k];
        y[s * d.dim + r] = acc;
      }
    }
  }
  Combine(p, y);
  return absl::OkStatus();
}

absl::Status MoeSlotGemvCpu(const MoeParams& p) {
  if (absl::Status s = ValidateMoeParams(p); !s.ok()) return s;
  const Dims d = DimsOf(p);
  const Fp4Tables& t = GetFp4Tables();
  const int64_t slots = int64_t{p.tokens} * p.topk;
  std::vector<float> own_hidden;
  float* hidden = p.slot_hidden;
  if (!hidden) {
    own_hidden.resize(slots * d.inter);
    hidden = own_hidden.data();
  }
  std::vector<float> y(slots * d.dim, 0.0f);
  ThreadPool* pool = slots * 3 * d.inter * d.dim < kInlineWork ? nullptr : p.pool;
  const int64_t up_tiles = (d.inter + kRowTile - 1) / kRowTile;
  ParallelFor(pool, slots * up_tiles, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<float> buf;
    for (int64_t i = b; i < e; ++i) {
      int64_t s = i / up_tiles, r0 = (i % up_tiles) * kRowTile;
      if (p.topk_ids[s] < 0) continue;
      SlotUpTile(p, t, s, r0, std::min(d.inter, r0 + kRowTile), hidden, buf);
    }
  });
  const int64_t down_tiles = (d.dim + kRowTile - 1) / kRowTile;
  ParallelFor(pool, slots * down_tiles, 1, [&](int64_t b, int64_t e) {
    thread_local std::vector<float> buf;
    for (int64_t i = b; i < e; ++i) {
      int64_t s = i / down_tiles, r0 = (i % down_tiles) * kRowTile;
      if (p.topk_ids[s] < 0) continue;
      SlotDownTile(p, t, s, r0, std::min(d.dim, r0 + kRowTile), hidden, y.data(), buf);
    }
  });
  Combine(p, y);
  return absl::OkStatus();
}

absl::Status MoeGroupedCpu(const MoeParams& p) {
  if (absl::Status s = ValidateMoeParams(p); !s.ok()) return s;
  const Dims d = DimsOf(p);
  const Fp4Tables& t = GetFp4Tables();
  const int64_t slots = int64_t{p.tokens} * p.topk;
  std::vector<int32_t> own_sorted, own_offsets;
  const int32_t* sorted = p.sorted_slots;
  const int32_t* offsets = p.expert_offsets;
  if (!sorted || !offsets) {
    own_sorted.resize(slots);
    own_offsets.resize(p.experts + 1);
    MoeAlignCpu(p.topk_ids, p.tokens, p.topk, p.experts, own_sorted.data(),
                own_offsets.data());
    sorted = own_sorted.data();
    offsets = own_offsets.data();
  }
  std::vector<int32_t> used;  // experts with at least one slot
  for (int e = 0; e < p.experts; ++e) {
    if (offsets[e + 1] > offsets[e]) used.push_back(e);
  }
  std::vector<float> own_hidden;
  float* hidden = p.slot_hidden;
  if (!hidden) {
    own_hidden.resize(slots * d.inter);
    hidden = own_hidden.data();
  }
  std::vector<float> y(slots * d.dim, 0.0f);
  const int64_t n_used = static_cast<int64_t>(used.size());
  ThreadPool* pool = n_used * 3 * d.inter * d.dim < kInlineWork ? nullptr : p.pool;
  const int64_t up_tiles = (d.inter + kRowTile - 1) / kRowTile;
  ParallelFor(pool, n_used * up_tiles, 1, [&](int64_t b, int64_t end) {
    thread_local std::vector<float> buf;
    for (int64_t i = b; i < end; ++i) {
      int64_t e = used[i / up_tiles], r0 = (i % up_tiles) * kRowTile;
      GroupedUpTile(p, t, e, sorted + offsets[e], offsets[e + 1] - offsets[e], r0,
                    std::min(d.inter, r0 + kRowTile), hidden, buf);
    }
  });
  const int64_t down_tiles = (d.dim + kRowTile - 1) / kRowTile;
  ParallelFor(pool, n_used * down_tiles, 1, [&](int64_t b, int64_t end) {
    thread_local std::vector<float> buf;
    for (int64_t i = b; i < end; ++i) {
      int64_t e = used[i / down_tiles], r0 = (i % down_tiles) * kRowTile;
      GroupedDownTile(p, t, e, sorted + offsets[e], offsets[e + 1] - offsets[e], r0,
                      std::min(d.dim, r0 + kRowTile), hidden, y.data(), buf);
    }
  });
  Combine(p, y);
  return absl::OkStatus();
}

}  // namespace qprof::kernels
