#include "analysis/work/work_util.h"

#include "absl/strings/str_cat.h"

namespace qprof::work::internal {

OpWorkResult Invalid(const OpCall& call, std::string_view why) {
  OpWorkResult r;
  r.outcome = Outcome::kInvalid;
  const std::string shapes = ShapesOf(call);
  r.error = absl::StrCat(call.op, " ", shapes.empty() ? "(no tensor inputs)" : shapes, ": ",
                         std::string(why));
  return r;
}

OpWorkResult Done(OpWork w) {
  OpWorkResult r;
  r.outcome = Outcome::kWork;
  r.work = std::move(w);
  return r;
}

double ElementBytes(const OpArg& a) { return a.dtype ? a.dtype->bytes : 0; }

double ArgBytes(const OpArg& a, bool* known) {
  if (!a.IsTensor() && !a.is_list) return 0;  // scalars travel as kernel arguments
  if (!a.dtype) {
    *known = false;
    return 0;
  }
  return a.Elements() * a.dtype->bytes;
}

std::string_view DtypeText(const OpArg& a) { return a.dtype ? a.dtype->name : "?"; }

std::string Describe(const OpCall& call, std::string_view shapes, const OpArg& typed) {
  return absl::StrCat(call.op, " ", std::string(shapes), " ", std::string(DtypeText(typed)));
}

const OpArg* ArgAt(const OpCall& call, int index) {
  if (index < 0 || static_cast<size_t>(index) >= call.args.size()) return nullptr;
  return &call.args[static_cast<size_t>(index)];
}

bool FlagAt(const OpCall& call, int index) { return ValueAt(call, index) == "True"; }

bool TensorAt(const OpCall& call, int index) {
  const OpArg* a = ArgAt(call, index);
  return a != nullptr && a->IsTensor();
}

std::string_view ValueAt(const OpCall& call, int index) {
  const OpArg* a = ArgAt(call, index);
  return a == nullptr ? std::string_view() : std::string_view(a->value);
}

std::optional<std::vector<int64_t>> IntList(std::string_view s, size_t n, int64_t fallback) {
  if (s.empty()) return std::vector<int64_t>(n, fallback);
  std::vector<int64_t> out;
  while (!s.empty()) {
    while (!s.empty() && (s.front() == '[' || s.front() == ' ' || s.front() == ',' || s.front() == ']')) {
      s.remove_prefix(1);
    }
    if (s.empty()) break;
    const bool negative = s.front() == '-';
    if (negative) s.remove_prefix(1);
    int64_t x = 0;
    size_t i = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      x = x * 10 + (s[i] - '0');
      if (x > kMaxDim) return std::nullopt;  // no padding, stride, dim or group is that large
    }
    if (i == 0) return std::nullopt;
    out.push_back(negative ? -x : x);
    s.remove_prefix(i);
  }
  if (out.size() == 1 && n > 1) out.assign(n, out[0]);
  if (n > 0 && out.size() != n) return std::nullopt;
  return out;
}

std::optional<std::vector<bool>> BoolList(std::string_view s) {
  std::vector<bool> out;
  while (!s.empty()) {
    while (!s.empty() && (s.front() == '[' || s.front() == ' ' || s.front() == ',' || s.front() == ']')) {
      s.remove_prefix(1);
    }
    if (s.empty()) break;
    if (s.substr(0, 4) == "True") {
      out.push_back(true);
      s.remove_prefix(4);
    } else if (s.substr(0, 5) == "False") {
      out.push_back(false);
      s.remove_prefix(5);
    } else {
      return std::nullopt;
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<Dtype> DtypeOfScalarTypeCode(std::string_view v) {
  // c10/core/ScalarType.h numbering.
  if (v == "5") return DtypeByName("fp16");
  if (v == "6") return DtypeByName("fp32");
  if (v == "15") return DtypeByName("bf16");
  if (v == "23" || v == "25") return DtypeByName("fp8_e5m2");
  if (v == "24" || v == "26") return DtypeByName("fp8_e4m3");
  return std::nullopt;
}

double Prod(const std::vector<int64_t>& d, size_t from, size_t to) {
  double n = 1;
  for (size_t i = from; i < to && i < d.size(); ++i) n *= static_cast<double>(d[i]);
  return n;
}

std::string ShapesOf(const OpCall& call) {
  std::string s;
  for (const OpArg& a : call.args) {
    if (a.IsTensor() || a.is_list) absl::StrAppend(&s, s.empty() ? "" : ",", DimsText(a));
  }
  return s;
}

std::string Precision(const OpArg& a) { return a.dtype ? std::string(a.dtype->precision) : ""; }

}  // namespace qprof::work::internal
