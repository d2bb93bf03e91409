// GEMM conventions (op_work.h: kGemm, kBatchedGemm, kMatmul, kGroupedGemm).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/work/work_util.h"

namespace qprof::work::internal {
namespace {

struct Mnk {
  double batch = 1, m = 0, n = 0, k = 0;
};

// Where a GEMM's output goes: an argument (out= past the schema's inputs, or "Tensor!
// out"), or `elements` at a dtype. Every other tensor the schema takes as input is read.
struct Traffic {
  double read = 0, written = 0;
  bool known = true;
  std::optional<Dtype> out_dtype;
};

Traffic GemmTraffic(const OpCall& call, const OpRule& rule, double out_elements,
                    std::optional<Dtype> default_out) {
  Traffic t;
  const OpArg* out = ArgAt(call, rule.at.out);
  for (size_t i = 0; i < call.args.size(); ++i) {
    const OpArg& a = call.args[i];
    if (&a == out) continue;
    const bool past_inputs = rule.at.inputs >= 0 && i >= static_cast<size_t>(rule.at.inputs);
    if (past_inputs && out == nullptr && a.IsTensor() && a.Elements() == out_elements) {
      out = &a;  // out=: written once, never read
      continue;
    }
    t.read += ArgBytes(a, &t.known);
  }
  if (out != nullptr && out->IsTensor()) {
    t.written = ArgBytes(*out, &t.known);
    t.out_dtype = out->dtype;
  } else {
    t.out_dtype = default_out;
    if (!default_out) t.known = false;
    t.written = default_out ? out_elements * default_out->bytes : 0;
  }
  return t;
}

// The output dtype a GEMM writes when no output argument says: out_dtype when recorded,
// BF16 for the rows that say so, else A's.
std::optional<Dtype> DefaultOutDtype(const OpCall& call, const OpRule& rule, const OpArg& a) {
  if (auto d = DtypeOfScalarTypeCode(ValueAt(call, rule.at.out_dtype))) return d;
  if (rule.flags & kOutBf16) return DtypeByName("bf16");
  return a.dtype;
}

void SetWeight(const OpArg& b, double pack, bool known, OpWork* w) {
  bool ok = known;
  w->weight_bytes = ok ? ArgBytes(b, &ok) : 0;
  if (!ok || !b.dtype) return;
  w->weight_bits = ElementBytes(b) * 8 / pack;
  w->weight_format = pack > 1 ? "fp4" : std::string(FormatOfDtype(*b.dtype));
}

OpWork Finish(const OpCall& call, const OpRule& rule, const Mnk& g, double add_flops,
              const OpArg& a, const OpArg* weight, std::string shapes) {
  OpWork w;
  const double pack = (rule.flags & kPackedK2) ? 2 : 1;
  // 2 FLOPs (multiply and add) per multiply-accumulate; a bias or added matrix one per output.
  w.flops = 2.0 * g.batch * g.m * g.n * g.k + add_flops;
  Traffic t = GemmTraffic(call, rule, g.batch * g.m * g.n, DefaultOutDtype(call, rule, a));
  w.bytes_known = t.known;
  w.bytes = t.known ? t.read + t.written : 0;
  if (weight != nullptr) SetWeight(*weight, pack, t.known, &w);
  w.precision = pack > 1 ? "fp4" : Precision(a);
  if (t.out_dtype && a.dtype && t.out_dtype->name != a.dtype->name) {
    absl::StrAppend(&shapes, " -> ", std::string(t.out_dtype->name));
  }
  w.description = Describe(call, shapes, a);
  return w;
}

}  // namespace

OpWorkResult GemmWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  if (!TensorAt(call, rule.at.a) || !TensorAt(call, rule.at.b)) {
    return Invalid(call, "needs two matrices");
  }
  const OpArg& a = *ArgAt(call, rule.at.a);
  const OpArg& b = *ArgAt(call, rule.at.b);
  const bool nk = rule.flags & kWeightNK;
  if (b.dims.size() != 2) return Invalid(call, "expects a 2-D second matrix");
  if (!nk && a.dims.size() != 2) return Invalid(call, "expects 2-D matrices");
  // Linear layout: A [..., K] x B [N, K]^T; mm layout: A [M, K] x B [K, N].
  const int64_t ka = a.dims.back(), kb = nk ? b.dims[1] : b.dims[0];
  if (ka != kb) return Invalid(call, "inner dimensions differ");
  const double pack = (rule.flags & kPackedK2) ? 2 : 1;
  Mnk g{1, Prod(a.dims, 0, a.dims.size() - 1), static_cast<double>(nk ? b.dims[0] : b.dims[1]),
        static_cast<double>(ka) * pack};
  std::string shapes = absl::StrCat(DimsText(a), "x", DimsText(b), nk ? "^T" : "");
  double add = 0;
  if (TensorAt(call, rule.at.bias)) {
    add = g.m * g.n;
    absl::StrAppend(&shapes, "+", DimsText(*ArgAt(call, rule.at.bias)));
  } else if (rule.at.bias == 0) {
    return Invalid(call, "addmm without its added matrix");
  }
  return Done(Finish(call, rule, g, add, a, &b, shapes));
}

