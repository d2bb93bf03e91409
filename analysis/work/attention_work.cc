// Attention conventions (op_work.h: kAttention, kStepAttention).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/work/work_util.h"

namespace qprof::work::internal {
namespace {

double D(int64_t x) { return static_cast<double>(x); }

// (query, key) pairs of a part of the step: a context chunk is causal within itself (its
// queries see the cached keys and the chunk's earlier tokens: Σ q·k - q²/2, the halving
// convention of dense causal attention), a decode token sees every key of its sequence.
double ContextPairs(const SequenceSums& s) { return s.sqsk - s.sqsq / 2; }
double GenerationPairs(const SequenceSums& s) { return s.sqsk; }

std::string SumsText(std::string_view part, const SequenceSums& s) {
  return absl::StrFormat("%s %.0f sequences, %.0f queries, %.0f keys", std::string(part), s.requests,
                         s.sq, s.sk);
}

// The part(s) of the step a call with `tokens` query rows covers; "" when none fits.
struct StepPart {
  bool context = false, generation = false;
  std::string note;
};

std::string FitStep(const IterationAnnotation& step, double tokens, bool decode_only, StepPart* p) {
  const SequenceSums& c = step.context;
  const SequenceSums& g = step.generation;
  // Each sequence's keys include its queries: k_i >= q_i, so Σk >= Σq and Σq·k >= Σq².
  for (const SequenceSums* s : {&c, &g}) {
    if (s->sk < s->sq || s->sqsk < s->sqsq) return "its sums are inconsistent (fewer keys than queries)";
  }
  if (decode_only) {
    if (g.sq <= 0) return "the step has no decode tokens";
    if (tokens < g.sq) {
      return absl::StrFormat("%.0f query rows for the step's %.0f decode tokens", tokens, g.sq);
    }
    p->generation = true;
  } else if (tokens == c.sq + g.sq || (tokens > c.sq + g.sq && c.sq + g.sq > 0)) {
    p->context = c.sq > 0;
    p->generation = g.sq > 0;
  } else if (tokens == g.sq) {
    p->generation = true;
  } else if (tokens == c.sq) {
    p->context = true;
  } else {
    return absl::StrFormat("%.0f query rows match no part of the step (%.0f context + %.0f decode tokens)",
                           tokens, c.sq, g.sq);
  }
  const double covered = (p->context ? c.sq : 0) + (p->generation ? g.sq : 0);
  if (tokens > covered) p->note = absl::StrFormat(", %.0f rows padded", tokens - covered);
  return "";
}

constexpr std::string_view kNoLengths =
    "the key lengths are not recorded (they live in the KV cache's index tensors); an "
    "iteration annotation stating the step's sums (vLLM execute_<n>_context_..(sq..sk..)"
    "_generation_..(..), SGLang step[...], ATOM) gives them";

}  // namespace

OpWorkResult AttentionWork(const OpCall& call, const OpRule& rule, const OpContext& ctx) {
  const ArgMap& at = rule.at;
  if (!TensorAt(call, at.q) || !TensorAt(call, at.k) || !TensorAt(call, at.v)) {
    return Invalid(call, "needs query, key and value tensors");
  }
  const OpArg& q = *ArgAt(call, at.q);
  const OpArg& k = *ArgAt(call, at.k);
  const OpArg& v = *ArgAt(call, at.v);
  bool causal = FlagAt(call, at.causal);
  if (const OpArg* m = ArgAt(call, at.mask_type)) causal = !m->value.empty() && m->value != "0";
  const bool varlen = TensorAt(call, at.cu_q);
  double h = 0, hkv = 0, nq = 0, nkv = 0, d = 0, dv = 0, pairs = 0;
  std::string how;
  if (varlen) {
    // [total, H, d] with cu_seqlens [B + 1].
    if (q.dims.size() != 3 || k.dims.size() != 3 || v.dims.size() != 3) {
      return Invalid(call, "varlen attention expects [total, heads, dim] operands");
    }
    const OpArg& cu = *ArgAt(call, at.cu_q);
    if (cu.dims.size() != 1 || cu.dims[0] < 2) return Invalid(call, "cu_seqlens is not [batch + 1]");
    const double b = D(cu.dims[0] - 1);
    nq = D(q.dims[0]);
    nkv = D(k.dims[0]);
    h = D(q.dims[1]);
    hkv = D(k.dims[1]);
    d = D(q.dims[2]);
    dv = D(v.dims[2]);
    auto max_q = IntList(ValueAt(call, at.max_q), 1, -1);
    auto max_k = IntList(ValueAt(call, at.max_k), 1, -1);
    if (nq == b) {
      pairs = nkv;  // decode: one query per sequence attends every key of its sequence
      how = " varlen decode";
    } else if (ctx.step != nullptr && ctx.step->has_keys && ctx.step->QueryTokens() == nq &&
               ctx.step->context.sqsk >= ctx.step->context.sqsq &&
               ctx.step->generation.sqsk >= ctx.step->generation.sqsq) {
      const IterationAnnotation& s = *ctx.step;
      pairs = (causal ? ContextPairs(s.context) : s.context.sqsk) + GenerationPairs(s.generation);
      how = absl::StrCat(" varlen, lengths from the ", s.format, " iteration annotation");
    } else if (max_q && max_k && (*max_q)[0] > 0 && nq == b * D((*max_q)[0]) &&
               nkv == b * D((*max_k)[0])) {
      // Every sequence at its maximum: the lengths are max_seqlen_q and max_seqlen_k.
      const double lq = D((*max_q)[0]), lk = D((*max_k)[0]);
      if (lk < lq && causal) return Invalid(call, "fewer keys than queries in a causal call");
      pairs = b * (causal ? lq * lk - lq * lq / 2 : lq * lk);
      how = " varlen, every sequence at max_seqlen";
    } else {
      return Invalid(call, absl::StrCat("varlen prefill: the per-sequence lengths are not in the "
                                        "shapes; ", std::string(kNoLengths)));
    }
  } else {
    if (q.dims.size() != 4 || k.dims.size() != 4 || v.dims.size() != 4) {
      return Invalid(call, "expects 4-D query, key and value");
    }
    const bool bshd = rule.flags & kBshd;
    const size_t s_at = bshd ? 1 : 2, h_at = bshd ? 2 : 1;
    const double b = D(q.dims[0]);
    nq = D(q.dims[s_at]);
    nkv = D(k.dims[s_at]);
    h = D(q.dims[h_at]);
    hkv = D(k.dims[h_at]);
    d = D(q.dims[3]);
    dv = D(v.dims[3]);
    if (k.dims[0] != q.dims[0] || v.dims[0] != q.dims[0]) return Invalid(call, "batch sizes differ");
    if (v.dims[s_at] != k.dims[s_at]) return Invalid(call, "key and value lengths differ");
    // Causal halves the score matrix (as TraceLens and the FlashAttention benchmarks count it).
    pairs = b * nq * nkv * (causal ? 0.5 : 1.0);
  }
  if (k.dims.back() != q.dims.back()) return Invalid(call, "query and key head dims differ");
  if (hkv <= 0 || h <= 0 || static_cast<int64_t>(h) % static_cast<int64_t>(hkv) != 0) {
    return Invalid(call, "query heads are not a multiple of key heads");
  }
  if (v.dims[v.dims.size() - 2] != k.dims[k.dims.size() - 2] && (rule.flags & kBshd)) {
    return Invalid(call, "key and value heads differ");
  }
  OpWork w;
  // QK^T: 2*d per (query, key, head); PV: 2*dv.
  w.flops = 2.0 * h * pairs * (d + dv);
  OpArg out = q;  // O: an output argument, else like Q with dv
  out.dims.back() = static_cast<int64_t>(dv);
  if (TensorAt(call, at.out)) out = *ArgAt(call, at.out);
  w.bytes = ArgBytes(q, &w.bytes_known) + ArgBytes(k, &w.bytes_known) +
            ArgBytes(v, &w.bytes_known) + ArgBytes(out, &w.bytes_known);
  w.precision = Precision(q);
  w.description = Describe(call,
                           absl::StrCat("q", DimsText(q), " k", DimsText(k), " v", DimsText(v), how,
                                        causal ? " causal" : ""),
                           q);
  return Done(std::move(w));
}

OpWorkResult StepAttentionWork(const OpCall& call, const OpRule& rule, const OpContext& ctx) {
  const ArgMap& at = rule.at;
  if (!TensorAt(call, at.q) || !TensorAt(call, at.k)) return Invalid(call, "needs query and key tensors");
  const OpArg& q = *ArgAt(call, at.q);
  const OpArg& k = *ArgAt(call, at.k);
  if (q.dims.size() < 3 || k.dims.size() < 3) return Invalid(call, "expects [tokens, heads, dim] operands");
  // Q: [T, H, d] or [B, s_q, H, d]; K: new tokens [T, Hkv, d] or a cache with the KV heads
  // at dimension -2 ([blocks, page, Hkv, d], [pages, Hkv, d]) or 1 (kKvHeadsAt1).
  const double tokens = Prod(q.dims, 0, q.dims.size() - 2);
  const double h = D(q.dims[q.dims.size() - 2]), d = D(q.dims.back());
  const double hkv = D((rule.flags & kKvHeadsAt1) ? k.dims[1] : k.dims[k.dims.size() - 2]);
  double dv = d;
  if (rule.flags & kSharedKV) {
    auto v = IntList(ValueAt(call, at.head_dim_v), 1, -1);
    if (!v || (*v)[0] <= 0) return Invalid(call, "head_size_v not recorded");
    dv = D((*v)[0]);
  } else if (TensorAt(call, at.v) && !(rule.flags & kKvHeadsAt1)) {
    dv = D(ArgAt(call, at.v)->dims.back());
  }
  if (hkv <= 0 || h <= 0 || static_cast<int64_t>(h) % static_cast<int64_t>(hkv) != 0) {
    return Invalid(call, "query heads are not a multiple of key heads");
  }
  if (ctx.step == nullptr || !ctx.step->has_keys) return Invalid(call, kNoLengths);
  const IterationAnnotation& s = *ctx.step;
  StepPart part;
  if (std::string e = FitStep(s, tokens, rule.flags & kDecodeOnly, &part); !e.empty()) {
    return Invalid(call, absl::StrCat("the ", s.format, " iteration annotation does not fit: ", e));
  }
  double pairs = 0, sq = 0, sk = 0;
  std::string parts;
  if (part.context) {
    pairs += ContextPairs(s.context);
    sq += s.context.sq;
    sk += s.context.sk;
    parts = SumsText("context", s.context);
  }
  if (part.generation) {
    pairs += GenerationPairs(s.generation);
    sq += s.generation.sq;
    sk += s.generation.sk;
    absl::StrAppend(&parts, parts.empty() ? "" : " + ", SumsText("decode", s.generation));
  }
  OpWork w;
  w.flops = 2.0 * h * pairs * (d + dv);
  const double qb = ElementBytes(q), kb = ElementBytes(k);
  w.bytes_known = qb > 0 && kb > 0;
  // Q read and O written per query token; each sequence's keys and values read once.
  const double kv_width = (rule.flags & kSharedKV) ? d : d + dv;
  w.bytes = sq * h * (d + dv) * qb + sk * hkv * kv_width * kb;
  w.precision = Precision(q);
  w.description = Describe(
      call,
      absl::StrCat("q", DimsText(q), " k", DimsText(k), ": ", parts, part.note, " (",
                   s.format, " iteration annotation", s.keys_assumed ? ", keys taken equal to queries" : "",
                   ")"),
      q);
  return Done(std::move(w));
}

}  // namespace qprof::work::internal
