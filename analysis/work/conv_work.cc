// Convolution conventions (op_work.h: kConv, kConvBackward).
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/work/work_util.h"

namespace qprof::work::internal {
namespace {

// The forward problem of a convolution call: input x [N, C, spatial...], weight
// w [K, C/groups, window...], output [N, K, P...].
struct ConvShape {
  const OpArg* x = nullptr;
  const OpArg* w = nullptr;
  OpArg out;               // x's dtype, the output's sizes
  double flops = 0;        // the forward's multiply-accumulates, x2
  double out_elements = 0;
};

// Fills `s` from the call; an error text when the shapes or parameters do not add up.
std::string Problem(const OpCall& call, const OpRule& rule, ConvShape* s) {
  if (!TensorAt(call, rule.at.a) || !TensorAt(call, rule.at.b)) return "needs an input and a weight";
  s->x = ArgAt(call, rule.at.a);
  s->w = ArgAt(call, rule.at.b);
  const OpArg& x = *s->x;
  const OpArg& w = *s->w;
  const size_t rank = x.dims.size();
  if (rank < 3 || w.dims.size() != rank) return "input and weight ranks differ";
  if (FlagAt(call, rule.at.transposed)) return "transposed convolutions have no rule";
  const size_t sp = rank - 2;
  auto pad = IntList(ValueAt(call, rule.at.padding), sp, 0);
  auto stride = IntList(ValueAt(call, rule.at.stride), sp, 1);
  auto dil = IntList(ValueAt(call, rule.at.dilation), sp, 1);
  auto groups = IntList(ValueAt(call, rule.at.groups), 1, 1);
  if (!pad || !stride || !dil || !groups || (*groups)[0] <= 0) {
    return "padding, stride, dilation or groups not recorded as integers";
  }
  // In doubles: weight channels and groups are each below 2^40, their product is not.
  if (static_cast<double>(x.dims[1]) !=
      static_cast<double>(w.dims[1]) * static_cast<double>((*groups)[0])) {
    return "input channels differ from weight channels x groups";
  }
  double out_spatial = 1, window = 1;
  std::vector<int64_t> out_dims = {x.dims[0], w.dims[0]};
  for (size_t i = 0; i < sp; ++i) {
    const double in = static_cast<double>(x.dims[2 + i]), r = static_cast<double>(w.dims[2 + i]);
    if ((*stride)[i] <= 0 || (*pad)[i] < 0 || (*dil)[i] <= 0) {
      return "a stride or dilation of 0, or negative padding";
    }
    // P = floor((H + 2*pad - dil*(R-1) - 1) / stride) + 1 (in doubles: every term is below
    // 2^40, so their sum is exact and cannot overflow)
    const double span = in + 2.0 * static_cast<double>((*pad)[i]) -
                        static_cast<double>((*dil)[i]) * (r - 1) - 1;
    if (span < 0) return "the kernel is larger than the padded input";
    const double p = std::floor(span / static_cast<double>((*stride)[i])) + 1;
    if (p > static_cast<double>(kMaxDim)) return "an absurd output size";
    out_dims.push_back(static_cast<int64_t>(p));
    out_spatial *= p;
    window *= r;
  }
  s->out = x;
  s->out.dims = out_dims;
  s->out_elements = s->out.Elements();
  // 2 * N * K * (C/groups) * R * S * P * Q
  s->flops = 2.0 * static_cast<double>(x.dims[0]) * static_cast<double>(w.dims[0]) *
             static_cast<double>(w.dims[1]) * window * out_spatial;
  return "";
}

void SetWeight(const OpArg& w, bool known, OpWork* work) {
  if (!known || !w.dtype) return;
  bool ok = true;
  work->weight_bytes = ArgBytes(w, &ok);
  work->weight_bits = ElementBytes(w) * 8;
  work->weight_format = std::string(FormatOfDtype(*w.dtype));
}

}  // namespace

OpWorkResult ConvWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  ConvShape s;
  if (std::string e = Problem(call, rule, &s); !e.empty()) return Invalid(call, e);
  const bool bias = TensorAt(call, rule.at.bias);
  OpWork work;
  // A bias adds one per output element (as the GEMM rule and TraceLens's CONV.flops_func).
  work.flops = s.flops + (bias ? s.out_elements : 0);
  bool known = true;
  double read = ArgBytes(*s.x, &known) + ArgBytes(*s.w, &known);
  if (bias) read += ArgBytes(*ArgAt(call, rule.at.bias), &known);
  work.bytes_known = known;
  work.bytes = known ? read + ArgBytes(s.out, &known) : 0;
  SetWeight(*s.w, known, &work);
  work.precision = Precision(*s.x);
  work.description = Describe(
      call, absl::StrCat(DimsText(*s.x), "*", DimsText(*s.w), bias ? "+bias" : "", " -> ",
                         DimsText(s.out)),
      *s.x);
  return Done(std::move(work));
}

// convolution_backward: grad input and grad weight are each a convolution of the forward's
// size (torch/utils/flop_counter.py conv_backward_flop), so each costs the forward's FLOPs;
// grad bias sums grad_output over everything but the channel.
OpWorkResult ConvBackwardWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  ConvShape s;
  if (std::string e = Problem(call, rule, &s); !e.empty()) return Invalid(call, e);
  if (!TensorAt(call, rule.at.grad)) return Invalid(call, "needs grad_output");
  const OpArg& gout = *ArgAt(call, rule.at.grad);
  if (gout.dims != s.out.dims) return Invalid(call, "grad_output differs from the forward's output");
  std::vector<bool> mask = {true, true, false};
  if (rule.at.mask >= 0) {
    auto m = BoolList(ValueAt(call, rule.at.mask));
    if (!m || m->size() != 3) return Invalid(call, "output_mask not recorded as three bools");
    mask = *m;
  }
  // bias_sizes ([K], or [0] when the forward had none): grad bias only with a bias.
  auto bias_sizes = IntList(ValueAt(call, rule.at.bias), 0, 0);
  const bool bias = mask[2] && bias_sizes && !bias_sizes->empty() && (*bias_sizes)[0] > 0;
  bool known = true;
  const double g = ArgBytes(gout, &known), x = ArgBytes(*s.x, &known), w = ArgBytes(*s.w, &known);
  OpWork work;
  std::string parts;
  if (mask[0]) {  // grad input: reads grad_output and the weight, writes grad input
    work.flops += s.flops;
    work.bytes += g + w + x;
    parts += "dgrad";
  }
  if (mask[1]) {  // grad weight: reads grad_output and the input, writes grad weight
    work.flops += s.flops;
    work.bytes += g + x + w;
    absl::StrAppend(&parts, parts.empty() ? "" : "+", "wgrad");
  }
  if (bias) {     // grad bias: reads grad_output, writes [K]
    work.flops += s.out_elements;
    work.bytes += g + static_cast<double>(s.w->dims[0]) * ElementBytes(gout);
    absl::StrAppend(&parts, parts.empty() ? "" : "+", "bgrad");
  }
  if (parts.empty()) return Invalid(call, "output_mask asks for no gradient");
  work.bytes_known = known;
  if (!known) work.bytes = 0;
  SetWeight(*s.w, known, &work);
  work.precision = Precision(*s.x);
  work.description = Describe(
      call, absl::StrCat(parts, " of ", DimsText(*s.x), "*", DimsText(*s.w), " -> ", DimsText(s.out)),
      *s.x);
  return Done(std::move(work));
}

}  // namespace qprof::work::internal
