// GEMM and convolution rules (op_work.h states the conventions).
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/work/op_work.h"
#include "analysis/work/work_util.h"

namespace qprof::work {
namespace {

using internal::ArgBytes;
using internal::Done;
using internal::ElementBytes;
using internal::Invalid;
using internal::TensorAt;

double Prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  double n = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) n *= static_cast<double>(d[i]);
  return n;
}

// Sums the bytes of every tensor argument.
double InputBytes(const OpCall& call, bool* known) {
  double b = 0;
  for (const OpArg& a : call.args) b += ArgBytes(a, known);
  return b;
}

std::string Precision(const OpArg& a) { return a.dtype ? std::string(a.dtype->precision) : ""; }

// Output bytes of `elements` at `like`'s dtype; unknown dtype clears *known.
double OutBytes(double elements, const OpArg& like, bool* known) {
  if (!like.dtype) {
    *known = false;
    return 0;
  }
  return elements * like.dtype->bytes;
}

// c10::ScalarType codes as a Concrete Inputs value (out_dtype of _scaled_mm / _grouped_mm).
std::optional<Dtype> DtypeOfScalarTypeCode(std::string_view v) {
  if (v == "5") return DtypeByName("fp16");
  if (v == "6") return DtypeByName("fp32");
  if (v == "15") return DtypeByName("bf16");
  if (v == "23" || v == "25") return DtypeByName("fp8_e5m2");
  if (v == "24" || v == "26") return DtypeByName("fp8_e4m3");
  return std::nullopt;
}

struct Mnk {
  double batch = 1, m = 0, n = 0, k = 0;
};

OpWork GemmOf(const OpCall& call, const Mnk& g, double bias_elements, const OpArg& a,
              const OpArg* weight, const OpArg& out_like, std::string shapes) {
  OpWork w;
  w.kind = std::string(kind::kGemm);
  // 2 FLOPs (multiply and add) per multiply-accumulate; the bias or added matrix adds one
  // per output element.
  w.flops = 2.0 * g.batch * g.m * g.n * g.k + bias_elements;
  bool known = true;
  w.bytes = InputBytes(call, &known) + OutBytes(g.batch * g.m * g.n, out_like, &known);
  w.bytes_known = known;
  if (!known) w.bytes = 0;
  if (weight != nullptr && known) {
    w.weight_bytes = ArgBytes(*weight, &known);
    w.weight_bits = ElementBytes(*weight) * 8;
    w.weight_format = std::string(FormatOfDtype(*weight->dtype));
  }
  w.precision = Precision(a);
  w.description = internal::Describe(call, shapes, a);
  return w;
}

OpWorkResult Mm(const OpCall& call, size_t a_at, bool bias) {
  if (!TensorAt(call, a_at) || !TensorAt(call, a_at + 1)) return Invalid(call, "needs two matrices");
  const OpArg& a = call.args[a_at];
  const OpArg& b = call.args[a_at + 1];
  if (a.dims.size() != 2 || b.dims.size() != 2) return Invalid(call, "expects 2-D matrices");
  if (a.dims[1] != b.dims[0]) return Invalid(call, "inner dimensions differ");
  Mnk g{1, static_cast<double>(a.dims[0]), static_cast<double>(b.dims[1]),
        static_cast<double>(a.dims[1])};
  std::string shapes = absl::StrCat(DimsText(a), "x", DimsText(b));
  double bias_el = 0;
  if (bias) {
    if (!TensorAt(call, 0)) return Invalid(call, "addmm without its added matrix");
    bias_el = g.m * g.n;
    absl::StrAppend(&shapes, "+", DimsText(call.args[0]));
  }
  return Done(GemmOf(call, g, bias_el, a, &b, a, shapes));
}

