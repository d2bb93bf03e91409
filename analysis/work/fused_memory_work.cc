// Memory-bound custom ops of the serving stacks and TorchInductor's Triton kernels: bytes
// only (op_work.h: kMoved, kRope, kKvStore, kTriton).
#include "absl/strings/str_cat.h"
#include "analysis/work/work_util.h"

namespace qprof::work::internal {
namespace {

const OpArg* FirstTensor(const OpCall& call) {
  for (const OpArg& a : call.args) {
    if (a.IsTensor()) return &a;
  }
  return nullptr;
}

OpWork Bytes(const OpCall& call, double bytes, bool known, const OpArg& typed, std::string_view note) {
  OpWork w;
  w.bytes_known = known;
  w.bytes = known ? bytes : 0;
  w.precision = Precision(typed);
  w.description = Describe(call, absl::StrCat(ShapesOf(call), std::string(note)), typed);
  return w;
}

}  // namespace

// Outputs among the arguments: every tensor argument moves once (read or written); one
// read and written in place moves twice.
OpWorkResult MovedWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  const OpArg* first = FirstTensor(call);
  if (first == nullptr) return Invalid(call, "no tensor arguments");
  bool known = true;
  double bytes = 0;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const double b = ArgBytes(call.args[i], &known);
    bytes += (i < 16 && (rule.at.inplace >> i) & 1) ? 2 * b : b;
  }
  if (rule.flags & kReturnsLikeA) {
    if (!TensorAt(call, rule.at.a)) return Invalid(call, "needs its input tensor");
    bytes += ArgBytes(*ArgAt(call, rule.at.a), &known);
  }
  return Done(Bytes(call, bytes, known, *first, ""));
}

// Q and K rotated in place (read and written); positions read; one cos/sin cache row per
// position read.
OpWorkResult RopeWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  const ArgMap& at = rule.at;
  if (!TensorAt(call, at.q) || !TensorAt(call, at.a) || !TensorAt(call, at.b)) {
    return Invalid(call, "needs positions, query and the cos/sin cache");
  }
  const OpArg& pos = *ArgAt(call, at.a);
  const OpArg& q = *ArgAt(call, at.q);
  const OpArg& cache = *ArgAt(call, at.b);
  bool known = true;
  double bytes = 2 * ArgBytes(q, &known) + ArgBytes(pos, &known);
  if (TensorAt(call, at.k)) bytes += 2 * ArgBytes(*ArgAt(call, at.k), &known);
  if (cache.dims.size() != 2) return Invalid(call, "expects a [positions, rot_dim] cache");
  bytes += pos.Elements() * static_cast<double>(cache.dims[1]) * ElementBytes(cache);
  if (!cache.dtype) known = false;
  return Done(Bytes(call, bytes, known, q, ""));
}

// New K and V rows read, written into the caches at the cache's dtype; slot indices read.
OpWorkResult KvStoreWork(const OpCall& call, const OpRule& rule, const OpContext&) {
  const ArgMap& at = rule.at;
  if (!TensorAt(call, at.k) || !TensorAt(call, at.kc)) {
    return Invalid(call, "needs the new keys and a cache");
  }
  bool known = true;
  double bytes = 0;
  // Every argument but the caches read once (new K, V, slot mapping, scales).
  for (size_t i = 0; i < call.args.size(); ++i) {
    if (static_cast<int>(i) == at.kc || static_cast<int>(i) == at.vc) continue;
    bytes += ArgBytes(call.args[i], &known);
  }
  const OpArg& kc = *ArgAt(call, at.kc);
  double rows = ArgAt(call, at.k)->Elements();
  if (TensorAt(call, at.v)) {
    if (TensorAt(call, at.vc)) {
      const OpArg& vc = *ArgAt(call, at.vc);
      bytes += ArgAt(call, at.v)->Elements() * ElementBytes(vc);
      if (!vc.dtype) known = false;
    } else {
      rows += ArgAt(call, at.v)->Elements();  // one cache holds both (MLA: kv_c and k_pe)
    }
  }
  bytes += rows * ElementBytes(kc);
  if (!kc.dtype) known = false;
  return Done(Bytes(call, bytes, known, *ArgAt(call, at.k), ""));
}

// A TorchInductor kernel's tensor arguments are its in_ptr / out_ptr / in_out_ptr buffers:
// each moves once (an in/out buffer is read and written but counted once).
OpWorkResult TritonWork(const OpCall& call, const OpRule&, const OpContext&) {
  const OpArg* first = FirstTensor(call);
  if (first == nullptr) return Invalid(call, "no tensor arguments");
  bool known = true;
  double bytes = 0;
  for (const OpArg& a : call.args) bytes += ArgBytes(a, &known);
  return Done(Bytes(call, bytes, known, *first, ""));
}

}  // namespace qprof::work::internal
