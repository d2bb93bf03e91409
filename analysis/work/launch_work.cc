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

// A rule that derives work from the call's shapes alone (not MoE, which needs the model).
bool HasShapeRule(const OpRule* r) {
  return r != nullptr && r->convention != Convention::kNoWork &&
         r->convention != Convention::kMoeLayer;
}


// Worker launches of a call, from its kernel list: non-helper kernels (every kernel for a
// memory op); for an MoE call only those whose innermost op is the call itself or has no
// work of its own (none, or another MoE entry point nested in it).
uint32_t Workers(const proto::LaunchKernelSet& set, std::string_view k, std::string_view moe_op) {
  uint32_t n = 0;
  for (int i = 0; i < set.kernels_size(); ++i) {
    const uint32_t launches = i < set.launches_size() ? set.launches(i) : 0;
    if (IsComputeKind(k) && IsHelperKernel(set.kernels(i))) continue;
    if (!moe_op.empty() && i < set.inner_ops_size()) {
      const std::string& inner = set.inner_ops(i);
      if (inner != moe_op && HasShapeRule(FindOpRule(inner))) continue;
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

// Attention whose key lengths may come from the step.
bool NeedsStep(const OpRule& r) {
  return r.convention == Convention::kStepAttention || r.convention == Convention::kAttention;
}

// The innermost iteration annotation on the stack that states key lengths, else the
// innermost one (SGLang nests its plain "step[EXTEND bs=15 toks=15360]" inside the detailed
// "execute_..." of TraceLens's plugin).
std::optional<IterationAnnotation> StackStep(const proto::LaunchContextStats& t,
                                             const proto::LaunchStack& stack) {
  std::optional<IterationAnnotation> first;
  for (int i = stack.frames_size() - 1; i >= 0; --i) {
    const proto::LaunchFrame* f = FrameAt(t, stack.frames(i));
    if (f == nullptr || f->kind() == kCpuOp) continue;
    auto a = ParseIterationAnnotation(f->name());
    if (!a) continue;
    if (a->has_keys) return a;
    if (!first) first = std::move(a);
  }
  return first;
}

// One launch's share of a derived call's work.
LaunchWorkResult FromOpWork(OpWorkResult w, std::string_view kernel,
                            const proto::LaunchKernelSet* set) {
  if (w.outcome == Outcome::kInvalid) return InvalidResult(std::move(w.error));
  if (w.outcome == Outcome::kNoRule) return LaunchWorkResult{};
  if (IsComputeKind(w.work.kind) && IsHelperKernel(kernel)) return LaunchWorkResult{};
  LaunchWorkResult r;
  r.outcome = LaunchOutcome::kWork;
  r.work.work = std::move(w.work);
  Share(&r.work, set, "");
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
      "routing",
      // MIOpen's layout and fill kernels around its convolutions (SubTensorOpWithScalar1d,
      // batched_transpose_32x32_half, transpose_NCHW2CNHW_V2_2D_WG_off64); vLLM's unified
      // attention's split-KV reduction; triton_kernels' MoE routing (_sum_bitmatrix_rows)
      "subtensorop", "batched_transpose", "transpose_nchw2cnhw", "transpose_cnhw2nchw",
      "reduce_segments", "bitmatrix"};
  // Composable Kernel's GEMM, convolution and attention kernels spell their whole pipeline
  // in their template arguments ("kernel_grouped_conv_fwd_multiple_abd_xdl_cshuffle<
  // GridwiseGemm..., element_wise::PassThrough>", "kentry<FmhaBatchPrefillWithPagedKVCache
  // Kernel<..., BlockAttentionQuantScaleEnum, ...>>"), words that would read as a helper's
  // ("fill" of Prefill, "quant"): they do the work. CK's split-KV combine kernel
  // (FmhaFwdSplitKVCombineKernel) stays a helper.
  static constexpr const char* kCompute[] = {"gridwisegemm", "_xdl_cshuffle", "igemm_",
                                             "fmhabatchprefill", "fmhafwdkernel",
                                             "fmhafwdsplitkvkernel"};
  for (const char* c : kCompute) {
    if (absl::StrContains(k, c)) return false;
  }
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
                                  const proto::LaunchContext& ctx, std::string_view kernel,
                                  const IterationAnnotation* step) {
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
    if (const OpRule* rule = FindOpRule(inner.name()); HasShapeRule(rule)) {
      auto call = ParseKinetoOpCall(inner.name(), inner.input_dims(), inner.input_types(),
                                    inner.concrete_inputs());
      if (!call.ok()) return InvalidResult(absl::StrCat(inner.name(), ": ", call.status().message()));
      if (call->args.empty()) return none;  // recorded without shapes
      FillMissingDtypes(DtypeOfKernelName(kernel), &*call);  // tensor lists record no type
      std::optional<IterationAnnotation> found;
      OpContext oc;
      if (NeedsStep(*rule)) {
        if (step == nullptr) found = StackStep(t, stack);
        oc.step = step != nullptr ? step : (found ? &*found : nullptr);
      }
      return FromOpWork(DeriveOpWork(*call, oc), kernel, inner_set);
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
    const OpRule* rule = FindOpRule(call.op);
    if (!HasShapeRule(rule)) return none;
    FillMissingDtypes(DtypeOfKernelName(kernel), &call);
    OpContext oc;
    oc.step = NeedsStep(*rule) ? step : nullptr;
    return FromOpWork(DeriveOpWork(call, oc), kernel, nullptr);
  }
  return none;
}

}  // namespace

LaunchWorkResult ResolveLaunchWork(const proto::LaunchContextStats& t,
                                   const proto::LaunchContext& ctx, std::string_view kernel,
                                   const IterationAnnotation* step) {
  // A replayed kernel not paired with its capture has the replay loop's context; its work
  // is its modelled op call's, when the layer order gave it one.
  if (ctx.graph_launch() && !ctx.graph_capture()) {
    const uint32_t m = ctx.modelled_stack();
    if (m == 0 || m >= static_cast<uint32_t>(t.stacks_size())) return LaunchWorkResult{};
    proto::LaunchContext call;
    call.set_stack(m);
    call.set_op_kernels(ctx.modelled_op_kernels());
    call.set_outer_op_kernels(ctx.modelled_op_kernels());
    LaunchWorkResult r = ResolveFromStack(t, call, kernel, step);
    for (uint32_t id : t.stacks(static_cast<int>(m)).frames()) {
      const proto::LaunchFrame* f = FrameAt(t, id);
      if (f != nullptr && f->kind() == kModelLayerFrame) r.work.modelled = f->name();
    }
    if (r.outcome == LaunchOutcome::kWork && r.work.modelled.empty()) r.work.modelled = "?";
    return r;
  }
  LaunchWorkResult r = ResolveFromStack(t, ctx, kernel, step);
  r.work.from_capture = ctx.graph_launch() && ctx.graph_capture();
  return r;
}

absl::Status ApplyModelShape(const ModelShape& m, LaunchWork* w) {
  if (!w->needs_model) return absl::OkStatus();
  const double hidden = static_cast<double>(m.hidden);
  // Kernels that need aligned sizes get the hidden states padded (vLLM's MXFP4 MoE on ROCm
  // pads gpt-oss's 2880 to 3072, a multiple of 256): a call up to one 256-block wider than
  // the model is the model's, padded.
  const bool padded = w->moe_hidden > hidden && w->moe_hidden < hidden + 256 &&
                      std::fmod(w->moe_hidden, 64) == 0;
  if (hidden != w->moe_hidden && !padded) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the call's hidden size %.0f differs from %s's hidden_size %d", w->moe_op,
        w->moe_hidden, m.path, m.hidden));
  }
  auto call = MoeCallWork(m, w->moe_op, w->moe_tokens, w->activation_bytes, w->moe_shared);
  if (!call.ok()) return call.status();
  if (padded) {
    absl::StrAppend(&call->description, absl::StrFormat(
        " (the call's hidden states are padded to %.0f)", w->moe_hidden));
  }
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
