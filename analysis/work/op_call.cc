#include "analysis/work/op_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "simdjson.h"

namespace qprof::work {
namespace {

namespace dom = simdjson::dom;

absl::Status Bad(std::string_view what) {
  return absl::InvalidArgumentError(std::string(what));
}

// One tensor's sizes: an array of integers.
absl::Status ReadSizes(dom::array arr, std::vector<int64_t>* out) {
  if (arr.size() > kMaxRank) return Bad(absl::StrCat("a tensor of rank ", arr.size()));
  double elements = 1;
  for (dom::element v : arr) {
    int64_t d = 0;
    if (v.is_int64()) {
      d = v.get_int64().value_unsafe();
    } else if (v.is_uint64()) {
      return Bad("a dimension beyond 64 bits");
    } else {
      return Bad("a dimension that is not an integer");
    }
    if (d < 0) return Bad(absl::StrCat("a negative dimension (", d, ")"));
    if (d > kMaxDim) return Bad(absl::StrCat("an absurd dimension (", d, ")"));
    elements *= static_cast<double>(d);
    out->push_back(d);
  }
  if (elements > kMaxElements) return Bad("a tensor of absurd size");
  return absl::OkStatus();
}

absl::StatusOr<dom::array> ParseArray(dom::parser& parser, std::string_view json,
                                      std::string_view what) {
  dom::element root;
  if (parser.parse(json.data(), json.size()).get(root) != simdjson::SUCCESS) {
    return Bad(absl::StrCat(std::string(what), " is not valid JSON"));
  }
  dom::array arr;
  if (root.get_array().get(arr) != simdjson::SUCCESS) {
    return Bad(absl::StrCat(std::string(what), " is not an array"));
  }
  return arr;
}

absl::Status ParseDimsInto(dom::parser& parser, std::string_view json, std::vector<OpArg>* out) {
  auto arr = ParseArray(parser, json, "the sizes");
  if (!arr.ok()) return arr.status();
  if (arr->size() > kMaxArgs) return Bad("too many arguments");
  for (dom::element e : *arr) {
    dom::array a;
    if (e.get_array().get(a) != simdjson::SUCCESS) return Bad("an argument's sizes are not a list");
    OpArg arg;
    // A list whose first element is a list: a TensorList (one sizes list per tensor).
    bool nested = a.size() > 0 && a.at(0).is_array();
    if (nested) {
      arg.is_list = true;
      for (dom::element t : a) {
        dom::array ta;
        if (t.get_array().get(ta) != simdjson::SUCCESS) return Bad("a tensor list mixes sizes and numbers");
        std::vector<int64_t> dims;
        if (absl::Status s = ReadSizes(ta, &dims); !s.ok()) return s;
        arg.list.push_back(std::move(dims));
      }
    } else if (absl::Status s = ReadSizes(a, &arg.dims); !s.ok()) {
      return s;
    }
    out->push_back(std::move(arg));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> ParseStrings(dom::parser& parser, std::string_view json,
                                                      std::string_view what) {
  auto arr = ParseArray(parser, json, what);
  if (!arr.ok()) return arr.status();
  std::vector<std::string> out;
  for (dom::element e : *arr) {
    std::string_view s;
    if (e.get_string().get(s) != simdjson::SUCCESS) {
      return Bad(absl::StrCat(std::string(what), " has an entry that is not a string"));
    }
    out.emplace_back(s);
  }
  return out;
}

dom::parser& Parser() {
  thread_local dom::parser parser;
  return parser;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// The op name of an emit_nvtx range: the text before its first ", key = " decoration.
std::string_view NvtxOpName(std::string_view name) {
  for (std::string_view mark : {", seq = ", ", op_id = ", ", sizes = "}) {
    size_t pos = name.find(mark);
    if (pos != std::string_view::npos) name = name.substr(0, pos);
  }
  return Trim(name);
}

}  // namespace

double OpArg::Elements() const {
  auto product = [](const std::vector<int64_t>& d) {
    double n = 1;
    for (int64_t x : d) n *= static_cast<double>(x);
    return n;
  };
  if (!is_list) return product(dims);
  double n = 0;
  for (const auto& d : list) n += product(d);
  return n;
}

absl::StatusOr<std::vector<OpArg>> ParseDims(std::string_view json) {
  std::vector<OpArg> out;
  if (absl::Status s = ParseDimsInto(Parser(), json, &out); !s.ok()) return s;
  return out;
}

absl::StatusOr<OpCall> ParseKinetoOpCall(std::string_view name, std::string_view input_dims,
                                         std::string_view input_types,
                                         std::string_view concrete_inputs) {
  OpCall call;
  call.op = std::string(name);
  dom::parser& parser = Parser();
  if (!input_dims.empty()) {
    if (absl::Status s = ParseDimsInto(parser, input_dims, &call.args); !s.ok()) return s;
  }
  if (!input_types.empty()) {
    auto types = ParseStrings(parser, input_types, "\"Input type\"");
    if (!types.ok()) return types.status();
    if (!types->empty() && types->size() != call.args.size()) {
      return Bad(absl::StrCat("\"Input type\" has ", types->size(), " entries for ",
                              call.args.size(), " inputs"));
    }
    call.has_types = !types->empty();
    for (size_t i = 0; i < types->size(); ++i) {
      call.args[i].type = std::move((*types)[i]);
      call.args[i].dtype = DtypeOfTorchType(call.args[i].type);
    }
  }
  if (!concrete_inputs.empty()) {
    auto values = ParseStrings(parser, concrete_inputs, "\"Concrete Inputs\"");
    if (!values.ok()) return values.status();
    if (!values->empty() && values->size() != call.args.size()) {
      return Bad(absl::StrCat("\"Concrete Inputs\" has ", values->size(), " entries for ",
                              call.args.size(), " inputs"));
    }
    call.has_values = !values->empty();
    for (size_t i = 0; i < values->size(); ++i) call.args[i].value = std::move((*values)[i]);
  }
  return call;
}

std::optional<absl::StatusOr<OpCall>> ParseNvtxOpCall(std::string_view range_name) {
  static constexpr std::string_view kSizes = ", sizes = ";
  const size_t at = range_name.find(kSizes);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = range_name.substr(at + kSizes.size());
  // The sizes list ends where its brackets balance; ", input_op_ids = [...]" may follow.
  int depth = 0;
  size_t end = std::string_view::npos;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '[') ++depth;
    if (rest[i] == ']' && --depth == 0) {
      end = i + 1;
      break;
    }
    if (depth <= 0) break;
  }
  if (end == std::string_view::npos) {
    return absl::StatusOr<OpCall>(Bad("the sizes list of an emit_nvtx range does not close"));
  }
  OpCall call;
  call.op = std::string(NvtxOpName(range_name));
  if (absl::Status s = ParseDimsInto(Parser(), rest.substr(0, end), &call.args); !s.ok()) {
    return absl::StatusOr<OpCall>(s);
  }
  return absl::StatusOr<OpCall>(std::move(call));
}

void FillMissingDtypes(const std::optional<Dtype>& dtype, OpCall* call) {
  if (!dtype) return;
  for (OpArg& a : call->args) {
    if (a.dtype) continue;
    if ((a.IsTensor() && a.type.empty()) || (a.is_list && (a.type.empty() || a.type == "TensorList"))) {
      a.dtype = dtype;
    }
  }
}

std::string DimsText(const OpArg& a) {
  auto one = [](const std::vector<int64_t>& d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) absl::StrAppend(&s, i ? "," : "", d[i]);
    return s + "]";
  };
  if (!a.is_list) return one(a.dims);
  if (a.list.empty()) return "[]";
  bool same = true;
  for (const auto& d : a.list) same &= d == a.list.front();
  if (same) return absl::StrCat("[", a.list.size(), "x", one(a.list.front()), "]");
  std::string s = "[";
  for (size_t i = 0; i < a.list.size(); ++i) absl::StrAppend(&s, i ? "," : "", one(a.list[i]));
  return s + "]";
}

}  // namespace qprof::work
