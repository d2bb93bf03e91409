// Name rules for the kernel families of the public traces qprof is tried on (TraceLens's
// MI300X, MI210, H100 and B200 traces, SGLang/vLLM decode on MI300X, xDiT on MI300X, a
// DeepSeek training trace on H800), and the false friends: kernels whose names carry a
// family's word ("flash", "all_reduce", "tensorop") but do another kind of work.
// "real" names are quoted from those traces as their profiler printed them; "synthetic" ones
// follow the library's source (template, namespace) as cxxabi demangles it. Class, role and
// format are what each kernel does, stated here by hand.
#include "analysis/classify/name_rules.h"
#include "analysis/names/kernel_name.h"
#include "gtest/gtest.h"
#include "tests/analysis/name_rule_case.h"

namespace qprof::classify {
namespace {

// ROCm Triton attention and SageAttention (MI300X model and xDiT traces).
TEST(FamilyNameRules, TritonAndSageAttention) {
  Check({"attn_fwd", "tensor", "attn.dense", "unknown"});            // real
  Check({"sage_fwd", "tensor", "attn.dense", "unknown"});            // real
  Check({"sage_quant_kernel", "simt", "attn.dense", "unknown"});     // real
  // A longer name that only contains the word is not the family.
  Check({"my_attn_fwd_helper", "", "attn.dense", "unknown"});
}

// MIOpen: implicit-GEMM convolutions forward, backward data and backward weights, its
// transposes, im2col, tensor ops and batch norm (MI210 and MI300X traces).
TEST(FamilyNameRules, MiOpen) {
  // real
  Check({"igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2_ta1x4x1x1_1x8x1x32_tb1x4x8x1_1x8x1x32_gkgs",
         "tensor", "gemm.dense", "bf16"});
  Check({"igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_tb1x8x1x2_1x4x1x64_mh_gkgs",
         "tensor", "gemm.dense", "bf16"});
  Check({"igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2_ta1x4x1x4_1x4x1x64_tb1x4x1x2_1x4x1x64_gkgs",
         "tensor", "gemm.dense", "bf16"});
  // synthetic: the non-XDLOPS generation names no matrix instruction
  Check({"igemm_fwd_gtc_gfx1030_nhwc_fp16_bx0_ex1_bt128x128x16", "", "gemm.dense", "fp16"});
  Check({"batched_transpose_16x64_pack_1x4_ediv_1x2_half", "memory", "memory", "fp16"});  // real
  Check({"transpose_CNHW2NCHW_V2_2D_WG_off64", "memory", "memory", "unknown"});          // real
  Check({"Im2d2Col_v2", "memory", "memory", "unknown"});                                 // real
  // real: MIOpen's elementwise tensor ops, which the old *tensorop* rule took for CUTLASS
  Check({"SubTensorOpWithScalar1d", "simt", "elementwise", "unknown"});
  Check({"SubTensorOpWithCastTensor1d", "simt", "elementwise", "unknown"});
  Check({"Op2dTensorGeneric", "simt", "elementwise", "unknown"});  // synthetic (MIOpenTensorKernels)
  Check({"MIOpenBatchNormFwdTrainSpatialMeanVariance", "simt", "norm", "unknown"});  // real
  Check({"MIOpenBatchNormBwdSpatial", "simt", "norm", "unknown"});                   // real
}

// composable_kernel and rocPRIM (MI300X traces).
TEST(FamilyNameRules, ComposableKernelAndRocprim) {
  // real: the profiler's mangled name, cut before its end so no demangler reads it
  Check({"_ZN2ck16tensor_operation6device12_GLOBAL__N_139kernel_grouped_conv_fwd_xdl_cshuffle_v3INS_28GridwiseGemm_xdl_cshuffle_v3INS_13tensor_layout4gemm8RowMajorENS6_11ColumnMajorES7_ttftt",
         "tensor", "gemm.dense", "unknown"});
  // synthetic: the same family demangled
  Check({"void ck::tensor_operation::device::(anonymous namespace)::kernel_grouped_conv_fwd_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor> >(int)",
         "tensor", "gemm.dense", "unknown"});
  Check({"void rocprim::ROCPRIM_400400_NS::detail::init_lookback_scan_state_kernel<rocprim::ROCPRIM_400400_NS::detail::lookback_scan_state<unsigned long, false, true> >(int)",
         "simt", "other", "unknown"});  // real prefix
  // real (SGLang on MI300X, xDiT): aiter's CK-based attention and its fused add-RMSNorm
  Check({"aiter::fmha_fwd_hd128_bf16_rtz", "tensor", "attn.dense", "bf16"});
  Check({"_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib",
         "simt", "norm", "bf16"});
}

// PyTorch's batch and group norm kernels and the at::native fallback (MI210, normalisation
// and xDiT traces).
TEST(FamilyNameRules, PyTorchNative) {
  // real
  Check({"void at::native::batch_norm_backward_kernel<c10::BFloat16, c10::BFloat16, float, int>(at::GenericPackedTensorAccessor<c10::BFloat16 const, 3ul, at::DefaultPtrTraits, int>)",
         "simt", "norm", "bf16"});
  Check({"void at::native::batch_norm_collect_statistics_kernel<at::native::Var, float, float, float, int>(int)",
         "simt", "norm", "fp32"});
  Check({"void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float>(long, float, float const*, float*, float*)",
         "simt", "norm", "fp32"});
  Check({"void at::native::(anonymous namespace)::ComputeInternalGradientsCUDAKernel<float>(long, float const*, float const*, float*, float*)",
         "simt", "norm", "fp32"});
  // real: gathers and upsampling move bytes; other functors run on CUDA cores
  Check({"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
         "memory", "elementwise", "unknown"});
  Check({"void at::native::(anonymous namespace)::upsample_nearest2d_out_frame<c10::BFloat16, &at::native::nearest_neighbor_compute_source_index>(int)",
         "memory", "elementwise", "bf16"});
  Check({"void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::TensorInfo<float, unsigned int>)",
         "simt", "elementwise", "fp32"});
  // real: a norm kernel of another library
  Check({"void (anonymous namespace)::groupnorm_kernel_dispatch_down<__hip_bfloat16, 1024u>(int)",
         "simt", "norm", "bf16"});
}

// DeepEP in its public and DeepSeek's in-house spelling, DeepSeek's grouped GEMMs and its
// training kernels (DeepSeek's H800 trace).
TEST(FamilyNameRules, DeepSeekInHouse) {
  // real
  Check({"void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*, float*, bool const*)",
         "comm", "comm", "bf16"});
  Check({"void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*)", "comm", "comm", "unknown"});
  Check({"void dpsk::ep::internode::notify_dispatch<false, 8>(int const*, long*, int)", "comm", "comm", "unknown"});
  Check({"void dpsk::ep::internode::cached_notify<false>(int, int, int, int, int*)", "comm", "comm", "unknown"});
  // real: the layout kernel counts tokens, it sends nothing
  Check({"void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)",
         "simt", "moe.router", "unknown"});
  // synthetic: the public spelling (deep_ep/csrc/kernels/layout.cu)
  Check({"void deep_ep::layout::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)",
         "simt", "moe.router", "unknown"});
  // real: FP8 grouped GEMMs, one GEMM per expert, and their helpers
  Check({"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel>(dpsk::grouped_gemm::cuda::m_grouped_fp8_ptp128c::GemmKernel::Params)",
         "tensor", "moe.experts", "fp8"});
  Check({"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel>(dpsk::grouped_gemm::cuda::fp8_dptp128c_acc::GemmKernel::Params)",
         "tensor", "moe.experts", "fp8"});
  Check({"void dpsk::grouped_gemm::cuda::utils::transpose<512, 128, 4, 4>(unsigned char const*, unsigned char*, int, int, int, int)",
         "memory", "moe.experts", "unknown"});
  // real: the training kernels around them
  Check({"void cuda::per_token_cast_to_fp8_with_channels<__nv_bfloat16, 128, false, 128, false>(__nv_bfloat16 const*, int)",
         "simt", "elementwise", "fp8"});
  Check({"void cuda::reduce_fused_impl<__nv_bfloat16, false, false>(int4 const*, float const*, int const*)",
         "simt", "moe.experts", "bf16"});
  Check({"void cuda::topk_sum_and_topk_idx<16, 64>(float const*, long*, int, int, int, int, int)",
         "simt", "moe.router", "unknown"});
}

// Serving-stack helpers of the SGLang, vLLM and B200 traces.
TEST(FamilyNameRules, ServingHelpers) {
  // real (SGLang on MI300X, mangled)
  Check({"_ZN7sgl_hip10activation18act_and_mul_kernelI14__hip_bfloat16TnPFT_RKS3_EXadL_Z4siluIS2_ES3_S5_EEEEvPS3_PS4_i",
         "simt", "elementwise", "bf16"});
  Check({"void rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)", "simt", "elementwise", "bf16"});
  Check({"void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*)",
         "simt", "elementwise", "bf16"});
  Check({"void (anonymous namespace)::store_kvcache<2048l, 4, false, long>(int)", "memory", "attn.dense", "unknown"});
  Check({"void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*)",
         "simt", "elementwise", "fp8"});
  Check({"void tensorrt_llm::kernels::quantize_with_block_size<(tensorrt_llm::BlockScaleQuantizationType)2, __nv_bfloat16, 32, true>(int)",
         "simt", "elementwise", "bf16"});
  Check({"epilogue::impl::globalKernel<float, float, float, true, true>", "simt", "gemm.dense", "fp32"});
}

// False friends: the word is in the name, the family is not.
TEST(FamilyNameRules, FalseFriendsOfFlash) {
  // real (vLLM on MI300X and B200): KV-cache writes; the FP8 variant stores an FP8 cache
  Check({"void vllm::reshape_and_cache_flash_kernel<__hip_bfloat16, __hip_bfloat16, (vllm::Fp8KVCacheDataType)0>(__hip_bfloat16 const*)",
         "memory", "attn.dense", "unknown"});
  Check({"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>(__nv_bfloat16 const*)",
         "memory", "attn.dense", "fp8"});
  // real (FlashAttention 3 as nsys prints it): the scheduler prologue
  Check({"flash::prepare_varlen_num_blocks_kernel(int, int, int, const int *, const int *, const int *, const int *, const int *, const int *, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int *, int *, bool)",
         "simt", "attn.dense", "unknown"});
  // real (DeepSeek trace): FA3's backward preprocess and dQ conversion are not MMA kernels...
  Check({"void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<64>, cute::C<192> >, cutlass::bfloat16_t> >(int)",
         "simt", "attn.dense", "bf16"});
  Check({"void cutlass::device_kernel<flash::FlashAttnBwdPostprocessConvertdQ<cute::tuple<cute::C<64>, cute::C<192> >, cutlass::bfloat16_t, float> >(int)",
         "simt", "attn.dense", "bf16"});
  // ...its backward and forward are
  Check({"void cutlass::device_kernel<flash::FlashAttnBwd<flash::CollectiveMainloopBwd<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > > > >(int)",
         "tensor", "attn.dense", "unknown"});
  Check({"void flash::compute_attn_ws<Flash_fwd_kernel_traits<192, 128, 128, 12, 2, false, 1, cutlass::bfloat16_t, 128>, true>(int)",
         "tensor", "attn.dense", "bf16"});
  Check({"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t> >(int)",
         "tensor", "attn.dense", "bf16"});
  // real (SGLang): index preparation for FlashInfer
  Check({"create_flashinfer_kv_indices_triton", "simt", "attn.dense", "unknown"});
  // real (Inductor): kernels fused around SDPA: CUDA-core work; the ops they fused are
  // attention's, which the role may read
  Check({"triton_poi_fused__scaled_dot_product_flash_attention_cat_transpose_view_10", "simt", "attn.dense", "unknown"});
  Check({"triton_red_fused__to_copy_add_addmm_as_strided_fmha_v3_fwd_mean_mul_neg_pow_rsqrt_stack_unbind_unsqueeze_view_24",
         "simt", "attn.dense", "unknown"});
  // real (vLLM on MI300X): a pad fused inside moe_forward: SIMT, part of the MoE layer
  Check({"triton_poi_fused_constant_pad_nd_moe_forward_0", "simt", "moe.experts", "unknown"});
  // real (SD-3.5 / Flux): "_to_copy" is a dtype cast and "addmm" a GEMM's epilogue fused
  // in: elementwise work, not a copy kernel's role
  Check({"triton_per_fused__to_copy_addmm_mean_pow_view_7", "simt", "elementwise", "unknown"});
}

TEST(FamilyNameRules, FalseFriendsOfCollectivesAndTensorOps) {
  // real (B200 vLLM trace): an Inductor kernel fused from an all-reduce's mask arithmetic
  Check({"triton_poi_fused_add_all_reduce_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0",
         "simt", "elementwise", "unknown"});
  // synthetic (torch symmetric memory, TensorRT-LLM): collectives that are kernels
  Check({"void c10d::symmetric_memory::two_shot_all_reduce_kernel<c10::BFloat16, 8>(int)", "comm", "comm", "bf16"});
  Check({"void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 8>(int)", "comm", "comm", "bf16"});
  // CUTLASS's spelling is tensor-core work; MIOpen's SubTensorOp (above) is not
  Check({"void cutlass::Kernel2<cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1>(int)",
         "tensor", "gemm.dense", "bf16"});
  Check({"cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>",
         "tensor", "gemm.dense", "bf16"});
  // real (shared A100 trace): "fbgemm" and "pooled" are no GEMM and no pooling layer
  Check({"void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*)", "memory", "embedding", "unknown"});
  Check({"void permute_pooled_embs_kernel<float>(float const*, long const*)", "memory", "embedding", "fp32"});
}

}  // namespace
}  // namespace qprof::classify
