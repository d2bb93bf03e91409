#include "analysis/work/op_work.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "analysis/work/work_util.h"

namespace qprof::work {
namespace internal {

OpWorkResult Invalid(const OpCall& call, std::string_view why) {
  OpWorkResult r;
  r.outcome = Outcome::kInvalid;
  std::string shapes;
  for (const OpArg& a : call.args) {
    if (a.IsTensor() || a.is_list) absl::StrAppend(&shapes, shapes.empty() ? "" : ",", DimsText(a));
  }
  r.error = absl::StrCat(call.op, " ", shapes.empty() ? "(no tensor inputs)" : shapes, ": ", std::string(why));
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

bool FlagAt(const OpCall& call, size_t index) {
  return index < call.args.size() && call.args[index].value == "True";
}

bool TensorAt(const OpCall& call, size_t index) {
  return index < call.args.size() && call.args[index].IsTensor();
}

}  // namespace internal

namespace {

struct OpFamily {
  std::string_view op;
  std::string_view kind;
};

// Exact op names with a rule. Memory ops are the common elementwise, copy and norm ops of
// eager PyTorch; an op missing here simply has no work.
constexpr std::array<OpFamily, 72> kOps = {{
    {"aten::mm", kind::kGemm},
    {"aten::addmm", kind::kGemm},
    {"aten::bmm", kind::kGemm},
    {"aten::baddbmm", kind::kGemm},
    {"aten::linear", kind::kGemm},
    {"aten::matmul", kind::kGemm},
    {"aten::_scaled_mm", kind::kGemm},
    {"aten::_grouped_mm", kind::kGemm},
    {"aten::scaled_dot_product_attention", kind::kAttention},
    {"aten::_scaled_dot_product_flash_attention", kind::kAttention},
    {"aten::_scaled_dot_product_efficient_attention", kind::kAttention},
    {"aten::_scaled_dot_product_cudnn_attention", kind::kAttention},
    {"aten::_flash_attention_forward", kind::kAttention},
    {"aten::_efficient_attention_forward", kind::kAttention},
    {"flash_attn::_flash_attn_forward", kind::kAttention},
    {"flash_attn::_flash_attn_varlen_forward", kind::kAttention},
    {"aten::cudnn_convolution", kind::kConv},
    {"aten::convolution", kind::kConv},
    {"aten::_convolution", kind::kConv},
    {"aten::copy_", kind::kMemory},
    {"aten::cat", kind::kMemory},
    {"aten::fill_", kind::kMemory},
    {"aten::zero_", kind::kMemory},
    {"aten::add", kind::kMemory},
    {"aten::add_", kind::kMemory},
    {"aten::sub", kind::kMemory},
    {"aten::sub_", kind::kMemory},
    {"aten::mul", kind::kMemory},
    {"aten::mul_", kind::kMemory},
    {"aten::div", kind::kMemory},
    {"aten::div_", kind::kMemory},
    {"aten::neg", kind::kMemory},
    {"aten::pow", kind::kMemory},
    {"aten::rsqrt", kind::kMemory},
    {"aten::sqrt", kind::kMemory},
    {"aten::exp", kind::kMemory},
    {"aten::cos", kind::kMemory},
    {"aten::sin", kind::kMemory},
    {"aten::silu", kind::kMemory},
    {"aten::silu_", kind::kMemory},
    {"aten::gelu", kind::kMemory},
    {"aten::relu", kind::kMemory},
    {"aten::relu_", kind::kMemory},
    {"aten::sigmoid", kind::kMemory},
    {"aten::tanh", kind::kMemory},
    {"aten::clamp", kind::kMemory},
    {"aten::clamp_", kind::kMemory},
    {"aten::clamp_min", kind::kMemory},
    {"aten::clamp_min_", kind::kMemory},
    {"aten::where", kind::kMemory},
    {"aten::masked_fill", kind::kMemory},
    {"aten::masked_fill_", kind::kMemory},
    {"aten::softmax", kind::kMemory},
    {"aten::_softmax", kind::kMemory},
    {"aten::_log_softmax", kind::kMemory},
    {"aten::native_layer_norm", kind::kMemory},
    {"aten::layer_norm", kind::kMemory},
    {"aten::rms_norm", kind::kMemory},
    {"aten::_fused_rms_norm", kind::kMemory},
    {"aten::native_dropout", kind::kMemory},
    {"aten::eq", kind::kMemory},
    {"aten::ne", kind::kMemory},
    {"aten::lt", kind::kMemory},
    {"aten::gt", kind::kMemory},
    {"aten::minimum", kind::kMemory},
    {"aten::maximum", kind::kMemory},
    {"aten::abs", kind::kMemory},
    {"aten::reciprocal", kind::kMemory},
    {"aten::erf", kind::kMemory},
    {"aten::log", kind::kMemory},
    {"aten::square", kind::kMemory},
    {"aten::addcmul_", kind::kMemory},
}};

}  // namespace

std::string_view OpKind(std::string_view op) {
  for (const OpFamily& f : kOps) {
    if (f.op == op) return f.kind;
  }
  return "";
}

OpWorkResult DeriveOpWork(const OpCall& call) {
  const std::string_view k = OpKind(call.op);
  if (k == kind::kGemm) return GemmWork(call);
  if (k == kind::kAttention) return AttentionWork(call);
  if (k == kind::kConv) return ConvWork(call);
  if (k == kind::kMemory) return MemoryWork(call);
  return OpWorkResult{};
}

}  // namespace qprof::work
