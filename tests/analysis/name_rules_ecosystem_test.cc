// Name rules for the kernels LLM decode runs in the serving stacks (vLLM, SGLang,
// TensorRT-LLM, FlashInfer, triton_kernels, DeepGEMM, DeepEP, FlashMLA, ROCm libraries).
// Each family has a real name (from a published profile, issue or trace: noted "real")
// or a faithfully synthetic one (the library's kernel template and namespace as its
// source declares them, demangled the way cxxabi prints them: noted "synthetic"). The
// expected class, role and format are what the kernel does, stated here by hand.
#include "analysis/names/kernel_name.h"
#include "analysis/classify/name_rules.h"
#include "gtest/gtest.h"
#include "tests/analysis/name_rule_case.h"

namespace qprof::classify {
namespace {

// OpenAI triton_kernels, which vLLM and SGLang use for gpt-oss's MXFP4 MoE.
TEST(EcosystemNameRules, TritonKernelsMatmulOgsAndRouting) {
  // real: SGLang CI failure and vLLM decode profiles of gpt-oss
  Check({"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x256x128x1_swiglu", "tensor", "moe.experts", "mxfp4"});
  Check({"_p_matmul_ogs_NNT_bf16xbf16xmxfp4_16x256x128", "tensor", "moe.experts", "mxfp4"});
  // real: the renamed GEMM of newer triton_kernels serves dense layers too: class only
  Check({"_matmul_NNT_bf16xbf16xmxfp4_16x256x128x1_swiglu", "tensor", "gemm.dense", "mxfp4"});
  // real: routing kernels of triton_kernels (ROCm profile of gpt-oss)
  Check({"_topk_forward", "simt", "moe.router", "unknown"});
  Check({"_combined_routing_compute", "simt", "moe.router", "unknown"});
  Check({"_combined_routing_memset", "simt", "moe.router", "unknown"});
  Check({"_sum_bitmatrix_rows", "simt", "moe.router", "unknown"});
  Check({"_finalize_matmul_scatter", "simt", "moe.experts", "unknown"});
}

// TensorRT-LLM and FlashInfer block-scaled MoE (trtllm_fp4_block_scale_moe and friends).
TEST(EcosystemNameRules, TrtllmAndFlashInferMoe) {
  // real: TensorRT-LLM layer-wise benchmark keywords and FACTS.md
  Check({"bmm_E2m1_E2m1E2m1_Fp32_t128x8x512u2_s6_et64x8_m64x8x64_cga1x1x1_16dp256b_TN_transOut_schedS",
         "tensor", "moe.experts", "fp4"});
  Check({"bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x512_s4_et64x8_m64x8x64_cga1x1x1_16dp256b_TN_transOut_schedS",
         "tensor", "moe.experts", "fp4"});
  // FP8 batched GEMMs serve the MoE and MLA's BMMs alike: a GEMM; the context tells which.
  Check({"bmm_E4m3_E4m3E4m3_Fp32_t128x16x128_s5_et64x16_m64x16x32_cga1x1x1_16dp256b_TN_transOut_schedS",
         "tensor", "gemm.dense", "fp8"});
  // synthetic: moe::dev::routing and moe::dev::finalize templates of trtllm-gen
  Check({"void moe::dev::routing::routingRenormalize::routingIndicesHistogramScoresKernel<moe::dev::routing::routingRenormalize::KernelParams<float, __nv_bfloat16, 128, 8, true> >(moe::dev::routing::routingRenormalize::KernelParams<float, __nv_bfloat16, 128, 8, true>)",
         "simt", "moe.router", "bf16"});
  Check({"void moe::dev::routing::routingDeepSeek::routingIndicesClusterKernel<moe::dev::routing::routingDeepSeek::KernelParams<float, __nv_bfloat16, 256, true> >(moe::dev::routing::routingDeepSeek::KernelParams<float, __nv_bfloat16, 256, true>)",
         "simt", "moe.router", "bf16"});
  Check({"void moe::dev::finalize::finalizeKernel<moe::dev::finalize::KernelParams<__nv_bfloat16, __nv_bfloat16, false> >(moe::dev::finalize::KernelParams<__nv_bfloat16, __nv_bfloat16, false>)",
         "simt", "moe.experts", "bf16"});
  // synthetic: TensorRT-LLM CUTLASS fused MoE helpers
  Check({"void tensorrt_llm::kernels::cutlass_kernels::finalizeMoeRoutingKernel<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, (tensorrt_llm::kernels::cutlass_kernels::ScaleMode)1, true>(__nv_bfloat16 const*, __nv_bfloat16*)",
         "simt", "moe.experts", "bf16"});
  Check({"void tensorrt_llm::kernels::cutlass_kernels::expandInputRowsKernel<__nv_fp4_e2m1, __nv_fp4_e2m1, true>(__nv_fp4_e2m1 const*, __nv_fp4_e2m1*)",
         "memory", "moe.experts", "fp4"});
}

// SGLang and vLLM MoE kernels.
TEST(EcosystemNameRules, SglangAndVllmMoe) {
  Check({"fused_moe_kernel", "tensor", "moe.experts", "unknown"});  // real (Triton)
  Check({"_fused_moe_kernel", "tensor", "moe.experts", "unknown"});  // real (vLLM profile)
  // synthetic: vllm::moe templates (csrc/moe)
  Check({"void vllm::moe::moe_align_block_size_kernel<int>(int const*, int*, int*, int*, int, int, int, int, unsigned long, int*)",
         "simt", "moe.router", "unknown"});
  Check({"void vllm::moe::moe_sum_kernel<c10::BFloat16, 2>(c10::BFloat16*, c10::BFloat16 const*, int)",
         "simt", "moe.experts", "bf16"});
  Check({"void marlin_moe_wna16::Marlin<(vllm::ScalarTypeId)7, 256, 1, 8, 8, 4, 8>(int4 const*, int4 const*, int4*)",
         "tensor", "moe.experts", "unknown"});
  // synthetic: the CUTLASS kernel under cutlass_fp4_group_mm (grouped, block-scaled NVFP4)
  Check({"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm100ArrayTmaUmmaWarpSpecializedBlockScaled<3, 4, 2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> > >, cute::tuple<cute::C<128>, cute::C<128>, cute::C<256> >, cute::tuple<cutlass::float_e2m1_t, cutlass::float_ue4m3_t> > > >(cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> > >::Params)",
         "tensor", "moe.experts", "nvfp4"});
}

// DeepGEMM (GemmType printed as a number by the demangler) and DeepEP.
TEST(EcosystemNameRules, DeepGemmAndDeepEp) {
  // synthetic: deep_gemm impl templates; GemmType 2 = MGroupedMasked (common/types.hpp)
  Check({"void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 4096u, 7168u, 64u, 128u, 128u, 32u, (deep_gemm::GemmType)2, 3u, 128u, 128u, 1u, false, (deep_gemm::KernelType)1, cutlass::bfloat16_t>(float*, int*, unsigned int, unsigned int)",
         "tensor", "moe.experts", "fp8"});
  Check({"void deep_gemm::sm90_fp8_gemm_1d2d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, 0u, 4096u, 7168u, 64u, 128u, 128u, 1u, (deep_gemm::GemmType)0, 3u, 128u, 128u, 1u, false, (deep_gemm::KernelType)1, cutlass::bfloat16_t>(float*, int*, unsigned int, unsigned int)",
         "tensor", "gemm.dense", "fp8"});
  // real prefix (DeepSeek V4 decode profile): FP8 activations x MXFP4 weights
  Check({"void deep_gemm::sm100_fp8_fp4_gemm_1d1d_impl<(cute::UMMA::Major)0, (cute::UMMA::Major)0, (unsigned int)128, (deep_gemm::GemmType)1, cutlass::bfloat16_t>(int*, unsigned int)",
         "tensor", "moe.experts", "mxfp4"});
  // real prefix (TensorRT-LLM keywords): the sparse-attention indexer's logits
  Check({"void deep_gemm::sm100_fp8_paged_mqa_logits<64u, 128u, 32u>(unsigned int, float*)",
         "tensor", "attn.indexer", "fp8"});
  // synthetic: deep_ep templates (csrc/kernels/internode_ll.cu, intranode.cu)
  Check({"void deep_ep::internode_ll::dispatch<false, 3, 7168>(void*, float*, int*, long*, void*, int*, void*, int*, void*, void const*, long const*, int*, int*, int, int, int, int, int, int, int, bool)",
         "comm", "comm", "unknown"});
  Check({"void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(__nv_bfloat16*, float*, int4 const*)",
         "comm", "comm", "bf16"});
}

// Decode attention: FlashMLA, FlashInfer, vLLM paged / unified attention, TRT-LLM FMHA.
TEST(EcosystemNameRules, DecodeAttention) {
  // synthetic: FlashMLA dense decode and its combine; real: the sparse FP8 decode kernel
  Check({"void flash::flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true>(Flash_fwd_mla_params)",
         "tensor", "attn.dense", "bf16"});
  Check({"void sm100::decode::head64::flash_fwd_splitkv_mla_fp8_sparse_kernel<sm100::decode::head64::KernelTemplate<(ModelType)1> >(DecodingParams)",
         "tensor", "attn.sparse_mla", "fp8"});
  Check({"void flash::flash_fwd_mla_combine_kernel<cutlass::bfloat16_t, 512, 64, 128>(Flash_fwd_mla_params)",
         "simt", "attn.dense", "bf16"});
  // synthetic: FlashInfer decode (CUDA cores), MLA (mma) and the state merge
  Check({"void flashinfer::BatchDecodeWithPagedKVCacheKernel<(flashinfer::PosEncodingMode)0, 2u, 4u, 8u, 8u, 1u, 16u, flashinfer::DefaultAttention<false, false, false, false>, flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int>)",
         "simt", "attn.dense", "bf16"});
  Check({"void flashinfer::mla::BatchMLAPagedAttentionKernel<(flashinfer::MaskMode)0, 512u, 64u, flashinfer::mla::KernelTraits<2u, 64u, 64u, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, int> >(flashinfer::mla::Params)",
         "tensor", "attn.dense", "bf16"});
  Check({"void flashinfer::VariableLengthMergeStatesKernel<8u, 16u, 8u, 4u, __nv_bfloat16, __nv_bfloat16, int>(__nv_bfloat16*, float*, int*, __nv_bfloat16*, float*, unsigned int, unsigned int*)",
         "simt", "attn.dense", "bf16"});
  // synthetic: vLLM paged attention v2 and its reduction (CUDA cores)
  Check({"void vllm::paged_attention_v2_kernel<unsigned short, unsigned short, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float*, float*, unsigned short*)",
         "simt", "attn.dense", "unknown"});
  // ...and with an FP8 KV cache (Fp8KVCacheDataType 1 = kFp8E4M3, csrc/quantization/fp8)
  Check({"void vllm::paged_attention_v2_kernel<unsigned short, unsigned char, 128, 16, 128, (vllm::Fp8KVCacheDataType)1, false, 512>(float*, float*, unsigned short*)",
         "simt", "attn.dense", "fp8"});
  Check({"void vllm::paged_attention_v2_reduce_kernel<unsigned short, 128, 128, 512>(unsigned short*, float const*)",
         "simt", "attn.dense", "unknown"});
  // real prefixes (SGLang decode on MI300X): ROCm paged attention on MFMA, its reduction
  Check({"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, __hip_bfloat16, 128, 128, 256, 16, 4, false, 1>(__hip_bfloat16 const*)",
         "tensor", "attn.dense", "bf16"});
  Check({"void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 256, 1>(__hip_bfloat16*)",
         "simt", "attn.dense", "bf16"});
  // real: vLLM Triton unified attention (2D and 3D) and the 3D reduction
  Check({"kernel_unified_attention_2d", "tensor", "attn.dense", "unknown"});
  Check({"kernel_unified_attention_3d", "tensor", "attn.dense", "unknown"});
  Check({"reduce_segments", "simt", "attn.dense", "unknown"});
  // real prefixes (TensorRT-LLM keywords): trtllm-gen FMHA and its reduction
  Check({"fmhaSm100fKernel_QkvE4m3OBfloat16H128PagedKvSparseP64VarSeqQ8Kv128StaticKeepsAbForGen", "tensor", "attn.dense", "fp8"});
  Check({"void fmhaReductionKernel<__nv_bfloat16>(float*, __nv_bfloat16*)", "simt", "attn.dense", "bf16"});
}

// AMD: hipBLASLt/Tensile, composable_kernel and aiter matrix-core kernels.
TEST(EcosystemNameRules, AmdMatrixCoreKernels) {
  // real (PyTorch on MI300X): the MatrixInstruction MI16x16x1 makes it an MFMA GEMM
  Check({"Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMB_GLS0_ISA942_IU1_K1",
         "tensor", "gemm.dense", "unknown"});
  Check({"Cijk_Ailk_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI4x4x4_SN_LDSB1_ISA942", "tensor", "gemm.dense", "unknown"});
  // synthetic: a Tensile kernel with no MatrixInstruction: a GEMM, class not told
  Check({"Cijk_Ailk_Bljk_SB_MT64x64x8_SN_GRVW1_ISA942", "", "gemm.dense", "unknown"});
  // synthetic: composable_kernel XDL GEMM and ck_tile FMHA / GEMM
  Check({"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::tensor_layout::gemm::RowMajor, ck::tensor_layout::gemm::ColumnMajor, ck::half_t>, true, (ck::InMemoryDataOperationEnum)0, 1, (ck::TailNumber)1>(ck::GridwiseGemm_xdl_cshuffle_v3::Argument)",
         "tensor", "gemm.dense", "fp16"});
  Check({"void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t, ck_tile::bf16_t> > > >(ck_tile::FmhaFwdKernel::Kargs)",
         "tensor", "attn.dense", "bf16"});
  Check({"void ck_tile::kentry<256, 1, ck_tile::GemmKernel<ck_tile::GemmPipelineAgBgCrCompV3<ck_tile::bf16_t> > >(ck_tile::GemmKernelArgs)",
         "tensor", "gemm.dense", "bf16"});
  // synthetic: aiter assembly fused MoE and MLA decode
  Check({"aiter::fmoe_bf16_blockscaleFp8_g1u1_vs_silu_1tg_ps_32x256", "tensor", "moe.experts", "fp8"});
  Check({"aiter::mla_dec_stage1_bf16_a16w16_subQ16_mqa16", "tensor", "attn.dense", "bf16"});
}

}  // namespace
}  // namespace qprof::classify
