// PyTorch's own ops. Argument positions follow each op's schema in PyTorch's
// aten/src/ATen/native/native_functions.yaml (the order Kineto records "Input Dims" in);
// the conventions are op_work.h's, cited per row where an independent perf model (TraceLens,
// TraceLens/PerfModel/perf_model.py) or paper states the same count.
#include "analysis/work/op_rules.h"

namespace qprof::work {
namespace {

using enum Convention;
using enum Match;

// Sources shared by many rows.
constexpr std::string_view kElementwiseSrc =
    "PyTorch native_functions.yaml (out= overloads add the output last); bytes: inputs read "
    "once, output written once (TraceLens perf_model.py UnaryElementwise/BinaryElementwise)";
constexpr std::string_view kReduceSrc =
    "PyTorch native_functions.yaml; bytes: input read once, reduced output written once "
    "(TraceLens perf_model.py Reduce)";
constexpr std::string_view kNormSrc =
    "PyTorch native_functions.yaml; activations read and written once plus the per-channel "
    "tensors and statistics (TraceLens perf_model.py Normalization.bytes_func; "
    "batch norm: arXiv 1502.03167, layer: 1607.06450, group: 1803.08494, RMS: 1910.07467)";
constexpr std::string_view kNormBwdSrc =
    "PyTorch native_functions.yaml; grad_output and input read once, each gradient the "
    "output_mask asks for written once (TraceLens perf_model.py Normalization.bytes_func_bwd)";
constexpr std::string_view kSdpaSrc =
    "FLOPs 4*B*H*Nq*Nkv*d, halved when causal: FlashAttention benchmarks "
    "(benchmark_flash_attention.py), TraceLens perf_model.py SDPA.flops_func";
constexpr std::string_view kConvSrc =
    "2*N*K*(C/groups)*R*S*P*Q: torch/utils/flop_counter.py conv_flop_count, TraceLens "
    "perf_model.py CONV.flops_func";

constexpr ArgMap kUnary{.inputs = 1};
constexpr ArgMap kBinary{.inputs = 2};
constexpr ArgMap kTernary{.inputs = 3};

constexpr OpRule kRows[] = {
    // ---- GEMM (C = A x B, 2 FLOPs per multiply-accumulate) ----
    {"aten::mm", kExact, kind::kGemm, kGemm, {.a = 0, .b = 1, .inputs = 2}, 0,
     "mm(self [M,K], mat2 [K,N]); 2*M*N*K, TraceLens perf_model.py aten_mm"},
    {"aten::addmm", kExact, kind::kGemm, kGemm, {.a = 1, .b = 2, .bias = 0, .inputs = 5}, 0,
     "addmm(self, mat1, mat2, beta, alpha); 2*M*N*K + M*N, TraceLens perf_model.py aten_addmm"},
    {"aten::linear", kExact, kind::kGemm, kGemm, {.a = 0, .b = 1, .bias = 2, .inputs = 3},
     kWeightNK, "linear(input [...,K], weight [N,K], bias [N]?); torch.nn.functional.linear"},
    {"aten::bmm", kExact, kind::kGemm, kBatchedGemm, {.a = 0, .b = 1, .inputs = 2}, 0,
     "bmm(self [B,M,K], mat2 [B,K,N]); TraceLens perf_model.py aten_bmm"},
    {"aten::baddbmm", kExact, kind::kGemm, kBatchedGemm, {.a = 1, .b = 2, .bias = 0, .inputs = 5},
     0, "baddbmm(self, batch1, batch2, beta, alpha); TraceLens perf_model.py aten_baddbmm"},
    {"aten::matmul", kExact, kind::kGemm, kMatmul, {.a = 0, .b = 1, .inputs = 2}, 0,
     "matmul(self, other): torch.matmul broadcasting rules"},
    {"aten::_scaled_mm", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .bias = 4, .out_dtype = 6, .inputs = 8}, 0,
     "_scaled_mm(self, mat2, scale_a, scale_b, bias?, scale_result?, out_dtype?, "
     "use_fast_accum); output dtype out_dtype else self's; TraceLens perf_model.py aten_scaled_mm"},
    {"aten::_grouped_mm", kExact, kind::kGemm, kGroupedGemm,
     {.a = 0, .b = 1, .bias = 3, .out_dtype = 4, .offs = 2, .inputs = 5}, 0,
     "_grouped_mm(self, mat2, offs?, bias?, out_dtype?): torch/_meta_registrations.py shapes"},

