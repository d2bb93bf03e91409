// Normalisation conventions (op_work.h: kNorm, kNormBackward): bytes only.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/work/work_util.h"

namespace qprof::work::internal {
namespace {

// Every tensor argument other than `skip` read once.
double OtherReads(const OpCall& call, const OpArg* skip, bool* known) {
  double b = 0;
  for (const OpArg& a : call.args) {
    if (&a != skip) b += ArgBytes(a, known);
  }
  return b;
}

// How many statistics groups the forward computes (channels, rows, (sample, group), ...);
// -1 when a needed parameter was not recorded.
double StatGroups(const OpCall& call, const OpRule& rule, const OpArg& x, bool training) {
  const uint16_t f = rule.flags;
  if (f & kNoStats) return 0;
  if (f & kStatsPerChannel) return training ? static_cast<double>(x.dims[1]) : 0;
  if (f & kStatsPerInstance) {
    return training ? static_cast<double>(x.dims[0]) * static_cast<double>(x.dims[1]) : 0;
  }
  if (f & kStatsPerGroup) {
    auto g = IntList(ValueAt(call, rule.at.groups), 1, -1);
    return g && (*g)[0] > 0 ? static_cast<double>(x.dims[0]) * static_cast<double>((*g)[0]) : -1;
  }
  // Per row: the elements over the normalised trailing shape.
  auto shape = IntList(ValueAt(call, rule.at.normalized), 0, 0);
  double normalized = 0;
  if (shape && !shape->empty()) {
    normalized = 1;
    for (int64_t s : *shape) normalized *= static_cast<double>(s);
  } else if (TensorAt(call, rule.at.b)) {
    normalized = ArgAt(call, rule.at.b)->Elements();
  }
  return normalized > 0 ? x.Elements() / normalized : -1;
}

}  // namespace

OpWorkResult NormWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  if (!TensorAt(call, rule.at.a)) return Invalid(call, "needs an input tensor");
  const OpArg& x = *ArgAt(call, rule.at.a);
  if ((rule.flags & (kStatsPerChannel | kStatsPerInstance | kStatsPerGroup)) && x.dims.size() < 2) {
    return Invalid(call, "expects [N, C, ...] input");
  }
  const bool training = rule.at.training >= 0 && FlagAt(call, rule.at.training);
  const double groups = StatGroups(call, rule, x, training);
  if (groups < 0) return Invalid(call, "the normalised shape or group count is not recorded");
  OpWork w;
  // Input read and output written once; weight, bias and running statistics read once.
  w.bytes = 2 * ArgBytes(x, &w.bytes_known) + OtherReads(call, &x, &w.bytes_known);
  // Statistics in the accumulation type (FP32; FP64 for FP64 inputs): mean and rstd, or rstd.
  const double stat_bytes = ElementBytes(x) == 8 ? 8 : 4;
  const double stats = groups * ((rule.flags & kOneStat) ? 1 : 2);
  w.bytes += stats * stat_bytes;
  std::string note = stats > 0 ? absl::StrFormat(", writes %.0f statistics", stats) : "";
  if (training && rule.at.running >= 0) {  // running mean and var updated in place
    for (int i : {static_cast<int>(rule.at.running), rule.at.running + 1}) {
      if (const OpArg* r = ArgAt(call, i)) w.bytes += ArgBytes(*r, &w.bytes_known);
    }
    absl::StrAppend(&note, " and its running statistics");
  }
  w.precision = Precision(x);
  w.description = Describe(call, absl::StrCat(ShapesOf(call), training ? " training" : "", note), x);
  return Done(std::move(w));
}

OpWorkResult NormBackwardWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  if (!TensorAt(call, rule.at.a) || !TensorAt(call, rule.at.grad)) {
    return Invalid(call, "needs grad_output and the input");
  }
  const OpArg& x = *ArgAt(call, rule.at.a);
  const OpArg& g = *ArgAt(call, rule.at.grad);
  if (g.dims != x.dims) return Invalid(call, "grad_output and input shapes differ");
  std::vector<bool> mask = {true, true, true};  // ops without output_mask compute all three
  if (rule.at.mask >= 0) {
    auto m = BoolList(ValueAt(call, rule.at.mask));
    if (!m) return Invalid(call, "output_mask not recorded");
    mask = *m;
  }
  OpWork w;
  // grad_output, input, weight and saved statistics read once ...
  w.bytes = OtherReads(call, nullptr, &w.bytes_known);
  // ... and each gradient asked for written once: grad input like the input, grad weight
  // and grad bias like the weight.
  std::string parts;
  if (mask[0]) {
    w.bytes += ArgBytes(x, &w.bytes_known);
    parts = "grad input";
  }
  const OpArg* weight = TensorAt(call, rule.at.b) ? ArgAt(call, rule.at.b) : nullptr;
  for (size_t i = 1; i < mask.size() && i < 3 && weight != nullptr; ++i) {
    if (!mask[i]) continue;
    w.bytes += ArgBytes(*weight, &w.bytes_known);
    absl::StrAppend(&parts, parts.empty() ? "" : ", ", i == 1 ? "grad weight" : "grad bias");
  }
  w.precision = Precision(x);
  w.description = Describe(call, absl::StrCat(ShapesOf(call), " -> ", parts.empty() ? "nothing" : parts), x);
  return Done(std::move(w));
}

}  // namespace qprof::work::internal