OpWorkResult Bmm(const OpCall& call, size_t a_at, bool add) {
  if (!TensorAt(call, a_at) || !TensorAt(call, a_at + 1)) return Invalid(call, "needs two batches of matrices");
  const OpArg& a = call.args[a_at];
  const OpArg& b = call.args[a_at + 1];
  if (a.dims.size() != 3 || b.dims.size() != 3) return Invalid(call, "expects 3-D batches");
  if (a.dims[0] != b.dims[0]) return Invalid(call, "batch sizes differ");
  if (a.dims[2] != b.dims[1]) return Invalid(call, "inner dimensions differ");
  Mnk g{static_cast<double>(a.dims[0]), static_cast<double>(a.dims[1]),
        static_cast<double>(b.dims[2]), static_cast<double>(a.dims[2])};
  std::string shapes = absl::StrCat(DimsText(a), "x", DimsText(b));
  double add_el = 0;
  if (add) {
    if (!TensorAt(call, 0)) return Invalid(call, "baddbmm without its added batch");
    add_el = g.batch * g.m * g.n;
    absl::StrAppend(&shapes, "+", DimsText(call.args[0]));
  }
  return Done(GemmOf(call, g, add_el, a, nullptr, a, shapes));
}

OpWorkResult Linear(const OpCall& call) {
  if (!TensorAt(call, 0) || !TensorAt(call, 1)) return Invalid(call, "needs an input and a weight");
  const OpArg& x = call.args[0];
  const OpArg& w = call.args[1];
  if (w.dims.size() != 2) return Invalid(call, "expects a 2-D weight");
  if (x.dims.back() != w.dims[1]) return Invalid(call, "input features differ from the weight's");
  Mnk g{1, Prod(x.dims, 0, x.dims.size() - 1), static_cast<double>(w.dims[0]),
        static_cast<double>(w.dims[1])};
  std::string shapes = absl::StrCat(DimsText(x), "x", DimsText(w), "^T");
  const bool bias = TensorAt(call, 2);
  if (bias) absl::StrAppend(&shapes, "+bias");
  return Done(GemmOf(call, g, bias ? g.m * g.n : 0, x, &w, x, shapes));
}

// torch.matmul: 1-D operands are a row (first) or a column (second); batch dimensions
// broadcast.
OpWorkResult Matmul(const OpCall& call) {
  if (!TensorAt(call, 0) || !TensorAt(call, 1)) return Invalid(call, "needs two tensors");
  const OpArg& a = call.args[0];
  const OpArg& b = call.args[1];
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
  return Done(GemmOf(call, g, 0, a, weight, a, absl::StrCat(DimsText(a), "x", DimsText(b))));
}

// _scaled_mm(self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?, use_fast_accum)
OpWorkResult ScaledMm(const OpCall& call) {
  if (!TensorAt(call, 0) || !TensorAt(call, 1)) return Invalid(call, "needs two matrices");
  const OpArg& a = call.args[0];
  const OpArg& b = call.args[1];
  if (a.dims.size() != 2 || b.dims.size() != 2) return Invalid(call, "expects 2-D matrices");
  if (a.dims[1] != b.dims[0]) return Invalid(call, "inner dimensions differ");
  Mnk g{1, static_cast<double>(a.dims[0]), static_cast<double>(b.dims[1]),
        static_cast<double>(a.dims[1])};
  OpArg out = a;  // PyTorch: out_dtype defaults to self's dtype
  if (call.args.size() > 6) {
    if (auto d = DtypeOfScalarTypeCode(call.args[6].value)) out.dtype = d;
  }
  const bool bias = TensorAt(call, 4);
  std::string shapes = absl::StrCat(DimsText(a), "x", DimsText(b), bias ? "+bias" : "",
                                    " -> ", std::string(out.dtype ? out.dtype->name : "?"));
  return Done(GemmOf(call, g, bias ? g.m * g.n : 0, a, &b, out, shapes));
}

