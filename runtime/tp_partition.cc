#include "runtime/tp_partition.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace qprof::runtime {
namespace {

// Rows [r0, r1) of a BF16 matrix.
Bf16Tensor Rows(const Bf16Tensor& t, int64_t r0, int64_t r1) {
  Bf16Tensor o;
  o.rows = r1 - r0;
  o.cols = t.cols;
  o.data.assign(t.data.begin() + r0 * t.cols, t.data.begin() + r1 * t.cols);
  return o;
}

// Columns [c0, c1) of a BF16 matrix.
Bf16Tensor Cols(const Bf16Tensor& t, int64_t c0, int64_t c1) {
  Bf16Tensor o;
  o.rows = t.rows;
  o.cols = c1 - c0;
  o.data.reserve(o.rows * o.cols);
  for (int64_t r = 0; r < t.rows; ++r) {
    const auto row = t.data.begin() + r * t.cols;
    o.data.insert(o.data.end(), row + c0, row + c1);
  }
  return o;
}

// Matrices [m0, m1) of an FP4 stack (contiguous: packed, scales and scale2 per matrix).
Fp4Stack Matrices(const Fp4Stack& s, int64_t m0, int64_t m1) {
  const int64_t block = kernels::BlockSize(s.format);
  const int64_t pk = s.rows * s.cols / 2, sc = s.rows * s.cols / block;
  Fp4Stack o = {s.format, m1 - m0, s.rows, s.cols, {}, {}, {}};
  o.packed.assign(s.packed.begin() + m0 * pk, s.packed.begin() + m1 * pk);
  o.scales.assign(s.scales.begin() + m0 * sc, s.scales.begin() + m1 * sc);
  if (!s.scale2.empty()) o.scale2.assign(s.scale2.begin() + m0, s.scale2.begin() + m1);
  return o;
}

// For one-matrix stack W13 [2I, D] (gate rows then up rows): gate rows [i0, i1) then the
// matching up rows [I + i0, I + i1).
Fp4Stack GateUpRows(const Fp4Stack& s, int64_t i0, int64_t i1) {
  const int64_t block = kernels::BlockSize(s.format), inter = s.rows / 2;
  const int64_t pk_row = s.cols / 2, sc_row = s.cols / block;
  Fp4Stack o = {s.format, s.count, 2 * (i1 - i0), s.cols, {}, {}, s.scale2};
  for (int64_t base : {int64_t{0}, inter}) {
    o.packed.insert(o.packed.end(), s.packed.begin() + (base + i0) * pk_row,
                    s.packed.begin() + (base + i1) * pk_row);
    o.scales.insert(o.scales.end(), s.scales.begin() + (base + i0) * sc_row,
                    s.scales.begin() + (base + i1) * sc_row);
  }
  return o;
}

// For one-matrix stack W2 [D, I]: columns [i0, i1) (both multiples of the scale block, so
// whole bytes and whole scale blocks move).
Fp4Stack ColumnRange(const Fp4Stack& s, int64_t i0, int64_t i1) {
  const int64_t block = kernels::BlockSize(s.format);
  const int64_t pk_row = s.cols / 2, sc_row = s.cols / block;
  Fp4Stack o = {s.format, s.count, s.rows, i1 - i0, {}, {}, s.scale2};
  for (int64_t r = 0; r < s.rows; ++r) {
    o.packed.insert(o.packed.end(), s.packed.begin() + r * pk_row + i0 / 2,
                    s.packed.begin() + r * pk_row + i1 / 2);
    o.scales.insert(o.scales.end(), s.scales.begin() + r * sc_row + i0 / block,
                    s.scales.begin() + r * sc_row + i1 / block);
  }
  return o;
}

}  // namespace

absl::StatusOr<ModelWeights> SliceWeights(const ModelWeights& full, const TpSlice& s) {
  const ModelArch& c = full.arch;
  if (s.tp < 1 || s.head_end > c.n_heads || s.expert_end > c.n_routed_experts) {
    return absl::InvalidArgumentError(
        absl::StrCat("tp slice of rank ", s.rank, " does not fit model ", c.name));
  }
  ModelWeights o;
  o.arch = c;
  o.format = full.format;
  o.layers = full.layers;
  o.embed = full.embed;
  o.final_norm = full.final_norm;
  o.lm_head = full.lm_head;
  o.source = full.source;
  const int64_t dqk = c.d_qk(), dv = c.kv_lora_rank;
  o.layer.reserve(full.layer.size());
  for (const LayerWeights& l : full.layer) {
    LayerWeights t;
    t.attn_norm = l.attn_norm;
    t.wq_a = l.wq_a;
    t.q_norm = l.q_norm;
    t.wq_b = Rows(l.wq_b, s.head_begin * dqk, s.head_end * dqk);
    t.wkv_a = l.wkv_a;
    t.kv_norm = l.kv_norm;
    t.wo_a = Cols(l.wo_a, s.head_begin * dv, s.head_end * dv);
    t.wo_b = l.wo_b;
    t.wi_q = l.wi_q;
    t.wi_k = l.wi_k;
    t.wi_w = l.wi_w;
    t.ffn_norm = l.ffn_norm;
    t.gate = l.gate;
    t.w13 = Matrices(l.w13, s.expert_begin, s.expert_end);
    t.w2 = Matrices(l.w2, s.expert_begin, s.expert_end);
    if (c.n_shared_experts > 0) {
      t.shared_w13 = GateUpRows(l.shared_w13, s.shared_inter_begin, s.shared_inter_end);
      t.shared_w2 = ColumnRange(l.shared_w2, s.shared_inter_begin, s.shared_inter_end);
    }
    o.layer.push_back(std::move(t));
  }
  return o;
}

void LocalExpertIds(const int32_t* ids, int64_t n, int expert_begin, int expert_end,
                    int32_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = ids[i] >= expert_begin && ids[i] < expert_end ? ids[i] - expert_begin : -1;
  }
}

}  // namespace qprof::runtime
