// Memory-bound ops: bytes only (op_work.h states the conventions).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/work/op_work.h"
#include "analysis/work/work_util.h"

namespace qprof::work {
namespace {

using internal::ArgBytes;
using internal::Done;
using internal::Invalid;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The broadcast of the tensor inputs' shapes (right-aligned); false when they do not broadcast.
bool Broadcast(const OpCall& call, std::vector<int64_t>* out) {
  out->clear();
  for (const OpArg& a : call.args) {
    if (!a.IsTensor()) continue;
    const std::vector<int64_t>& d = a.dims;
    if (d.size() > out->size()) out->insert(out->begin(), d.size() - out->size(), 1);
    for (size_t i = 0; i < d.size(); ++i) {
      int64_t& o = (*out)[out->size() - d.size() + i];
      if (d[i] == o || d[i] == 1) continue;
      if (o != 1) return false;
      o = d[i];
    }
  }
  return true;
}

std::string ShapesOf(const OpCall& call) {
  std::string s;
  for (const OpArg& a : call.args) {
    if (a.IsTensor() || a.is_list) absl::StrAppend(&s, s.empty() ? "" : ",", DimsText(a));
  }
  return s;
}

const OpArg* Largest(const OpCall& call) {
  const OpArg* best = nullptr;
  for (const OpArg& a : call.args) {
    if ((a.IsTensor() || a.is_list) && (best == nullptr || a.Elements() > best->Elements())) best = &a;
  }
  return best;
}

}  // namespace

OpWorkResult MemoryWork(const OpCall& call) {
  const OpArg* largest = Largest(call);
  const bool fill = call.op == "aten::fill_" || call.op == "aten::zero_";
  if (largest == nullptr && fill && !call.args.empty() && call.args[0].dtype) {
    largest = &call.args[0];  // a 0-dim tensor filled (below)
  }
  if (largest == nullptr) return Invalid(call, "no tensor inputs");
  bool known = true;
  double read = 0, written = 0;
  const std::string& op = call.op;
  if (op == "aten::copy_") {
    // copy_(self, src): reads src, writes self.
    if (call.args.size() < 2 || !call.args[0].IsTensor() || !call.args[1].IsTensor()) {
      return Invalid(call, "copy_ needs a destination and a source tensor");
    }
    read = ArgBytes(call.args[1], &known);
    written = ArgBytes(call.args[0], &known);
  } else if (fill) {
    // A 0-dim tensor (torch.tensor(0.).fill_, scalar_tensor, ones_like of one) records
    // Input Dims [] with a tensor type: one element, unlike a Scalar argument.
    const OpArg& t = call.args[0];
    if (!t.is_list && t.dims.empty() && t.dtype) {
      written = t.dtype->bytes;
    } else {
      if (!t.IsTensor()) return Invalid(call, "fills a non-tensor");
      written = ArgBytes(t, &known);
    }
  } else if (op == "aten::cat") {
    if (call.args.empty() || !call.args[0].is_list) return Invalid(call, "cat without a tensor list");
    read = ArgBytes(call.args[0], &known);
    written = read;
  } else {
    for (const OpArg& a : call.args) read += ArgBytes(a, &known);
    if (EndsWith(op, "_")) {
      // In place: the first argument is the output.
      if (!call.args[0].IsTensor()) return Invalid(call, "an in-place op on a non-tensor");
      written = ArgBytes(call.args[0], &known);
    } else {
      std::vector<int64_t> out;
      if (!Broadcast(call, &out)) return Invalid(call, "input shapes do not broadcast");
      OpArg o = *largest;
      o.is_list = false;
      o.dims = out;
      if (o.dims.empty()) o.dims = {1};
      written = ArgBytes(o, &known);
    }
  }
  OpWork w;
  w.kind = std::string(kind::kMemory);
  w.bytes_known = known;
  w.bytes = known ? read + written : 0;
  w.description = internal::Describe(call, ShapesOf(call), *largest);
  return Done(std::move(w));
}

}  // namespace qprof::work