OpWorkResult BatchedGemmWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  if (!TensorAt(call, rule.at.a) || !TensorAt(call, rule.at.b)) {
    return Invalid(call, "needs two batches of matrices");
  }
  const OpArg& a = *ArgAt(call, rule.at.a);
  const OpArg& b = *ArgAt(call, rule.at.b);
  if (a.dims.size() != 3 || b.dims.size() != 3) return Invalid(call, "expects 3-D batches");
  if (a.dims[0] != b.dims[0]) return Invalid(call, "batch sizes differ");
  if (a.dims[2] != b.dims[1]) return Invalid(call, "inner dimensions differ");
  Mnk g{static_cast<double>(a.dims[0]), static_cast<double>(a.dims[1]),
        static_cast<double>(b.dims[2]), static_cast<double>(a.dims[2])};
  std::string shapes = absl::StrCat(DimsText(a), "x", DimsText(b));
  double add = 0;
  if (rule.at.bias >= 0) {
    if (!TensorAt(call, rule.at.bias)) return Invalid(call, "baddbmm without its added batch");
    add = g.batch * g.m * g.n;
    absl::StrAppend(&shapes, "+", DimsText(*ArgAt(call, rule.at.bias)));
  }
  return Done(Finish(call, rule, g, add, a, nullptr, shapes));
}

// torch.matmul: 1-D operands are a row (first) or a column (second); batch dimensions
// broadcast.
OpWorkResult MatmulWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  if (!TensorAt(call, rule.at.a) || !TensorAt(call, rule.at.b)) {
    return Invalid(call, "needs two tensors");
  }
  const OpArg& a = *ArgAt(call, rule.at.a);
  const OpArg& b = *ArgAt(call, rule.at.b);
  std::vector<int64_t> ad = a.dims, bd = b.dims;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t k = ad.back();
  if (k != bd[bd.size() - 2]) return Invalid(call, "inner dimensions differ");
  std::vector<int64_t> ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
  double batch = 1;
  for (size_t i = 0; i < std::max(ab.size(), bb.size()); ++i) {
    int64_t x = i < ab.size() ? ab[ab.size() - 1 - i] : 1;
    int64_t y = i < bb.size() ? bb[bb.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return Invalid(call, "batch dimensions do not broadcast");
    batch *= static_cast<double>(std::max(x, y));
  }
  Mnk g{batch, static_cast<double>(ad[ad.size() - 2]), static_cast<double>(bd.back()),
        static_cast<double>(k)};
  const OpArg* weight = b.dims.size() == 2 ? &b : nullptr;  // x @ W: a weight-like operand
  return Done(Finish(call, rule, g, 0, a, weight, absl::StrCat(DimsText(a), "x", DimsText(b))));
}

// _grouped_mm(self, mat2, offs?, bias?, out_dtype?): 2-D x 3-D (rows grouped by offs),
// 3-D x 3-D (one GEMM per group), 2-D x 2-D (K grouped by offs), 3-D x 2-D (N grouped).
OpWorkResult GroupedGemmWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  if (!TensorAt(call, rule.at.a) || !TensorAt(call, rule.at.b)) {
    return Invalid(call, "needs two operands");
  }
  const OpArg& a = *ArgAt(call, rule.at.a);
  const OpArg& b = *ArgAt(call, rule.at.b);
  const size_t ra = a.dims.size(), rb = b.dims.size();
  auto d = [](int64_t x) { return static_cast<double>(x); };
  Mnk g;
  double groups = 1;  // output blocks per (M, N)
  if (ra == 2 && rb == 3) {
    if (a.dims[1] != b.dims[1]) return Invalid(call, "inner dimensions differ");
    g = {1, d(a.dims[0]), d(b.dims[2]), d(a.dims[1])};
  } else if (ra == 3 && rb == 3) {
    if (a.dims[0] != b.dims[0] || a.dims[2] != b.dims[1]) {
      return Invalid(call, "groups or inner dimensions differ");
    }
    g = {d(a.dims[0]), d(a.dims[1]), d(b.dims[2]), d(a.dims[2])};
  } else if (ra == 2 && rb == 2) {
    if (a.dims[1] != b.dims[0] || !TensorAt(call, rule.at.offs)) {
      return Invalid(call, "inner dimensions differ or no offsets");
    }
    g = {1, d(a.dims[0]), d(b.dims[1]), d(a.dims[1])};
    groups = d(ArgAt(call, rule.at.offs)->dims[0]);  // output [groups, M, N]
  } else if (ra == 3 && rb == 2) {
    if (a.dims[2] != b.dims[0]) return Invalid(call, "inner dimensions differ");
    g = {1, d(a.dims[1]), d(b.dims[1]), d(a.dims[2])};
  } else {
    return Invalid(call, "operand ranks other than 2 or 3");
  }
  OpWork w;
  w.flops = 2.0 * g.batch * g.m * g.n * g.k;
  Traffic t = GemmTraffic(call, rule, groups * g.batch * g.m * g.n, DefaultOutDtype(call, rule, a));
  w.bytes_known = t.known;
  w.bytes = t.known ? t.read + t.written : 0;
  SetWeight(b, 1, t.known, &w);
  w.precision = Precision(a);
  w.description = Describe(call, absl::StrCat(DimsText(a), "x", DimsText(b)), a);
  return Done(std::move(w));
}

}  // namespace qprof::work::internal