// _grouped_mm(self, mat2, offs?, bias?, out_dtype?): 2-D x 3-D (rows grouped by offs),
// 3-D x 3-D (one GEMM per group), 2-D x 2-D (K grouped by offs), 3-D x 2-D (N grouped).
OpWorkResult GroupedMm(const OpCall& call) {
  if (!TensorAt(call, 0) || !TensorAt(call, 1)) return Invalid(call, "needs two operands");
  const OpArg& a = call.args[0];
  const OpArg& b = call.args[1];
  const size_t ra = a.dims.size(), rb = b.dims.size();
  Mnk g;
  double out_elements = 0;
  if (ra == 2 && rb == 3) {
    if (a.dims[1] != b.dims[1]) return Invalid(call, "inner dimensions differ");
    g = {1, static_cast<double>(a.dims[0]), static_cast<double>(b.dims[2]), static_cast<double>(a.dims[1])};
    out_elements = g.m * g.n;
  } else if (ra == 3 && rb == 3) {
    if (a.dims[0] != b.dims[0] || a.dims[2] != b.dims[1]) return Invalid(call, "groups or inner dimensions differ");
    g = {static_cast<double>(a.dims[0]), static_cast<double>(a.dims[1]), static_cast<double>(b.dims[2]),
         static_cast<double>(a.dims[2])};
    out_elements = g.batch * g.m * g.n;
  } else if (ra == 2 && rb == 2) {
    if (a.dims[1] != b.dims[0] || !TensorAt(call, 2)) return Invalid(call, "inner dimensions differ or no offsets");
    g = {1, static_cast<double>(a.dims[0]), static_cast<double>(b.dims[1]), static_cast<double>(a.dims[1])};
    out_elements = static_cast<double>(call.args[2].dims[0]) * g.m * g.n;  // [groups, M, N]
  } else if (ra == 3 && rb == 2) {
    if (a.dims[2] != b.dims[0]) return Invalid(call, "inner dimensions differ");
    g = {1, static_cast<double>(a.dims[1]), static_cast<double>(b.dims[1]), static_cast<double>(a.dims[2])};
    out_elements = g.m * g.n;
  } else {
    return Invalid(call, "operand ranks other than 2 or 3");
  }
  OpArg out = a;
  if (call.args.size() > 4) {
    if (auto d = DtypeOfScalarTypeCode(call.args[4].value)) out.dtype = d;
  }
  OpWork w;
  w.kind = std::string(kind::kGemm);
  w.flops = 2.0 * g.batch * g.m * g.n * g.k;
  bool known = true;
  w.bytes = InputBytes(call, &known) + OutBytes(out_elements, out, &known);
  w.bytes_known = known;
  if (!known) w.bytes = 0;
  if (known) {
    w.weight_bytes = ArgBytes(b, &known);
    w.weight_bits = ElementBytes(b) * 8;
    w.weight_format = std::string(FormatOfDtype(*b.dtype));
  }
  w.precision = Precision(a);
  w.description = internal::Describe(call, absl::StrCat(DimsText(a), "x", DimsText(b)), a);
  return Done(std::move(w));
}

// "[1, 1]" or "1" -> per spatial dimension; `fallback` when absent.
std::optional<std::vector<int64_t>> IntList(const std::string& v, size_t n, int64_t fallback) {
  std::vector<int64_t> out;
  if (v.empty()) return std::vector<int64_t>(n, fallback);
  std::string_view s = v;
  while (!s.empty()) {
    while (!s.empty() && (s.front() == '[' || s.front() == ' ' || s.front() == ',' || s.front() == ']')) s.remove_prefix(1);
    if (s.empty()) break;
    int64_t x = 0;
    size_t i = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      x = x * 10 + (s[i] - '0');
      if (x > kMaxDim) return std::nullopt;  // no padding, stride or dilation is that large
    }
    if (i == 0) return std::nullopt;
    out.push_back(x);
    s.remove_prefix(i);
  }
  if (out.size() == 1 && n > 1) out.assign(n, out[0]);
  if (out.size() != n) return std::nullopt;
  return out;
}

}  // namespace

OpWorkResult GemmWork(const OpCall& call) {
  const std::string& op = call.op;
  if (op == "aten::mm") return Mm(call, 0, false);
  if (op == "aten::addmm") return Mm(call, 1, true);
  if (op == "aten::bmm") return Bmm(call, 0, false);
  if (op == "aten::baddbmm") return Bmm(call, 1, true);
  if (op == "aten::linear") return Linear(call);
  if (op == "aten::matmul") return Matmul(call);
  if (op == "aten::_scaled_mm") return ScaledMm(call);
  if (op == "aten::_grouped_mm") return GroupedMm(call);
  return OpWorkResult{};
}

