#include "tests/analysis/work/raw_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>

#include "simdjson.h"
#include "tests/analysis/importers/raw_kineto.h"

namespace qprof::testing_work {
namespace {

namespace dom = simdjson::dom;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

double ElemBytes(const std::string& t) {
  if (t == "c10::BFloat16" || t == "c10::Half" || t == "short int") return 2;
  if (t == "float" || t == "int") return 4;
  if (t == "double" || t == "long int" || t == "long") return 8;  // both spellings occur
  if (t == "bool" || t == "unsigned char" || t == "signed char" || t == "c10::Float8_e4m3fn") return 1;
  return 0;  // not a tensor type (Scalar, TensorList, ...): no bytes, or unknown
}

double Numel(const std::vector<int64_t>& d) {
  double n = 1;
  for (int64_t x : d) n *= static_cast<double>(x);
  return n;
}

// Bytes of a tensor argument; 0-dim and non-tensor arguments count none.
double Bytes(const RawArg& a, bool* known) {
  if (a.list) {
    *known = false;  // a TensorList records no dtype
    return 0;
  }
  if (a.dims.empty()) return 0;
  const double e = ElemBytes(a.type);
  if (e == 0) *known = false;
  return Numel(a.dims) * e;
}

const std::set<std::string>& ElementwiseOps() {
  static const auto* s = new std::set<std::string>{
      "aten::add", "aten::add_", "aten::sub", "aten::sub_", "aten::mul", "aten::mul_",
      "aten::div", "aten::div_", "aten::neg", "aten::pow", "aten::rsqrt", "aten::sqrt",
      "aten::exp", "aten::cos", "aten::sin", "aten::silu", "aten::silu_", "aten::gelu",
      "aten::relu", "aten::relu_", "aten::sigmoid", "aten::tanh", "aten::clamp",
      "aten::clamp_", "aten::clamp_min", "aten::clamp_min_", "aten::where",
      "aten::masked_fill", "aten::masked_fill_", "aten::softmax", "aten::_softmax",
      "aten::_log_softmax", "aten::native_dropout", "aten::eq", "aten::ne", "aten::lt",
      "aten::gt", "aten::minimum", "aten::maximum", "aten::abs", "aten::reciprocal",
      "aten::erf", "aten::log", "aten::square", "aten::addcmul_", "aten::rsub", "aten::le",
      "aten::ge", "aten::pow_", "aten::clamp_max", "aten::clamp_max_", "aten::addcdiv_",
      "aten::lerp_", "aten::gelu_", "aten::cumsum", "aten::threshold_backward",
      "aten::gelu_backward", "aten::silu_backward", "aten::sigmoid_backward",
      "aten::tanh_backward", "aten::log_softmax", "aten::_softmax_backward_data",
      "aten::_log_softmax_backward_data"};
  return *s;
}

// Elementwise ops of one tensor input (the rest binary, or ternary: where, masked_fill, clamp).
const std::set<std::string>& UnaryOps() {
  static const auto* s = new std::set<std::string>{
      "aten::neg", "aten::abs", "aten::reciprocal", "aten::rsqrt", "aten::sqrt", "aten::square",
      "aten::exp", "aten::log", "aten::erf", "aten::cos", "aten::sin", "aten::tanh",
      "aten::sigmoid", "aten::relu", "aten::silu", "aten::gelu", "aten::native_dropout",
      "aten::cumsum", "aten::softmax", "aten::_softmax", "aten::log_softmax",
      "aten::_log_softmax"};
  return *s;
}

// Ops whose dims argument (index 1) reduces the input.
const std::set<std::string>& ReduceOps() {
  static const auto* s = new std::set<std::string>{
      "aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max", "aten::min",
      "aten::argmax", "aten::argmin", "aten::var", "aten::std", "aten::logsumexp", "aten::prod"};
  return *s;
}

// "[1, -1]" as integers.
std::vector<int64_t> Ints(const std::string& v) {
  std::vector<int64_t> out;
  std::string cur;
  for (char c : v + ",") {
    if (c == '-' || (c >= '0' && c <= '9')) {
      cur += c;
    } else if (!cur.empty()) {
      out.push_back(std::stoll(cur));
      cur.clear();
    }
  }
  return out;
}

}  // namespace

RawOps ReadRawOps(const std::string& path) {
  RawOps out;
  std::string text;
  if (path.size() > 3 && path.substr(path.size() - 3) == ".gz") {
    text = testing_raw::Gunzip(path);
  } else {
    std::ifstream f(path, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  dom::parser parser;
  dom::element doc = parser.parse(text);
  std::map<uint64_t, std::tuple<int64_t, int64_t, double, bool>> launches;  // corr -> thread, ts, graph
  struct K {
    std::string name;
    double dur;
    std::optional<uint64_t> corr;
  };
  std::vector<K> ks;
  for (dom::element e : doc["traceEvents"].get_array()) {
    std::string_view ph, cat;
    if (e["ph"].get(ph) || ph != "X" || e["cat"].get(cat)) continue;
    const std::string c = Lower(std::string(cat));
    std::string_view name;
    if (e["name"].get(name)) continue;
    dom::object args;
    const bool has_args = !e["args"].get(args);
    if (c == "cpu_op") {
      RawOp op;
      op.name = std::string(name);
      op.pid = testing_raw::AsInt(e["pid"].value());
      op.tid = testing_raw::AsInt(e["tid"].value());
      op.ts = testing_raw::AsDouble(e["ts"].value());
      op.dur = testing_raw::AsDouble(e["dur"].value());
      dom::array dims, types, values;
      if (has_args && !args["Input Dims"].get(dims)) {
        op.has_shapes = true;
        for (dom::element d : dims) {
          RawArg a;
          dom::array ad = d.get_array();
          if (ad.size() > 0 && ad.at(0).is_array()) {
            a.list = true;
            for (dom::element t : ad) {
              std::vector<int64_t> td;
              for (dom::element x : t.get_array()) td.push_back(x.get_int64());
              a.list_dims.push_back(std::move(td));
            }
          } else {
            for (dom::element x : ad) a.dims.push_back(x.get_int64());
          }
          op.args.push_back(a);
        }
        if (!args["Input type"].get(types)) {
          size_t i = 0;
          for (dom::element t : types) {
            if (i < op.args.size()) op.args[i].type = std::string(std::string_view(t.get_string()));
            ++i;
          }
        }
        if (!args["Concrete Inputs"].get(values)) {
          op.has_values = values.size() > 0;
          size_t i = 0;
          for (dom::element v : values) {
            if (i < op.args.size()) op.args[i].value = std::string(std::string_view(v.get_string()));
            ++i;
          }
        }
      }
      out.ops.push_back(std::move(op));
    } else if (c == "cuda_runtime" || c == "cuda_driver" || c == "runtime") {
      int64_t corr = -1;
      if (has_args) {
        dom::element ce;
        if (!args["correlation"].get(ce)) corr = testing_raw::AsInt(ce);
      }
      if (corr >= 0) {
        launches[static_cast<uint64_t>(corr)] = {testing_raw::AsInt(e["pid"].value()),
                                                 testing_raw::AsInt(e["tid"].value()),
                                                 testing_raw::AsDouble(e["ts"].value()),
                                                 name.find("GraphLaunch") != std::string_view::npos};
      }
    } else if (c == "kernel") {
      K k{std::string(name), testing_raw::AsDouble(e["dur"].value()), std::nullopt};
      dom::element ce;
      if (has_args && !args["correlation"].get(ce)) k.corr = static_cast<uint64_t>(testing_raw::AsInt(ce));
      ks.push_back(std::move(k));
    }
  }
  // Ops per thread by start; the innermost enclosing op of a launch at t is the one that
  // starts last (the shorter at equal starts) among those with ts <= t < ts + dur.
  std::map<std::pair<int64_t, int64_t>, std::vector<const RawOp*>> by_thread;
  for (const RawOp& op : out.ops) by_thread[{op.pid, op.tid}].push_back(&op);
  for (auto& [key, v] : by_thread) {
    std::sort(v.begin(), v.end(), [](const RawOp* a, const RawOp* b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
  }
  for (const K& k : ks) {
    RawKernel rk;
    rk.name = k.name;
    rk.dur_us = k.dur;
    if (k.corr) {
      auto it = launches.find(*k.corr);
      if (it != launches.end()) {
        const auto& [pid, tid, ts, graph] = it->second;
        rk.graph = graph;
        const auto& v = by_thread[{pid, tid}];
        auto pos = std::upper_bound(v.begin(), v.end(), ts,
                                    [](double t, const RawOp* o) { return t < o->ts; });
        while (pos != v.begin()) {
          --pos;
          if ((*pos)->ts + (*pos)->dur > ts) {
            rk.op = *pos;
            break;
          }
        }
      }
    }
    out.kernels.push_back(std::move(rk));
  }
  return out;
}

OracleWork OpWorkOracle(const RawOp& op, const std::string& kernel) {
  OracleWork w;
  if (!op.has_shapes || op.args.empty()) return w;
  const auto& a = op.args;
  auto bytes_of_all = [&](bool* known) {
    double b = 0;
    for (const RawArg& x : a) b += Bytes(x, known);
    return b;
  };
  bool known = true;
  if (op.name == "aten::mm" || op.name == "aten::addmm") {
    // mm(self, mat2) / addmm(self, mat1, mat2, beta, alpha); an out= tensor follows them
    // and is the output, written once and not read.
    const size_t i = op.name == "aten::mm" ? 0 : 1, inputs = op.name == "aten::mm" ? 2 : 5;
    const double m = a[i].dims[0], k = a[i].dims[1], n = a[i + 1].dims[1];
    w.flops = 2 * m * n * k + (i == 1 ? m * n : 0);
    double out = m * n * ElemBytes(a[i].type);
    for (size_t j = 0; j < a.size(); ++j) {
      if (j >= inputs && !a[j].dims.empty()) {
        out = Bytes(a[j], &known);
      } else {
        w.bytes += Bytes(a[j], &known);
      }
    }
    w.bytes += out;
  } else if (op.name == "aten::bmm") {
    const double b = a[0].dims[0], m = a[0].dims[1], k = a[0].dims[2], n = a[1].dims[2];
    w.flops = 2 * b * m * n * k;
    w.bytes = bytes_of_all(&known) + b * m * n * ElemBytes(a[0].type);
  } else if (op.name == "aten::_flash_attention_forward") {
    // q, k, v [B, S, H, d]; is_causal is argument 8; FLOPs halved when causal.
    const double b = a[0].dims[0], sq = a[0].dims[1], h = a[0].dims[2], d = a[0].dims[3];
    const double skv = a[1].dims[1], dv = a[2].dims[3];
    const bool causal = a.size() > 8 && a[8].value == "True";
    w.flops = 2 * b * h * sq * skv * (d + dv) * (causal ? 0.5 : 1);
    w.bytes = (Numel(a[0].dims) + Numel(a[1].dims) + Numel(a[2].dims) + b * sq * h * dv) *
              ElemBytes(a[0].type);
  } else if (op.name == "aten::copy_") {
    w.bytes = Bytes(a[0], &known) + Bytes(a[1], &known);
  } else if (op.name == "aten::fill_" || op.name == "aten::zero_") {
    // A 0-dim tensor (Input Dims [], a tensor type) is one element.
    w.bytes = a[0].dims.empty() && !a[0].list ? ElemBytes(a[0].type) : Bytes(a[0], &known);
    if (w.bytes == 0) known = false;
  } else if (op.name == "aten::cat") {
    // Recorded without its tensors' sizes ("Input Dims" [[], []]): no work to derive.
    bool sized = !a.empty() && a[0].list;
    if (sized) {
      sized = false;
      for (const auto& t : a[0].list_dims) sized |= !t.empty();
    }
    if (!sized) return w;
    // A TensorList records no dtype; ATen's copy kernel names its element size.
    const size_t at = kernel.find("OpaqueType<");
    const double size = at == std::string::npos ? 0 : std::atof(kernel.c_str() + at + 11);
    if (size <= 0 || a.empty() || !a[0].list) {
      known = false;
    } else {
      double elements = 0;
      for (const auto& t : a[0].list_dims) elements += Numel(t);
      w.bytes = 2 * elements * size;  // read once, written once
    }
  } else if (ReduceOps().count(op.name) && (a.size() < 2 || a[1].dims.empty())) {
    // Read the input; write it less the reduced dims (every dim without a dim argument or
    // with None; not counted when the dims were not recorded).
    const double in = Numel(a[0].dims);
    double out_el = 1;
    if (a.size() > 1) {
      if (!a[1].value.empty()) {
        out_el = in;
        for (int64_t d : Ints(a[1].value)) {
          out_el /= static_cast<double>(a[0].dims[static_cast<size_t>(d < 0 ? d + static_cast<int64_t>(a[0].dims.size()) : d)]);
        }
      } else if (!op.has_values || !a[1].type.empty()) {
        out_el = 0;
      }
    }
    w.bytes = (in + out_el) * ElemBytes(a[0].type);
    if (ElemBytes(a[0].type) == 0) known = false;
  } else if (op.name == "aten::native_layer_norm") {
    // (x, normalized_shape, weight, bias, eps): x read, y written, weight and bias read,
    // FP32 mean and rstd per row written.
    const double x = Numel(a[0].dims);
    const double norm = !a[1].value.empty() ? [&] { double p = 1; for (int64_t d : Ints(a[1].value)) p *= static_cast<double>(d); return p; }()
                                             : Numel(a[2].dims);
    w.bytes = 2 * x * ElemBytes(a[0].type) + Bytes(a[2], &known) + Bytes(a[3], &known) +
              2 * (x / norm) * 4;
  } else if (op.name == "aten::native_layer_norm_backward") {
    // (grad, x, normalized_shape, mean, rstd, weight, bias, output_mask): every tensor read,
    // the masked gradients written; without a recorded mask, no work.
    if (a.size() < 8 || a[7].value.empty()) return w;
    for (const RawArg& x : a) w.bytes += Bytes(x, &known);
    const std::string& m = a[7].value;
    std::vector<bool> mask;
    for (size_t p = 0; (p = m.find_first_of("TF", p)) != std::string::npos; ++p) mask.push_back(m[p] == 'T');
    if (mask.size() == 3) {
      if (mask[0]) w.bytes += Bytes(a[1], &known);
      if (mask[1]) w.bytes += Bytes(a[5], &known);
      if (mask[2]) w.bytes += Bytes(a[5], &known);
    }
  } else if (ElementwiseOps().count(op.name)) {
    // Out of place: the inputs and the broadcast output at the largest input's dtype, or an
    // out= tensor (a tensor past the schema's inputs) written once instead; in place
    // (trailing '_'): the inputs and the first argument again.
    static const std::set<std::string> kTernary = {"aten::where", "aten::masked_fill", "aten::clamp"};
    const bool in_place = op.name.back() == '_';
    const size_t inputs = in_place ? a.size()
                          : kTernary.count(op.name) ? 3
                          : UnaryOps().count(op.name) ? 1 : 2;
    const RawArg* largest = nullptr;
    const RawArg* out_arg = nullptr;
    std::vector<int64_t> out;
    // A 0-dim tensor (no sizes, a tensor type) is one element.
    std::vector<RawArg> args = a;
    for (RawArg& x : args) {
      if (!x.list && x.dims.empty() && ElemBytes(x.type) > 0) x.dims = {1};
    }
    for (size_t j = 0; j < args.size(); ++j) {
      const RawArg& x = args[j];
      if (j >= inputs) {
        if (!x.dims.empty() && out_arg == nullptr) out_arg = &x;
        continue;
      }
      w.bytes += Bytes(x, &known);
      if (x.dims.empty()) continue;
      if (!largest || Numel(x.dims) > Numel(largest->dims)) largest = &x;
      if (x.dims.size() > out.size()) out.insert(out.begin(), x.dims.size() - out.size(), 1);
      for (size_t i = 0; i < x.dims.size(); ++i) {
        int64_t& o = out[out.size() - x.dims.size() + i];
        if (o == 1) o = x.dims[i];
      }
    }
    if (largest == nullptr) return w;
    if (out_arg != nullptr) {
      w.bytes += Bytes(*out_arg, &known);
    } else if (in_place) {
      w.bytes += Bytes(args[0], &known);
    } else {
      w.bytes += Numel(out) * ElemBytes(largest->type);
      if (ElemBytes(largest->type) == 0) known = false;
    }
  } else {
    return w;
  }
  w.has = true;
  w.bytes_known = known;
  if (!known) w.bytes = 0;
  return w;
}

}  // namespace qprof::testing_work
