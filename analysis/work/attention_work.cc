// Attention rules (op_work.h states the conventions).
#include "absl/strings/str_cat.h"
#include "analysis/work/op_work.h"
#include "analysis/work/work_util.h"

namespace qprof::work {
namespace {

using internal::ArgBytes;
using internal::Done;
using internal::FlagAt;
using internal::Invalid;
using internal::TensorAt;

// Where an op keeps its operands and its causal flag.
struct AttentionLayout {
  std::string_view op;
  bool bshd;               // [B, S, H, d] (else [B, H, S, d])
  int causal_at;           // index of the causal flag in the op's arguments; -1: none
  int mask_type_at;        // index of an integer mask type (0 = none), -1: none
  int cu_seqlens_q_at;     // varlen: index of cu_seqlens_q; -1: never varlen
};

constexpr AttentionLayout kLayouts[] = {
    // scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    {"aten::scaled_dot_product_attention", false, 5, -1, -1},
    // _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, scale)
    {"aten::_scaled_dot_product_flash_attention", false, 4, -1, -1},
    // _scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale)
    {"aten::_scaled_dot_product_efficient_attention", false, 6, -1, -1},
    // _scaled_dot_product_cudnn_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_cudnn_attention", false, 6, -1, -1},
    // _flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
    {"aten::_flash_attention_forward", true, 8, -1, 3},
    // _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    //   max_seqlen_k, dropout_p, custom_mask_type, ...)
    {"aten::_efficient_attention_forward", true, -1, 9, 4},
    // flash_attn::_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_forward", true, 5, -1, -1},
    // flash_attn::_flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    //   max_seqlen_k, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_varlen_forward", true, 9, -1, 3},
};

}  // namespace

OpWorkResult AttentionWork(const OpCall& call) {
  const AttentionLayout* l = nullptr;
  for (const AttentionLayout& x : kLayouts) {
    if (x.op == call.op) l = &x;
  }
  if (l == nullptr) return OpWorkResult{};
  if (!TensorAt(call, 0) || !TensorAt(call, 1) || !TensorAt(call, 2)) {
    return Invalid(call, "needs query, key and value tensors");
  }
  const OpArg& q = call.args[0];
  const OpArg& k = call.args[1];
  const OpArg& v = call.args[2];
  bool causal = l->causal_at >= 0 && FlagAt(call, static_cast<size_t>(l->causal_at));
  if (l->mask_type_at >= 0 && static_cast<size_t>(l->mask_type_at) < call.args.size()) {
    const std::string& m = call.args[static_cast<size_t>(l->mask_type_at)].value;
    causal = !m.empty() && m != "0";
  }
  const bool varlen = l->cu_seqlens_q_at >= 0 && TensorAt(call, static_cast<size_t>(l->cu_seqlens_q_at));
  double b = 0, h = 0, hkv = 0, nq = 0, nkv = 0, d = 0, dv = 0, pairs = 0;
  if (varlen) {
    // [total, H, d] with cu_seqlens [B + 1]: the pairs are known for decode only.
    if (q.dims.size() != 3 || k.dims.size() != 3 || v.dims.size() != 3) {
      return Invalid(call, "varlen attention expects [total, heads, dim] operands");
    }
    const OpArg& cu = call.args[static_cast<size_t>(l->cu_seqlens_q_at)];
    if (cu.dims.size() != 1 || cu.dims[0] < 2) return Invalid(call, "cu_seqlens is not [batch + 1]");
    b = static_cast<double>(cu.dims[0] - 1);
    nq = static_cast<double>(q.dims[0]);
    nkv = static_cast<double>(k.dims[0]);
    h = static_cast<double>(q.dims[1]);
    hkv = static_cast<double>(k.dims[1]);
    d = static_cast<double>(q.dims[2]);
    dv = static_cast<double>(v.dims[2]);
    if (nq != b) {
      return Invalid(call, "varlen prefill: the per-sequence lengths are not in the shapes");
    }
    pairs = nkv;  // one query per sequence attends every key of its sequence
  } else {
    if (q.dims.size() != 4 || k.dims.size() != 4 || v.dims.size() != 4) {
      return Invalid(call, "expects 4-D query, key and value");
    }
    const size_t s_at = l->bshd ? 1 : 2, h_at = l->bshd ? 2 : 1;
    b = static_cast<double>(q.dims[0]);
    nq = static_cast<double>(q.dims[s_at]);
    nkv = static_cast<double>(k.dims[s_at]);
    h = static_cast<double>(q.dims[h_at]);
    hkv = static_cast<double>(k.dims[h_at]);
    d = static_cast<double>(q.dims[3]);
    dv = static_cast<double>(v.dims[3]);
    if (k.dims[0] != q.dims[0] || v.dims[0] != q.dims[0]) return Invalid(call, "batch sizes differ");
    if (v.dims[s_at] != k.dims[s_at]) return Invalid(call, "key and value lengths differ");
    // FLOPs conventions: causal halves the score matrix (as TraceLens and the FlashAttention
    // benchmarks count it).
    pairs = b * nq * nkv * (causal ? 0.5 : 1.0);
  }
  if (k.dims.back() != q.dims.back()) return Invalid(call, "query and key head dims differ");
  if (hkv <= 0 || h <= 0 || static_cast<int64_t>(h) % static_cast<int64_t>(hkv) != 0) {
    return Invalid(call, "query heads are not a multiple of key heads");
  }
  if (v.dims[v.dims.size() - 2] != k.dims[k.dims.size() - 2] && l->bshd) {
    return Invalid(call, "key and value heads differ");
  }
  OpWork w;
  w.kind = std::string(kind::kAttention);
  // QK^T: 2*d per (query, key, head); PV: 2*dv.
  w.flops = 2.0 * h * pairs * (d + dv);
  bool known = true;
  OpArg out = q;  // O: like Q with dv
  out.dims.back() = static_cast<int64_t>(dv);
  w.bytes = ArgBytes(q, &known) + ArgBytes(k, &known) + ArgBytes(v, &known) + ArgBytes(out, &known);
  w.bytes_known = known;
  if (!known) w.bytes = 0;
  w.precision = q.dtype ? std::string(q.dtype->precision) : "";
  w.description = internal::Describe(
      call,
      absl::StrCat("q", DimsText(q), " k", DimsText(k), " v", DimsText(v),
                   varlen ? " varlen decode" : "", causal ? " causal" : ""),
      q);
  return Done(std::move(w));
}

}  // namespace qprof::work