    // ---- attention ----
    {"aten::scaled_dot_product_attention", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 5}, 0, kSdpaSrc},
    {"aten::_scaled_dot_product_flash_attention", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 4}, 0, kSdpaSrc},
    {"aten::_scaled_dot_product_efficient_attention", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 6}, 0, kSdpaSrc},
    {"aten::_scaled_dot_product_cudnn_attention", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 6}, 0, kSdpaSrc},
    // _flash_attention_forward(q, k, v, cum_seq_q?, cum_seq_k?, max_q, max_k, dropout_p,
    // is_causal, ...)
    {"aten::_flash_attention_forward", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 8, .cu_q = 3, .max_q = 5, .max_k = 6}, kBshd, kSdpaSrc},
    // _efficient_attention_forward(q, k, v, bias?, cu_seqlens_q?, cu_seqlens_k?, max_q?,
    // max_k?, dropout_p, custom_mask_type, ...)
    {"aten::_efficient_attention_forward", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .mask_type = 9, .cu_q = 4, .max_q = 6, .max_k = 7}, kBshd,
     kSdpaSrc},

    // ---- convolution (transposed ones have no rule) ----
    {"aten::convolution", kExact, kind::kConv, kConv,
     {.a = 0, .b = 1, .bias = 2, .stride = 3, .padding = 4, .dilation = 5, .transposed = 6,
      .groups = 8},
     0, kConvSrc},
    {"aten::_convolution", kExact, kind::kConv, kConv,
     {.a = 0, .b = 1, .bias = 2, .stride = 3, .padding = 4, .dilation = 5, .transposed = 6,
      .groups = 8},
     0, kConvSrc},
    // cudnn_convolution(self, weight, padding, stride, dilation, groups, ...): no bias
    {"aten::cudnn_convolution", kExact, kind::kConv, kConv,
     {.a = 0, .b = 1, .stride = 3, .padding = 2, .dilation = 4, .groups = 5}, 0, kConvSrc},
    // miopen_convolution(self, weight, bias?, padding, stride, dilation, groups, ...)
    {"aten::miopen_convolution", kExact, kind::kConv, kConv,
     {.a = 0, .b = 1, .bias = 2, .stride = 4, .padding = 3, .dilation = 5, .groups = 6}, 0,
     kConvSrc},
    {"aten::miopen_depthwise_convolution", kExact, kind::kConv, kConv,
     {.a = 0, .b = 1, .bias = 2, .stride = 4, .padding = 3, .dilation = 5, .groups = 6}, 0,
     kConvSrc},
    // convolution_backward(grad_output, input, weight, bias_sizes?, stride, padding, dilation,
    // transposed, output_padding, groups, output_mask)
    {"aten::convolution_backward", kExact, kind::kConv, kConvBackward,
     {.a = 1, .b = 2, .bias = 3, .grad = 0, .stride = 4, .padding = 5, .dilation = 6,
      .transposed = 7, .groups = 9, .mask = 10},
     0,
     "grad input and grad weight each the forward's FLOPs, grad bias one add per grad_output "
     "element (torch/utils/flop_counter.py conv_backward_flop; TraceLens perf_model.py "
     "CONV.flops_bwd_func), by output_mask"},

    // ---- normalisation ----
    // native_batch_norm(input, weight?, bias?, running_mean?, running_var?, training, momentum, eps)
    {"aten::native_batch_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .training = 5, .running = 3}, kStatsPerChannel, kNormSrc},
    {"aten::batch_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .training = 5, .running = 3}, kStatsPerChannel, kNormSrc},
    {"aten::_native_batch_norm_legit", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .training = 5, .running = 3}, kStatsPerChannel, kNormSrc},
    {"aten::_native_batch_norm_legit_no_training", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .running = 3}, kStatsPerChannel, kNormSrc},
    {"aten::cudnn_batch_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .training = 5, .running = 3}, kStatsPerChannel, kNormSrc},
    {"aten::miopen_batch_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .training = 5, .running = 3}, kStatsPerChannel, kNormSrc},
    // instance_norm(input, weight?, bias?, running_mean?, running_var?, use_input_stats, ...)
    {"aten::instance_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .training = 5, .running = 3}, kStatsPerInstance, kNormSrc},
    // native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd)
    {"aten::native_layer_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 2, .bias = 3, .normalized = 1}, kStatsPerRow, kNormSrc},
    {"aten::layer_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 2, .bias = 3, .normalized = 1}, kStatsPerRow, kNormSrc},
    // native_group_norm(input, weight?, bias?, N, C, HxW, group, eps) -> (out, mean, rstd)
    {"aten::native_group_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 1, .bias = 2, .groups = 6}, kStatsPerGroup, kNormSrc},
    // group_norm(input, num_groups, weight?, bias?, eps, cudnn_enabled)
    {"aten::group_norm", kExact, kind::kMemory, kNorm,
     {.a = 0, .b = 2, .bias = 3, .groups = 1}, kStatsPerGroup, kNormSrc},
    // _fused_rms_norm(input, normalized_shape, weight?, eps) -> (out, rstd)
    {"aten::_fused_rms_norm", kExact, kind::kMemory, kNorm, {.a = 0, .b = 2, .normalized = 1},
     kStatsPerRow | kOneStat, kNormSrc},
    // rms_norm(input, normalized_shape, weight?, eps) -> out
    {"aten::rms_norm", kExact, kind::kMemory, kNorm, {.a = 0, .b = 2, .normalized = 1},
     kStatsPerRow | kNoStats, kNormSrc},
    // native_batch_norm_backward(grad_out, input, weight?, running_mean?, running_var?,
    // save_mean?, save_invstd?, train, eps, output_mask)
    {"aten::native_batch_norm_backward", kExact, kind::kMemory, kNormBackward,
     {.a = 1, .b = 2, .grad = 0, .mask = 9}, kStatsPerChannel, kNormBwdSrc},
    // cudnn / miopen_batch_norm_backward(input, grad_output, weight, running_mean?,
    // running_var?, save_mean?, save_var?, epsilon[, reserve]): all three gradients
    {"aten::cudnn_batch_norm_backward", kExact, kind::kMemory, kNormBackward,
     {.a = 0, .b = 2, .grad = 1}, kStatsPerChannel, kNormBwdSrc},
    {"aten::miopen_batch_norm_backward", kExact, kind::kMemory, kNormBackward,
     {.a = 0, .b = 2, .grad = 1}, kStatsPerChannel, kNormBwdSrc},
    // native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?,
    // bias?, output_mask)
    {"aten::native_layer_norm_backward", kExact, kind::kMemory, kNormBackward,
     {.a = 1, .b = 5, .grad = 0, .mask = 7}, kStatsPerRow, kNormBwdSrc},
    // native_group_norm_backward(grad_out, input, mean, rstd, weight?, N, C, HxW, group,
    // output_mask)
    {"aten::native_group_norm_backward", kExact, kind::kMemory, kNormBackward,
     {.a = 1, .b = 4, .grad = 0, .mask = 9}, kStatsPerGroup, kNormBwdSrc},
    // _fused_rms_norm_backward(grad_out, input, normalized_shape, rstd, weight?, output_mask)
    {"aten::_fused_rms_norm_backward", kExact, kind::kMemory, kNormBackward,
     {.a = 1, .b = 4, .grad = 0, .mask = 5}, kStatsPerRow | kOneStat, kNormBwdSrc},

    // ---- memory-bound: copies, fills, concatenation ----
    {"aten::copy_", kExact, kind::kMemory, kCopy, {}, 0,
     "copy_(self, src, non_blocking): reads src, writes self"},
    {"aten::fill_", kExact, kind::kMemory, kFill, {}, 0, "fill_(self, value): writes self"},
    {"aten::zero_", kExact, kind::kMemory, kFill, {}, 0, "zero_(self): writes self"},
    {"aten::cat", kExact, kind::kMemory, kCat, {}, 0,
     "cat(tensors, dim): reads the list, writes as much"},

    // ---- elementwise: inputs read once, broadcast output written once ----
    {"aten::add", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::add_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::sub", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::sub_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::rsub", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::mul", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::mul_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::div", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::div_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::pow", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::pow_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::eq", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::ne", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::lt", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::le", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::gt", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::ge", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::minimum", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::maximum", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::where", kExact, kind::kMemory, kElementwise, kTernary, 0, kElementwiseSrc},
    {"aten::masked_fill", kExact, kind::kMemory, kElementwise, kTernary, 0, kElementwiseSrc},
    {"aten::masked_fill_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::clamp", kExact, kind::kMemory, kElementwise, kTernary, 0, kElementwiseSrc},
    {"aten::clamp_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::clamp_min", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::clamp_min_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::clamp_max", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::clamp_max_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::addcmul_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::addcdiv_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::lerp_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::neg", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::abs", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::reciprocal", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::rsqrt", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::sqrt", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::square", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::exp", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::log", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::erf", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::cos", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::sin", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::tanh", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::sigmoid", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::relu", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::relu_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::silu", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::silu_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::gelu", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::gelu_", kExact, kind::kMemory, kElementwise, {}, 0, kElementwiseSrc},
    {"aten::native_dropout", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::cumsum", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::threshold_backward", kExact, kind::kMemory, kElementwise, kBinary, 0,
     kElementwiseSrc},
    {"aten::gelu_backward", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::silu_backward", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::sigmoid_backward", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    {"aten::tanh_backward", kExact, kind::kMemory, kElementwise, kBinary, 0, kElementwiseSrc},
    // softmax: the output has the input's shape
    {"aten::softmax", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::_softmax", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::log_softmax", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::_log_softmax", kExact, kind::kMemory, kElementwise, kUnary, 0, kElementwiseSrc},
    {"aten::_softmax_backward_data", kExact, kind::kMemory, kElementwise, kBinary, 0,
     kElementwiseSrc},
    {"aten::_log_softmax_backward_data", kExact, kind::kMemory, kElementwise, kBinary, 0,
     kElementwiseSrc},

    // ---- reductions over `dim` (a list or one dimension; absent: every dimension) ----
    {"aten::sum", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::mean", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::amax", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::amin", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::max", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::min", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::argmax", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::argmin", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::var", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::std", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::logsumexp", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    {"aten::prod", kExact, kind::kMemory, kReduce, {.dim = 1, .inputs = 1}, 0, kReduceSrc},
    // linalg_vector_norm(self, ord, dim?, keepdim, dtype?)
    {"aten::linalg_vector_norm", kExact, kind::kMemory, kReduce, {.dim = 2, .inputs = 1}, 0,
     kReduceSrc},
};

}  // namespace

std::span<const OpRule> AtenOpRules() { return kRows; }

}  // namespace qprof::work
