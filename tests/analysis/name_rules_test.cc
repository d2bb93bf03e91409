// One test per name rule family, including the traps in FACTS.md.
#include "analysis/classify/name_rules.h"

#include "analysis/names/kernel_name.h"
#include "gtest/gtest.h"
#include "tests/analysis/name_rule_case.h"

namespace qprof::classify {
namespace {

TEST(NameRules, Glob) {
  EXPECT_TRUE(GlobMatch("*nccl*", "ncclKernel_AllReduce"));
  EXPECT_TRUE(GlobMatch("nvjet*", "NVJET_tst_192"));
  EXPECT_FALSE(GlobMatch("nvjet*", "x_nvjet"));
  EXPECT_TRUE(GlobMatch("sm*_xmma_*", "sm90_xmma_gemm"));
  EXPECT_TRUE(GlobMatch("a?c", "abc"));
  EXPECT_FALSE(GlobMatch("a?c", "ac"));
  EXPECT_TRUE(GlobMatch("*", ""));
}

TEST(NameRules, XmmaFfmaTrapIsSimt) {
  Check({"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
         "simt", "gemm.dense", "fp32"});
}

TEST(NameRules, TensorCoreFamilies) {
  Check({"nvjet_tst_192x192_64x4_2x1_v_bz_coopB_bias_TNN", "tensor", "gemm.dense", "unknown"});
  Check({"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
         "tensor", "gemm.dense", "bf16"});
  Check({"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)",
         "tensor", "gemm.dense", "fp32"});
  Check({"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "tensor", "gemm.dense", "bf16"});
  Check({"ampere_fp16_s16816gemm_fp16_64x64_sliced1x2_ldg8_f2f_tn", "tensor", "gemm.dense", "fp16"});
  Check({"void marlin::Marlin<256, 1, 8, 8, 4, 8>(int4 const*, int4 const*, int4*, int4 const*, int, int, int, int*)",
         "tensor", "gemm.dense", "unknown"});
  Check({"void marlin_moe_wna16::Marlin<(vllm::ScalarTypeId)7>(...)", "tensor", "moe.experts", "unknown"});
  Check({"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128, (int)64, (int)4, (bool)0, (bool)0, cutlass::bfloat16_t>>(Flash_fwd_params)",
         "tensor", "attn.dense", "bf16"});
  Check({"fmha_v2_flash_attention_fp16_64_32_S_128_sm80_kernel", "tensor", "attn.dense", "fp16"});
  Check({"volta_h884gemm_64x64_ldg8_nn", "tensor", "gemm.dense", "fp16"});
}

TEST(NameRules, SimtFamilies) {
  Check({"ampere_sgemm_32x32_sliced1x4_tn", "simt", "gemm.dense", "fp32"});
  Check({"volta_sgemm_128x32_nt", "simt", "gemm.dense", "fp32"});
  Check({"cutlass_simt_sgemm_128x128_8x2_nn_align1", "simt", "gemm.dense", "fp32"});
  Check({"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
         "simt", "elementwise", "fp32"});
  Check({"void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<float>>(T3)", "simt", "elementwise", "fp32"});
  Check({"triton_poi_fused_add_cos_sin_0", "simt", "elementwise", "unknown"});
  Check({"void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, float, int, int)",
         "simt", "norm", "bf16"});
  Check({"_mxfp4_slot_gemv_kernel", "simt", "moe.experts", "mxfp4"});
}

TEST(NameRules, LibraryHelpers) {
  Check({"void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int>, int*>(int*, int)", "simt", "other", "unknown"});
  Check({"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, false, false, 7, cublasGemvParamsEx<int, float const, float const, float> >(cublasGemvParamsEx<int, float const, float const, float>)",
         "simt", "gemm.dense", "fp32"});
  Check({"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(int)",
         "memory", "embedding", "bf16"});
  Check({"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>(long, long, float const*)", "simt", "norm", "fp32"});
  Check({"void at::native::(anonymous namespace)::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4, bool>(int)", "simt", "elementwise", "fp32"});
}

TEST(NameRules, CommunicationTraps) {
  Check({"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "comm", "comm", "fp32"});
  Check({"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<(unsigned long)4096>)", "comm", "comm", "unknown"});
  Check({"void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, c10::BFloat16*, int, int)",
         "comm", "comm", "bf16"});
  Check({"void multimem_all_reduce_kernel<__nv_bfloat16>(...)", "comm", "comm", "bf16"});
}

TEST(NameRules, MemoryAndRoles) {
  Check({"void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>(int)",
         "memory", "memory", "fp32"});
  Check({"void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, std::array<char *, (unsigned long)1>>(int, T2, T3)",
         "memory", "memory", "fp32"});
  Check({"fused_moe_kernel", "tensor", "moe.experts", "unknown"});
  Check({"void moe::topkGatingSoftmax<8, 256, 4, 16>(float const*, bool const*, float*, int, int*, int*, int, int, int)",
         "simt", "moe.router", "unknown"});
  Check({"void flash_mla::sparse_mla_decode_kernel<cutlass::bfloat16_t>(...)", "tensor", "attn.sparse_mla", "bf16"});
  Check({"lightning_indexer_kernel", "", "attn.indexer", "unknown"});
  Check({"void split_embedding_codegen_forward_unweighted_kernel<float, float, float, long, 2ul>(int)", "simt", "embedding", "fp32"});
}

TEST(NameRules, FlashInferIsNotAlwaysAttention) {
  Check({"void flashinfer::norm::FusedAddRMSNormKernel<8u, __nv_bfloat16>(__nv_bfloat16*)", "simt", "norm", "bf16"});
  Check({"void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u>(float*)", "simt", "sampling", "unknown"});
  // FlashInfer's decode kernel (use_tensor_cores=False) does its dot products on CUDA cores.
  Check({"void flashinfer::BatchDecodeWithPagedKVCacheKernel<128u>(float*)", "simt", "attn.dense", "unknown"});
}

TEST(NameRules, ShortCutlassNamesMeanNothing) {
  Check({"Kernel2", "", "", "unknown"});
  Check({"device_kernel", "", "", "unknown"});
  // ...but their demangled names do.
  Check({"void cutlass::device_kernel<flash::FlashAttnFwdSm90<cutlass::bfloat16_t>>(flash::Params)", "tensor", "attn.dense", "bf16"});
}

TEST(NameRules, FormatsFromNames) {
  EXPECT_EQ(MatchNameRules("gemm_nvfp4_x").format, "nvfp4");
  EXPECT_EQ(MatchNameRules("mxfp4_gemv").format, "mxfp4");
  EXPECT_EQ(MatchNameRules("bmm_e2m1_ue8m0").format, "mxfp4");
  EXPECT_EQ(MatchNameRules("sm90_xmma_gemm_e4m3e4m3_f32").format, "fp8");
  EXPECT_EQ(MatchNameRules("x_bf16_y").format, "bf16");
  EXPECT_EQ(MatchNameRules("x_f16_y").format, "fp16");
  EXPECT_EQ(MatchNameRules("gemm_f32f32").format, "fp32");
  EXPECT_EQ(MatchNameRules("gemm_int8_x").format, "int8");
  EXPECT_EQ(MatchNameRules("plain").format, "unknown");
}

}  // namespace
}  // namespace qprof::classify
