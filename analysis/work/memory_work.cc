// Memory-bound PyTorch ops: bytes only (op_work.h: kElementwise, kCopy, kFill, kCat,
// kReduce).
#include <algorithm>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/work/work_util.h"

namespace qprof::work::internal {
namespace {

bool IsInput(const OpRule& rule, size_t i) {
  return rule.at.inputs < 0 || i < static_cast<size_t>(rule.at.inputs);
}

// The broadcast of the input tensors' shapes (right-aligned); false when they do not broadcast.
bool Broadcast(const OpCall& call, const OpRule& rule, std::vector<int64_t>* out) {
  out->clear();
  for (size_t i = 0; i < call.args.size(); ++i) {
    const OpArg& a = call.args[i];
    if (!a.IsTensor() || !IsInput(rule, i)) continue;
    const std::vector<int64_t>& d = a.dims;
    if (d.size() > out->size()) out->insert(out->begin(), d.size() - out->size(), 1);
    for (size_t j = 0; j < d.size(); ++j) {
      int64_t& o = (*out)[out->size() - d.size() + j];
      if (d[j] == o || d[j] == 1) continue;
      if (o != 1) return false;
      o = d[j];
    }
  }
  return true;
}

const OpArg* Largest(const OpCall& call, const OpRule& rule) {
  const OpArg* best = nullptr;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const OpArg& a = call.args[i];
    if ((a.IsTensor() || a.is_list) && IsInput(rule, i) &&
        (best == nullptr || a.Elements() > best->Elements())) {
      best = &a;
    }
  }
  return best;
}

OpWork Bytes(const OpCall& call, double read, double written, bool known, const OpArg& typed) {
  OpWork w;
  w.bytes_known = known;
  w.bytes = known ? read + written : 0;
  w.description = Describe(call, ShapesOf(call), typed);
  return w;
}

}  // namespace

OpWorkResult ElementwiseWork(const OpCall& original, const OpRule& rule, const OpContext&) {
  // A 0-dim tensor (Input Dims [] with a tensor type, unlike a Scalar) is one element.
  auto ZeroDim = [](const OpArg& a) { return !a.is_list && a.dims.empty() && a.dtype.has_value(); };
  OpCall zero_dims;
  const bool has_zero_dim =
      std::any_of(original.args.begin(), original.args.end(), ZeroDim);
  if (has_zero_dim) {  // as [1]-shaped tensors (they broadcast like them)
    zero_dims = original;
    for (OpArg& a : zero_dims.args) {
      if (ZeroDim(a)) a.dims = {1};
    }
  }
  const OpCall& call = has_zero_dim ? zero_dims : original;
  const OpArg* largest = Largest(call, rule);
  if (largest == nullptr) return Invalid(call, "no tensor inputs");
  bool known = true;
  double read = 0, written = 0;
  const OpArg* out = nullptr;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const OpArg& a = call.args[i];
    if (IsInput(rule, i)) {
      read += ArgBytes(a, &known);
    } else if (a.IsTensor() && out == nullptr) {
      out = &a;  // out=: written once, never read
    }
  }
  if (out != nullptr) {
    written = ArgBytes(*out, &known);
  } else if (absl::EndsWith(call.op, "_")) {
    // In place: the first argument is the output.
    if (!call.args[0].IsTensor()) return Invalid(call, "an in-place op on a non-tensor");
    written = ArgBytes(call.args[0], &known);
  } else {
    std::vector<int64_t> shape;
    if (!Broadcast(call, rule, &shape)) return Invalid(call, "input shapes do not broadcast");
    OpArg o = *largest;
    o.is_list = false;
    o.dims = shape.empty() ? std::vector<int64_t>{1} : shape;
    written = ArgBytes(o, &known);
  }
  return Done(Bytes(call, read, written, known, *largest));
}

OpWorkResult CopyWork(const OpCall& call, const OpRule&, const OpContext&) {
  // copy_(self, src): reads src, writes self.
  if (call.args.size() < 2 || !call.args[0].IsTensor() || !call.args[1].IsTensor()) {
    return Invalid(call, "copy_ needs a destination and a source tensor");
  }
  bool known = true;
  const double read = ArgBytes(call.args[1], &known), written = ArgBytes(call.args[0], &known);
  return Done(Bytes(call, read, written, known, call.args[0]));
}

OpWorkResult FillWork(const OpCall& call, const OpRule&, const OpContext&) {
  if (call.args.empty()) return Invalid(call, "no tensor inputs");
  // A 0-dim tensor (torch.tensor(0.).fill_, scalar_tensor, ones_like of one) records Input
  // Dims [] with a tensor type: one element, unlike a Scalar argument.
  const OpArg& t = call.args[0];
  bool known = true;
  double written = 0;
  if (!t.is_list && t.dims.empty() && t.dtype) {
    written = t.dtype->bytes;
  } else if (t.IsTensor()) {
    written = ArgBytes(t, &known);
  } else {
    return Invalid(call, t.is_list || t.dims.empty() ? "no tensor inputs" : "fills a non-tensor");
  }
  return Done(Bytes(call, 0, written, known, t));
}

OpWorkResult CatWork(const OpCall& call, const OpRule&, const OpContext&) {
  if (call.args.empty() || !call.args[0].is_list) return Invalid(call, "cat without a tensor list");
  bool known = true;
  const double read = ArgBytes(call.args[0], &known);
  return Done(Bytes(call, read, read, known, call.args[0]));
}

// The input read once; the output is the input less the reduced dimensions (keepdim keeps
// them at size 1: the same element count).
OpWorkResult ReduceWork(const OpCall& call, const OpRule& rule, const OpContext& ctx) {
  // A 0-dim tensor (Input Dims [] with a tensor type) is one element.
  const bool zero_dim = !call.args.empty() && !call.args[0].is_list && call.args[0].dims.empty() &&
                        call.args[0].dtype.has_value();
  if (!TensorAt(call, 0) && !zero_dim) return Invalid(call, "no tensor input");
  if (TensorAt(call, rule.at.dim)) {  // max(self, other [, out]): elementwise of two inputs
    OpRule binary = rule;
    binary.at.inputs = 2;
    return ElementwiseWork(call, binary, ctx);
  }
  const OpArg& x = call.args[0];
  bool known = true;
  const double read = zero_dim ? ElementBytes(x) : ArgBytes(x, &known);
  const OpArg* dim = ArgAt(call, rule.at.dim);
  double out_elements = 1;  // no dim argument, or None: every dimension
  std::string note;
  if (dim != nullptr && !dim->value.empty() && !zero_dim) {
    auto dims = IntList(dim->value, 0, 0);
    if (!dims) return Invalid(call, "reduction dims not recorded as integers");
    out_elements = x.Elements();
    for (int64_t d : *dims) {
      const int64_t r = static_cast<int64_t>(x.dims.size());
      const int64_t i = d < 0 ? d + r : d;
      if (i < 0 || i >= r) return Invalid(call, "a reduction dim out of range");
      out_elements /= std::max<double>(1, static_cast<double>(x.dims[static_cast<size_t>(i)]));
    }
    if (dims->empty()) out_elements = 1;
  } else if (dim != nullptr && (!call.has_values || !dim->type.empty())) {
    // A dim the trace did not record (no Concrete Inputs, or a value it blanked): the
    // output, at most the input's size and usually far less, is not counted.
    out_elements = 0;
    note = " (output not counted: its dims were not recorded)";
  }
  OpWork w = Bytes(call, read, out_elements * ElementBytes(x), known, x);
  absl::StrAppend(&w.description, note);
  return Done(std::move(w));
}

}  // namespace qprof::work::internal