// cudnn_convolution(input, weight, padding, stride, dilation, groups, ...);
// convolution / _convolution(input, weight, bias, stride, padding, dilation, transposed,
// output_padding, groups, ...).
OpWorkResult ConvWork(const OpCall& call) {
  if (!TensorAt(call, 0) || !TensorAt(call, 1)) return Invalid(call, "needs an input and a weight");
  const OpArg& x = call.args[0];
  const OpArg& w = call.args[1];
  const size_t rank = x.dims.size();
  if (rank < 3 || w.dims.size() != rank) return Invalid(call, "input and weight ranks differ");
  const size_t sp = rank - 2;
  const bool cudnn = call.op == "aten::cudnn_convolution";
  auto value = [&](size_t i) { return i < call.args.size() ? call.args[i].value : std::string(); };
  // cudnn_convolution lists padding before stride; convolution stride before padding.
  const size_t pad_at = cudnn ? 2 : 4, stride_at = 3, dil_at = cudnn ? 4 : 5;
  const size_t groups_at = cudnn ? 5 : 8;
  if (!cudnn && value(6) == "True") return Invalid(call, "transposed convolutions have no rule");
  auto pad = IntList(value(pad_at), sp, 0);
  auto stride = IntList(value(stride_at), sp, 1);
  auto dil = IntList(value(dil_at), sp, 1);
  auto groups = IntList(value(groups_at), 1, 1);
  if (!pad || !stride || !dil || !groups || (*groups)[0] <= 0) {
    return Invalid(call, "padding, stride, dilation or groups not recorded as integers");
  }
  const int64_t g = (*groups)[0];
  if (x.dims[1] != w.dims[1] * g) return Invalid(call, "input channels differ from weight channels x groups");
  double out_spatial = 1, window = 1;
  std::vector<int64_t> out_dims = {x.dims[0], w.dims[0]};
  for (size_t i = 0; i < sp; ++i) {
    const double in = static_cast<double>(x.dims[2 + i]), r = static_cast<double>(w.dims[2 + i]);
    if ((*stride)[i] <= 0) return Invalid(call, "a stride of 0");
    // P = floor((H + 2*pad - dil*(R-1) - 1) / stride) + 1 (in doubles: every term is below
    // 2^40, so their sum is exact and cannot overflow)
    const double span = in + 2.0 * static_cast<double>((*pad)[i]) -
                        static_cast<double>((*dil)[i]) * (r - 1) - 1;
    if (span < 0) return Invalid(call, "the kernel is larger than the padded input");
    const double pd = std::floor(span / static_cast<double>((*stride)[i])) + 1;
    if (pd > static_cast<double>(kMaxDim)) return Invalid(call, "an absurd output size");
    const int64_t p = static_cast<int64_t>(pd);
    out_dims.push_back(p);
    out_spatial *= static_cast<double>(p);
    window *= static_cast<double>(r);
  }
  OpWork work;
  work.kind = std::string(kind::kConv);
  // 2 * N * K * (C/groups) * R * S * P * Q
  work.flops = 2.0 * static_cast<double>(x.dims[0]) * static_cast<double>(w.dims[0]) *
               static_cast<double>(w.dims[1]) * window * out_spatial;
  bool known = true;
  OpArg out = x;
  out.dims = out_dims;
  work.bytes = InputBytes(call, &known) + ArgBytes(out, &known);
  work.bytes_known = known;
  if (!known) work.bytes = 0;
  if (known) {
    work.weight_bytes = ArgBytes(w, &known);
    work.weight_bits = ElementBytes(w) * 8;
    work.weight_format = std::string(FormatOfDtype(*w.dtype));
  }
  work.precision = Precision(x);
  work.description = internal::Describe(
      call, absl::StrCat(DimsText(x), "*", DimsText(w), " -> ", DimsText(out)), x);
  return Done(std::move(work));
}

}  // namespace qprof::work
