#include "analysis/work/launch_work.h"

#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/work/moe_work.h"

namespace qprof::work {
namespace {

constexpr std::string_view kCpuOp = "cpu_op";

const proto::LaunchFrame* FrameAt(const proto::LaunchContextStats& t, uint32_t i) {
  return i < static_cast<uint32_t>(t.frames_size()) ? &t.frames(static_cast<int>(i)) : nullptr;
}

const proto::LaunchKernelSet* SetAt(const proto::LaunchContextStats& t, uint32_t i) {
  if (i == 0 || i >= static_cast<uint32_t>(t.kernel_sets_size())) return nullptr;
  return &t.kernel_sets(static_cast<int>(i));
}

bool IsComputeKind(std::string_view k) { return k != kind::kMemory; }

// Worker launches of a call, from its kernel list: non-helper kernels (every kernel for a
// memory op); for an MoE call only those whose innermost op is the call itself or has no
// rule of its own.
uint32_t Workers(const proto::LaunchKernelSet& set, std::string_view k, std::string_view moe_op) {
  uint32_t n = 0;
  for (int i = 0; i < set.kernels_size(); ++i) {
    const uint32_t launches = i < set.launches_size() ? set.launches(i) : 0;
    if (IsComputeKind(k) && IsHelperKernel(set.kernels(i))) continue;
    if (!moe_op.empty() && i < set.inner_ops_size()) {
      const std::string& inner = set.inner_ops(i);
      if (inner != moe_op && !OpKind(inner).empty()) continue;
    }
    n += launches;
  }
  return n;
}

LaunchWorkResult InvalidResult(std::string error) {
  LaunchWorkResult r;
  r.outcome = LaunchOutcome::kInvalid;
  r.error = std::move(error);
  return r;
}

// Scales the call's work to this launch's share.
void Share(LaunchWork* lw, const proto::LaunchKernelSet* set, std::string_view moe_op) {
  lw->workers = set != nullptr ? Workers(*set, lw->work.kind, moe_op) : 0;
  lw->share = lw->workers > 0 ? 1.0 / lw->workers : 1.0;
  lw->work.flops *= lw->share;
  lw->work.bytes *= lw->share;
  lw->work.weight_bytes *= lw->share;
}

// The MoE call's token count: its first 2-D tensor input ([T, hidden]).
LaunchWorkResult MoeLaunch(const proto::LaunchFrame& f, const proto::LaunchKernelSet* set,
                           std::string_view kernel) {
  auto call = ParseKinetoOpCall(f.name(), f.input_dims(), f.input_types(), f.concrete_inputs());
  if (!call.ok()) return InvalidResult(absl::StrCat(f.name(), ": ", call.status().message()));
  const OpArg* x = nullptr;
  for (const OpArg& a : call->args) {
    if (a.IsTensor() && a.dims.size() == 2) {
      x = &a;
      break;
    }
  }
  if (x == nullptr) return InvalidResult(absl::StrCat(f.name(), ": no [tokens, hidden] input"));
  LaunchWorkResult r;
  r.outcome = LaunchOutcome::kWork;
  LaunchWork& lw = r.work;
  lw.needs_model = true;
  lw.moe_op = f.name();
  IsMoeOp(f.name(), &lw.moe_shared);
  lw.moe_tokens = static_cast<double>(x->dims[0]);
  lw.moe_hidden = static_cast<double>(x->dims[1]);
  lw.activation_bytes = x->dtype ? x->dtype->bytes : 2;
  lw.work.kind = std::string(kind::kMoe);
  auto kd = DtypeOfKernelName(kernel);
  lw.work.precision = kd && (kd->precision == "fp4" || kd->precision == "fp8")
                          ? std::string(kd->precision)
                          : std::string(x->dtype ? x->dtype->precision : "bf16");
  lw.work.description = absl::StrCat(f.name(), " T=", x->dims[0]);
  lw.workers = Workers(*set, kind::kMoe, f.name());
  lw.share = lw.workers > 0 ? 1.0 / lw.workers : 1.0;
  return r;
}

}  // namespace

bool IsHelperKernel(std::string_view kernel) {
  const std::string k = absl::AsciiStrToLower(std::string(kernel));
  // Substrings specific enough to miss GEMM names: CUTLASS kernels end in "align1"/"align8",
  // so MoE's align kernels are matched as "moe_align".
  static constexpr const char* kHelpers[] = {
      "memset", "fill", "splitkreduce", "splitk_reduce", "reducesplitk", "reduction::",
      "epilogue::impl::globalkernel", "nchwtonhwc", "nhwctonchw", "computeoffsets", "combine",
      "elementwise_kernel", "catarraybatchedcopy", "topk", "moe_align", "gating", "softmax",
      "sort", "histogram", "silu", "gelu", "act_and_mul", "moe_sum", "finalize", "permute",
      "scatter", "gather", "quant", "reduce_kernel", "copy", "expert_offsets", "shuffle",
      "routing"};
  for (const char* h : kHelpers) {
    if (absl::StrContains(k, h)) return true;
  }
  return false;
}

std::string LaunchWork::Key() const {
  return absl::StrFormat("%s\x1f%s\x1f%s\x1f%s\x1f%.17g\x1f%.17g\x1f%.17g\x1f%d\x1f%.17g\x1f%d\x1f%d\x1f%d",
                         work.description, work.kind, work.precision, work.weight_format,
                         work.flops, work.bytes,
                         work.weight_bytes, work.bytes_known ? 1 : 0, share, workers,
                         needs_model ? 1 : 0, from_capture ? 1 : 0) + "\x1f" + modelled;
}

std::string LaunchWork::Describe() const {
  std::string s = work.description;
  if (workers > 1) absl::StrAppend(&s, " (1/", workers, " of the call: ", workers, " kernels)");
  return s;
}

namespace {

LaunchWorkResult ResolveFromStack(const proto::LaunchContextStats& t,
                                  const proto::LaunchContext& ctx, std::string_view kernel) {
  LaunchWorkResult none;
  if (ctx.stack() == 0 || ctx.stack() >= static_cast<uint32_t>(t.stacks_size())) return none;
  const proto::LaunchStack& stack = t.stacks(static_cast<int>(ctx.stack()));
  std::vector<const proto::LaunchFrame*> cpu_ops;
  const proto::LaunchFrame* nvtx = nullptr;
  for (uint32_t id : stack.frames()) {
    const proto::LaunchFrame* f = FrameAt(t, id);
    if (f == nullptr) continue;
    if (f->kind() == kCpuOp) cpu_ops.push_back(f);
    if (f->kind() == "nvtx") nvtx = f;  // the innermost wins
  }
  const proto::LaunchKernelSet* inner_set = SetAt(t, ctx.op_kernels());
  if (!cpu_ops.empty()) {
    const proto::LaunchFrame& inner = *cpu_ops.back();
    if (!OpKind(inner.name()).empty()) {
      auto call = ParseKinetoOpCall(inner.name(), inner.input_dims(), inner.input_types(),
                                    inner.concrete_inputs());
      if (!call.ok()) return InvalidResult(absl::StrCat(inner.name(), ": ", call.status().message()));
      if (call->args.empty()) return none;  // recorded without shapes
      FillMissingDtypes(DtypeOfKernelName(kernel), &*call);  // tensor lists record no type
      OpWorkResult w = DeriveOpWork(*call);
      if (w.outcome == Outcome::kInvalid) return InvalidResult(w.error);
      if (w.outcome == Outcome::kNoRule) return none;
      if (IsComputeKind(w.work.kind) && IsHelperKernel(kernel)) return none;
      LaunchWorkResult r;
      r.outcome = LaunchOutcome::kWork;
      r.work.work = std::move(w.work);
      Share(&r.work, inner_set, "");
      return r;
    }
    // An MoE entry point, outermost (the layer's own op: vllm::moe_forward, whose first input
    // is the hidden states) or innermost: its kernel list is the matching one.
    for (const proto::LaunchFrame* f : {cpu_ops.front(), cpu_ops.back()}) {
      if (!IsMoeOp(f->name())) continue;
      const proto::LaunchKernelSet* set =
          f == cpu_ops.back() ? inner_set : SetAt(t, ctx.outer_op_kernels());
      if (set == nullptr || IsHelperKernel(kernel) || f->input_dims().empty()) return none;
      LaunchWorkResult r = MoeLaunch(*f, set, kernel);
      return r;
    }
    return none;
  }
  if (nvtx != nullptr) {
    auto parsed = ParseNvtxOpCall(nvtx->name());
    if (!parsed) return none;
    if (!parsed->ok()) return InvalidResult(absl::StrCat(nvtx->name(), ": ", parsed->status().message()));
    OpCall call = **parsed;
    if (OpKind(call.op).empty()) return none;
    FillMissingDtypes(DtypeOfKernelName(kernel), &call);
    OpWorkResult w = DeriveOpWork(call);
    if (w.outcome == Outcome::kInvalid) return InvalidResult(w.error);
    if (w.outcome == Outcome::kNoRule) return none;
    if (IsComputeKind(w.work.kind) && IsHelperKernel(kernel)) return none;
    LaunchWorkResult r;
    r.outcome = LaunchOutcome::kWork;
    r.work.work = std::move(w.work);
    Share(&r.work, nullptr, "");
    return r;
  }
  return none;
}

}  // namespace

LaunchWorkResult ResolveLaunchWork(const proto::LaunchContextStats& t,
                                   const proto::LaunchContext& ctx, std::string_view kernel) {
  // A replayed kernel not paired with its capture has the replay loop's context; its work
  // is its modelled op call's, when the layer order gave it one.
  if (ctx.graph_launch() && !ctx.graph_capture()) {
    const uint32_t m = ctx.modelled_stack();
    if (m == 0 || m >= static_cast<uint32_t>(t.stacks_size())) return LaunchWorkResult{};
    proto::LaunchContext call;
    call.set_stack(m);
    call.set_op_kernels(ctx.modelled_op_kernels());
    call.set_outer_op_kernels(ctx.modelled_op_kernels());
    LaunchWorkResult r = ResolveFromStack(t, call, kernel);
    for (uint32_t id : t.stacks(static_cast<int>(m)).frames()) {
      const proto::LaunchFrame* f = FrameAt(t, id);
      if (f != nullptr && f->kind() == kModelLayerFrame) r.work.modelled = f->name();
    }
    if (r.outcome == LaunchOutcome::kWork && r.work.modelled.empty()) r.work.modelled = "?";
    return r;
  }
  LaunchWorkResult r = ResolveFromStack(t, ctx, kernel);
  r.work.from_capture = ctx.graph_launch() && ctx.graph_capture();
  return r;
}

absl::Status ApplyModelShape(const ModelShape& m, LaunchWork* w) {
  if (!w->needs_model) return absl::OkStatus();
  if (static_cast<double>(m.hidden) != w->moe_hidden) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the call's hidden size %.0f differs from %s's hidden_size %d", w->moe_op,
        w->moe_hidden, m.path, m.hidden));
  }
  auto call = MoeCallWork(m, w->moe_op, w->moe_tokens, w->activation_bytes, w->moe_shared);
  if (!call.ok()) return call.status();
  const std::string precision = w->work.precision;
  w->work = *std::move(call);
  w->work.precision = precision;
  w->work.flops *= w->share;
  w->work.bytes *= w->share;
  w->work.weight_bytes *= w->share;
  w->needs_model = false;
  return absl::OkStatus();
}

}  // namespace qprof::work
