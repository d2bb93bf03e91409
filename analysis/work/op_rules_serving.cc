// Ops of the serving stacks and kernel libraries (vLLM, SGLang / sgl-kernel, aiter,
// flash-attn, FlashMLA) and TorchInductor's Triton kernels. Argument positions follow each
// op's registered schema (TORCH_LIBRARY def strings, cited) or, where the schema lives in
// Python wrappers, TraceLens's perf model for the op (TraceLens/PerfModel/extensions/*.py),
// which states the traced argument layout; the observed layout was checked on TraceLens's
// public vLLM and SGLang capture traces.
#include "analysis/work/op_rules.h"

namespace qprof::work {
namespace {

using enum Convention;
using enum Match;

constexpr std::string_view kStepAttentionSrc =
    "pairs from the step's sums: context sqsk - sqsq/2, generation sqsk; Q and O once, "
    "each sequence's keys and values once (TraceLens attention_perf_model_extensions.py "
    "InferenceAttention)";
constexpr std::string_view kA8W8Src =
    "Y[M,N] = X[M,K] x W[N,K]^T, BF16 output (TraceLens perf_model_extensions.py "
    "gemm_a8w8_blockscale)";
constexpr std::string_view kMovedSrc =
    "outputs passed as arguments (Tensor! out): each tensor argument moves once";
constexpr std::string_view kMoeSrc =
    "MoE layer: tokens from its [T, hidden] input; experts, top-k, sizes and format from "
    "--model-shape; distinct experts E(1-(1-k/E)^T) under uniform routing (moe_work.h)";
constexpr std::string_view kRoutingSrc =
    "routing and bookkeeping of an MoE layer: no expert GEMMs (TraceLens torch_op_mapping.py "
    "lists them as MoE_aux)";

constexpr OpRule kRows[] = {
    // ---- GEMMs (op_work.h: kGemm) ----
    {"vllm::rocm_unquantized_gemm", kPrefix, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .bias = 2, .inputs = 3}, kWeightNK,
     "vLLM rocm_unquantized_gemm(x [M,K], weight [N,K], bias [N]?) (TraceLens "
     "perf_model_extensions.py vllm_rocm_unquantized_gemm)"},
    {"_C::cutlass_scaled_mm", kExact, kind::kGemm, kGemm, {.a = 1, .b = 2, .bias = 5, .out = 0},
     0,
     "vLLM csrc/torch_bindings.cpp cutlass_scaled_mm(Tensor! out, a [M,K], b [K,N] "
     "column-major, a_scales, b_scales, bias?)"},
    {"_C::cutlass_scaled_mm_azp", kExact, kind::kGemm, kGemm,
     {.a = 1, .b = 2, .bias = 7, .out = 0}, 0,
     "vLLM csrc/torch_bindings.cpp cutlass_scaled_mm_azp(Tensor! out, a, b, a_scales, "
     "b_scales, azp_adj, azp?, bias?)"},
    {"_C::cutlass_scaled_fp4_mm", kExact, kind::kGemm, kGemm, {.a = 1, .b = 2, .out = 0},
     kWeightNK | kPackedK2,
     "vLLM csrc/torch_bindings.cpp cutlass_scaled_fp4_mm(Tensor! out, a [M,K/2], b [N,K/2], "
     "block_scale_a, block_scale_b, alpha): two FP4 values per byte"},
    {"sgl_kernel::cutlass_scaled_fp4_mm", kExact, kind::kGemm, kGemm, {.a = 1, .b = 2, .out = 0},
     kWeightNK | kPackedK2,
     "sgl-kernel common_extension.cc cutlass_scaled_fp4_mm(Tensor! out, a [M,K/2], "
     "b [N,K/2], block_scale_a, block_scale_b, alpha)"},
    {"sgl_kernel::fp8_scaled_mm", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .bias = 5, .out_dtype = 4}, 0,
     "sgl-kernel fp8_scaled_mm(mat_a [M,K], mat_b [K,N] column-major, scales_a, scales_b, "
     "out_dtype, bias?)"},
    {"sgl_kernel::int8_scaled_mm", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .bias = 5, .out_dtype = 4}, 0,
     "sgl-kernel int8_scaled_mm(mat_a [M,K], mat_b [K,N], scales_a, scales_b, out_dtype, bias?)"},
    {"sgl_kernel::fp8_blockwise_scaled_mm", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .out_dtype = 4}, 0,
     "sgl-kernel fp8_blockwise_scaled_mm(mat_a [M,K], mat_b [K,N], scales_a, scales_b, "
     "out_dtype)"},
    {"aiter::gemm_a16w16", kExact, kind::kGemm, kGemm, {.a = 0, .b = 1, .bias = 2, .out_dtype = 3},
     kWeightNK,
     "aiter gemm_a16w16(x [M,K], w [N,K], bias?, dtype, ...) (TraceLens "
     "perf_model_extensions.py gemm_a16w16)"},
    {"aiter::gemm_afp4wfp4_", kExact, kind::kGemm, kGemm, {.a = 0, .b = 1, .out = 5},
     kWeightNK | kPackedK2,
     "aiter gemm_afp4wfp4_(x [M,K/2], w [N,K/2], x_scales, w_scales, ?, y [M,N]) MXFP4 "
     "(TraceLens perf_model_extensions.py gemm_afp4wfp4)"},
    // The a8w8 family: XQ [M,K], WQ [N,K], x_scale, w_scale, then bias / Out / options.
    {"aiter::gemm_a8w8", kPrefix, kind::kGemm, kGemm, {.a = 0, .b = 1, .inputs = 4},
     kWeightNK | kOutBf16, kA8W8Src},
    {"aiter::flatmm_a8w8_blockscale_asm", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .inputs = 4}, kWeightNK | kOutBf16, kA8W8Src},
    {"aiter::gfx950_a8w8_blockscale_asm", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .inputs = 4}, kWeightNK | kOutBf16, kA8W8Src},
    {"vllm::rocm_aiter_triton_gemm_a8w8_blockscale", kExact, kind::kGemm, kGemm,
     {.a = 0, .b = 1, .inputs = 4}, kWeightNK | kOutBf16, kA8W8Src},

    // ---- attention with Q, K and V tensors (kAttention) ----
    // flash_attn _flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_forward", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 5}, kBshd,
     "flash_attn_interface.py _flash_attn_forward; FLOPs as the FlashAttention benchmarks "
     "(TraceLens perf_model.py flash_attention)"},
    // _flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    // max_seqlen_k, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_varlen_forward", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 9, .cu_q = 3, .max_q = 5, .max_k = 6}, kBshd,
     "flash_attn_interface.py _flash_attn_varlen_forward (TraceLens perf_model.py "
     "flash_attention_varlen_forward); causal pairs aligned bottom-right"},
    // aiter mha_fwd / fmha_v3_fwd(q, k, v [B,S,H,d], dropout_p, softmax_scale, is_causal, ...)
    {"aiter::mha_fwd", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 5}, kBshd,
     "aiter mha_fwd(q, k, v, dropout_p, softmax_scale, is_causal, ...) (TraceLens "
     "perf_model.py _parse_aiter_mha_fwd_args)"},
    {"aiter::fmha_v3_fwd", kExact, kind::kAttention, kAttention,
     {.q = 0, .k = 1, .v = 2, .causal = 5}, kBshd,
     "aiter fmha_v3_fwd: mha_fwd's layout (TraceLens perf_model.py _parse_aiter_mha_fwd_args)"},

    // SageAttention's Triton kernels as TorchInductor records them (xDiT on MI300X): Q, K
    // INT8 and V FP8 [B, H, S, d], their scales, O BF16 at argument 16
    {"sage_fwd", kPrefix, kind::kAttention, kAttention, {.out = 16, .q = 0, .k = 1, .v = 2}, 0,
     "SageAttention (arXiv 2410.02367) attn_fwd kernel; layout as recorded on TraceLens's "
     "xdit_flux.1_aiter_sage capture; FLOPs as the FlashAttention benchmarks"},
    {"sage_quant_kernel", kPrefix, kind::kMemory, kTriton, {}, 0,
     "SageAttention's Q/K/V quantisation kernel: each tensor argument once"},

    // ---- attention over the step's sequences (kStepAttention) ----
    {"vllm::unified_attention_with_output", kExact, kind::kAttention, kStepAttention,
     {.out = 3, .q = 0, .k = 1, .v = 2}, 0, kStepAttentionSrc},
    {"vllm::unified_attention", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .v = 2}, 0, kStepAttentionSrc},
    {"aiter::mha_varlen_fwd", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .v = 2}, 0, kStepAttentionSrc},
    {"aiter::fmha_v3_varlen_fwd", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .v = 2}, 0, kStepAttentionSrc},
    // mha_batch_prefill(q [T,H,d], k_cache [pages,Hkv,d], v_cache, cu_seqlens_q, kv_indptr, ...)
    {"aiter::mha_batch_prefill", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .v = 2}, 0, kStepAttentionSrc},
    // paged_attention_ragged(out, workspace, query [T,H,d], key_cache [pages,page,Hkv,d],
    // value_cache, kv_indptr, ...); SGLang's profiler wraps it per layer
    {"aiter::paged_attention_ragged", kExact, kind::kAttention, kStepAttention,
     {.out = 0, .q = 2, .k = 3, .v = 4}, kDecodeOnly, kStepAttentionSrc},
    {"sglang_profiler::attention_paged_attention_ragged", kPrefix, kind::kAttention,
     kStepAttention, {.out = 0, .q = 2, .k = 3, .v = 4}, kDecodeOnly, kStepAttentionSrc},
    // pa_decode_gluon(q [T,H,d], ?, key_cache [blocks, Hkv, ...], ...)
    {"aiter::pa_decode_gluon", kExact, kind::kAttention, kStepAttention, {.q = 0, .k = 2},
     kDecodeOnly | kKvHeadsAt1, kStepAttentionSrc},
    // paged_attention_v1(Tensor! out, query, key_cache [blocks,Hkv,d/x,block,x], value_cache
    // [blocks,Hkv,d,block], ...); v2 and ROCm's add exp_sums, max_logits, tmp_out first
    {"_C::paged_attention_v1", kExact, kind::kAttention, kStepAttention,
     {.out = 0, .q = 1, .k = 2, .v = 3}, kDecodeOnly | kKvHeadsAt1,
     "vLLM csrc/torch_bindings.cpp paged_attention_v1; pairs as InferenceAttention"},
    {"_C::paged_attention_v2", kExact, kind::kAttention, kStepAttention,
     {.out = 0, .q = 4, .k = 5, .v = 6}, kDecodeOnly | kKvHeadsAt1,
     "vLLM csrc/torch_bindings.cpp paged_attention_v2; pairs as InferenceAttention"},
    {"_rocm_C::paged_attention", kExact, kind::kAttention, kStepAttention,
     {.out = 0, .q = 4, .k = 5, .v = 6}, kDecodeOnly | kKvHeadsAt1,
     "vLLM csrc/rocm/torch_bindings.cpp paged_attention(out, exp_sums, max_logits, tmp_out, "
     "query, key_cache, value_cache, ...)"},
    // FlashMLA decode: q [B, s_q, H, d_qk], latent cache [blocks, page, 1, d_qk] holding V
    {"_flashmla_C::fwd_kvcache_mla", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .head_dim_v = 2}, kDecodeOnly | kSharedKV,
     "FlashMLA fwd_kvcache_mla(q, kcache, head_size_v, seqlens_k, block_table, ...): MLA, V is "
     "the first head_size_v of the latent cache"},
    {"_flashmla_C::dense_decode_fwd", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .head_dim_v = 2}, kDecodeOnly | kSharedKV,
     "FlashMLA dense_decode_fwd(q, kcache, head_size_v, seqlens_k, block_table, ...)"},
    {"sgl_kernel::fwd_kvcache_mla", kExact, kind::kAttention, kStepAttention,
     {.q = 0, .k = 1, .head_dim_v = 2}, kDecodeOnly | kSharedKV,
     "sgl-kernel flashmla_extension.cc fwd_kvcache_mla(q, kv_cache, head_size_v, seqlens_k, "
     "block_table, ...)"},

    // ---- KV cache writes, RoPE, fused norms and activations (memory-bound) ----
    {"_C_cache_ops::reshape_and_cache_flash", kExact, kind::kMemory, kKvStore,
     {.k = 0, .v = 1, .kc = 2, .vc = 3}, 0,
     "vLLM reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, ...): new "
     "rows read once and written once (TraceLens sglang_store_cache)"},
    {"_C_cache_ops::reshape_and_cache", kExact, kind::kMemory, kKvStore,
     {.k = 0, .v = 1, .kc = 2, .vc = 3}, 0,
     "vLLM reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, ...)"},
    {"sglang::store_cache", kExact, kind::kMemory, kKvStore, {.k = 0, .v = 1, .kc = 2, .vc = 3},
     0, "SGLang store_cache(k, v, k_cache, v_cache, indices, ...) (TraceLens sglang_store_cache)"},
    {"_C_cache_ops::concat_and_cache_mla", kExact, kind::kMemory, kKvStore,
     {.k = 0, .v = 1, .kc = 2}, 0,
     "vLLM concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, ...): one latent cache"},
    {"_C::rotary_embedding", kExact, kind::kMemory, kRope, {.a = 0, .b = 4, .q = 1, .k = 2}, 0,
     "vLLM rotary_embedding(positions, query, key?, head_size, cos_sin_cache, is_neox): Q and "
     "K rotated in place, one cache row per token"},
    {"sgl_kernel::rotary_embedding", kExact, kind::kMemory, kRope,
     {.a = 0, .b = 4, .q = 1, .k = 2}, 0,
     "sgl-kernel rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox) "
     "(TraceLens sgl_kernel_rotary_embedding)"},
    {"aiter::rmsnorm", kExact, kind::kMemory, kMoved, {}, 0,
     "aiter rmsnorm(out, input, weight, eps) (TraceLens aiter_rmsnorm)"},
    {"aiter::add_rmsnorm", kExact, kind::kMemory, kMoved, {}, 0,
     "aiter add_rmsnorm(out, input, residual_in, residual_out, weight, eps) (TraceLens "
     "aiter_add_rmsnorm)"},
    {"aiter::rmsnorm2d_fwd_with_add_ck", kExact, kind::kMemory, kMoved, {}, 0,
     "aiter rmsnorm2d_fwd_with_add_ck(out, input, residual_in, residual_out, weight, eps, ...)"},
    {"aiter::rms_norm", kExact, kind::kMemory, kMoved, {.a = 0}, kReturnsLikeA,
     "aiter rms_norm(x, weight, eps) -> out like x (TraceLens aiter_rms_norm)"},
    {"aiter::rmsnorm2d_fwd_ck", kExact, kind::kMemory, kMoved, {.a = 0}, kReturnsLikeA,
     "aiter rmsnorm2d_fwd_ck(x, weight, eps) -> out like x (TraceLens aiter_rms_norm)"},
    {"_C::rms_norm", kExact, kind::kMemory, kMoved, {}, 0,
     "vLLM rms_norm(Tensor! result, input, weight, epsilon)"},
    {"_C::fused_add_rms_norm", kExact, kind::kMemory, kMoved, {.inplace = 0b11}, 0,
     "vLLM fused_add_rms_norm(Tensor! input, Tensor! residual, weight, epsilon): input and "
     "residual read and written in place"},
    {"_C::silu_and_mul", kExact, kind::kMemory, kMoved, {}, 0,
     "vLLM silu_and_mul(Tensor! out, input)"},
    {"_C::mul_and_silu", kExact, kind::kMemory, kMoved, {}, 0, "vLLM mul_and_silu(Tensor! out, input)"},
    {"_C::gelu_and_mul", kExact, kind::kMemory, kMoved, {}, 0, "vLLM gelu_and_mul(Tensor! out, input)"},
    {"_C::gelu_tanh_and_mul", kExact, kind::kMemory, kMoved, {}, 0,
     "vLLM gelu_tanh_and_mul(Tensor! out, input)"},
    {"sgl_kernel::silu_and_mul", kExact, kind::kMemory, kMoved, {}, 0,
     "sgl-kernel silu_and_mul(out, input) (TraceLens sgl_kernel_silu_and_mul)"},
    {"sgl_kernel::gelu_and_mul", kExact, kind::kMemory, kMoved, {}, 0,
     "sgl-kernel gelu_and_mul(out, input)"},
    {"aiter::silu_and_mul", kExact, kind::kMemory, kMoved, {}, 0,
     "aiter silu_and_mul(out, input) (TraceLens aiter_silu_and_mul)"},
    {"aiter::gelu_and_mul", kExact, kind::kMemory, kMoved, {}, 0,
     "aiter gelu_and_mul(out, input) (TraceLens aiter_gelu_and_mul)"},
    {"_C::static_scaled_fp8_quant", kExact, kind::kMemory, kMoved, {}, 0,
     "vLLM static_scaled_fp8_quant(Tensor! result, input, scale)"},
    {"_C::dynamic_scaled_fp8_quant", kExact, kind::kMemory, kMoved, {}, 0,
     "vLLM dynamic_scaled_fp8_quant(Tensor! result, input, Tensor! scale)"},
    {"_C::dynamic_per_token_scaled_fp8_quant", kExact, kind::kMemory, kMoved, {}, 0,
     "vLLM dynamic_per_token_scaled_fp8_quant(Tensor! result, input, Tensor! scale, scale_ub?)"},
    {"aiter::dynamic_per_token_scaled_quant", kExact, kind::kMemory, kMoved, {}, 0, kMovedSrc},
    {"aiter::dynamic_per_group_scaled_quant", kExact, kind::kMemory, kMoved, {}, 0, kMovedSrc},
    {"aiter::dynamic_per_tensor_quant", kExact, kind::kMemory, kMoved, {}, 0, kMovedSrc},
    // aiter _groupnorm_run(input, num_groups, weight, bias, eps): group_norm's layout
    {"aiter::_groupnorm_run", kExact, kind::kMemory, kNorm, {.a = 0, .b = 2, .bias = 3, .groups = 1},
     kStatsPerGroup | kNoStats, "aiter _groupnorm_run: aten::group_norm's layout (TraceLens maps it "
     "to perf_model.py GroupNorm)"},

    // ---- TorchInductor's generated Triton kernels: pointers in, out and in/out ----
    {"triton_poi_", kPrefix, kind::kMemory, kTriton, {}, 0,
     "TorchInductor kernel arguments (in_ptr*, out_ptr*, in_out_ptr*): each tensor once "
     "(TraceLens triton_compiled_perf_model.py, trace-intrinsic bytes)"},
    {"triton_red_", kPrefix, kind::kMemory, kTriton, {}, 0,
     "TorchInductor reduction kernel: each tensor argument once"},
    {"triton_per_", kPrefix, kind::kMemory, kTriton, {}, 0,
     "TorchInductor persistent reduction kernel: each tensor argument once"},

    // ---- MoE: routing first (claims names containing "moe"), then whole layers ----
    {"topk", kInfix, "", kNoWork, {}, kNoCase, kRoutingSrc},
    {"align", kInfix, "", kNoWork, {}, kNoCase, kRoutingSrc},
    {"router", kInfix, "", kNoWork, {}, kNoCase, kRoutingSrc},
    {"moe_sorting", kInfix, "", kNoWork, {}, kNoCase, kRoutingSrc},
    {"moe_sum", kInfix, "", kNoWork, {}, kNoCase, kRoutingSrc},
    {"moe_forward", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase,
     "vLLM moe_forward(hidden_states [T,hidden], router_logits, layer_name) (moe_forward_shared "
     "also runs the shared experts); the rest as kMoeSrc"},
    {"fused_moe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"fused_experts", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"fusedmoe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"moe_runner", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"block_scale_moe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"cutlass_moe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"marlin_moe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"moe_wna16", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"deepep_moe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
    {"triton_kernel_moe", kInfix, kind::kMoe, kMoeLayer, {}, kNoCase, kMoeSrc},
};

}  // namespace

std::span<const OpRule> ServingOpRules() { return kRows; }

}  // namespace qprof::work
