// Which launch of an op call gets its work (analysis/work/launch_work.h), on hand-made
// launch-context tables.
#include "analysis/work/launch_work.h"

#include "gtest/gtest.h"

namespace qprof::work {
namespace {

class Tables {
 public:
  Tables() {
    t_.add_stacks();       // [0] empty
    t_.add_kernel_sets();  // [0] not recorded
  }
  uint32_t Frame(const std::string& name, const std::string& kind, const std::string& dims = "",
                 const std::string& types = "", const std::string& concrete = "") {
    proto::LaunchFrame* f = t_.add_frames();
    f->set_name(name);
    f->set_kind(kind);
    f->set_input_dims(dims);
    f->set_input_types(types);
    f->set_concrete_inputs(concrete);
    return static_cast<uint32_t>(t_.frames_size() - 1);
  }
  uint32_t Stack(std::vector<uint32_t> frames) {
    proto::LaunchStack* s = t_.add_stacks();
    for (uint32_t f : frames) s->add_frames(f);
    return static_cast<uint32_t>(t_.stacks_size() - 1);
  }
  uint32_t Set(std::vector<std::tuple<std::string, std::string, uint32_t>> kernels) {
    proto::LaunchKernelSet* s = t_.add_kernel_sets();
    for (const auto& [k, op, n] : kernels) {
      s->add_kernels(k);
      s->add_inner_ops(op);
      s->add_launches(n);
    }
    return static_cast<uint32_t>(t_.kernel_sets_size() - 1);
  }
  const proto::LaunchContextStats& stats() const { return t_; }

 private:
  proto::LaunchContextStats t_;
};

proto::LaunchContext Ctx(uint32_t stack, uint32_t inner = 0, uint32_t outer = 0) {
  proto::LaunchContext c;
  c.set_stack(stack);
  c.set_op_kernels(inner);
  c.set_outer_op_kernels(outer);
  return c;
}

constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

TEST(LaunchWork, TheGemmGetsTheCallsWorkItsHelpersNone) {
  Tables t;
  const uint32_t py = t.Frame("model.py(10): forward", "python_function");
  const uint32_t linear = t.Frame("aten::linear", "cpu_op", "[[4,64],[32,64],[]]",
                                  R"(["c10::BFloat16","c10::BFloat16",""])");
  const uint32_t mm = t.Frame("aten::mm", "cpu_op", "[[4,64],[64,32]]",
                              R"(["c10::BFloat16","c10::BFloat16"])");
  const uint32_t stack = t.Stack({py, linear, mm});
  const uint32_t set = t.Set({{kGemm, "aten::mm", 1}, {"splitKreduce_kernel", "aten::mm", 1}});
  LaunchWorkResult r = ResolveLaunchWork(t.stats(), Ctx(stack, set, set), kGemm);
  ASSERT_EQ(r.outcome, LaunchOutcome::kWork);
  EXPECT_DOUBLE_EQ(r.work.work.flops, 2.0 * 4 * 32 * 64);  // the innermost op's (mm) shapes
  EXPECT_EQ(r.work.workers, 1u);
  EXPECT_DOUBLE_EQ(r.work.share, 1);
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(stack, set, set), "splitKreduce_kernel").outcome,
            LaunchOutcome::kNone);
  // Two GEMM kernels in one call share the call's work.
  const uint32_t two = t.Set({{kGemm, "aten::mm", 2}});
  LaunchWorkResult half = ResolveLaunchWork(t.stats(), Ctx(stack, two, two), kGemm);
  EXPECT_DOUBLE_EQ(half.work.share, 0.5);
  EXPECT_DOUBLE_EQ(half.work.work.flops, 2.0 * 4 * 32 * 64 / 2);
  // A graph launch's context is not the kernel's op: no work.
  proto::LaunchContext g = Ctx(stack, set, set);
  g.set_graph_launch(true);
  EXPECT_EQ(ResolveLaunchWork(t.stats(), g, kGemm).outcome, LaunchOutcome::kNone);
}

TEST(LaunchWork, InvalidShapesAndUnknownOps) {
  Tables t;
  const uint32_t bad = t.Frame("aten::mm", "cpu_op", "[[4,64],[65,32]]", R"(["float","float"])");
  LaunchWorkResult r = ResolveLaunchWork(t.stats(), Ctx(t.Stack({bad})), kGemm);
  EXPECT_EQ(r.outcome, LaunchOutcome::kInvalid);
  EXPECT_NE(r.error.find("inner dimensions differ"), std::string::npos);
  const uint32_t neg = t.Frame("aten::mm", "cpu_op", "[[4,-64],[64,32]]", R"(["float","float"])");
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(t.Stack({neg})), kGemm).outcome, LaunchOutcome::kInvalid);
  const uint32_t other = t.Frame("aten::index_put_", "cpu_op", "[[4,64]]", R"(["float"])");
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(t.Stack({other})), "k").outcome, LaunchOutcome::kNone);
  const uint32_t noshapes = t.Frame("aten::mm", "cpu_op");
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(t.Stack({noshapes})), kGemm).outcome, LaunchOutcome::kNone);
}

TEST(LaunchWork, NsysSizesTakeTheKernelNamesDtype) {
  Tables t;
  const uint32_t f = t.Frame("aten::mm, sizes = [[128, 256], [256, 512]]", "nvtx");
  const uint32_t stack = t.Stack({t.Frame("forward", "nvtx"), f});
  LaunchWorkResult r = ResolveLaunchWork(t.stats(), Ctx(stack), kGemm);
  ASSERT_EQ(r.outcome, LaunchOutcome::kWork);
  EXPECT_DOUBLE_EQ(r.work.work.flops, 2.0 * 128 * 512 * 256);
  EXPECT_DOUBLE_EQ(r.work.work.bytes, 2.0 * (128 * 256 + 256 * 512 + 128 * 512));
  EXPECT_EQ(r.work.workers, 0u);  // no per-call kernel list on nsys: one worker assumed
  LaunchWorkResult nodtype = ResolveLaunchWork(t.stats(), Ctx(stack), "nvjet_tst_64x8_64x16_4x1_v_bz_TNT");
  ASSERT_EQ(nodtype.outcome, LaunchOutcome::kWork);
  EXPECT_FALSE(nodtype.work.work.bytes_known);
  EXPECT_DOUBLE_EQ(nodtype.work.work.flops, 2.0 * 128 * 512 * 256);
}

TEST(LaunchWork, MoeCallsWaitForTheModel) {
  Tables t;
  const uint32_t moe = t.Frame("vllm::moe_forward", "cpu_op", "[[3,64],[3,8],[]]",
                               R"(["c10::BFloat16","c10::BFloat16","str"])");
  const uint32_t mm = t.Frame("aten::mm", "cpu_op", "[[3,64],[64,32]]",
                              R"(["c10::BFloat16","c10::BFloat16"])");
  const uint32_t direct = t.Stack({moe});
  const uint32_t shared = t.Stack({moe, mm});
  // The call launched routing, two expert GEMMs, an activation and a shared expert's mm.
  const uint32_t set = t.Set({{"topkGatingSoftmax", "vllm::moe_forward", 1},
                              {"fused_moe_kernel", "vllm::moe_forward", 2},
                              {"act_and_mul_kernel", "vllm::moe_forward", 1},
                              {kGemm, "aten::mm", 1}});
  LaunchWorkResult r = ResolveLaunchWork(t.stats(), Ctx(direct, set, set), "fused_moe_kernel");
  ASSERT_EQ(r.outcome, LaunchOutcome::kWork);
  EXPECT_TRUE(r.work.needs_model);
  EXPECT_EQ(r.work.workers, 2u);  // the mm has its own rule; routing and activation are helpers
  EXPECT_DOUBLE_EQ(r.work.moe_tokens, 3);
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(direct, set, set), "topkGatingSoftmax").outcome,
            LaunchOutcome::kNone);
  // The shared expert's mm keeps the mm's work.
  LaunchWorkResult m = ResolveLaunchWork(t.stats(), Ctx(shared, 0, set), kGemm);
  ASSERT_EQ(m.outcome, LaunchOutcome::kWork);
  EXPECT_FALSE(m.work.needs_model);
  auto shape = ParseHfConfig(R"({"model_type":"deepseek_v3","hidden_size":64,"moe_intermediate_size":32,
      "n_routed_experts":8,"num_experts_per_tok":2,"quantization_config":{"quant_method":"mxfp4"}})",
                             "small.json");
  ASSERT_TRUE(shape.ok()) << shape.status();
  LaunchWork w = r.work;
  ASSERT_TRUE(ApplyModelShape(*shape, &w).ok());
  EXPECT_DOUBLE_EQ(w.work.flops, 2.0 * 3 * 2 * 3 * 64 * 32 / 2);  // half of the call's
  EXPECT_FALSE(w.needs_model);
  // A model whose hidden size differs from the call's does not apply.
  ModelShape other = *shape;
  other.hidden = 128;
  LaunchWork w2 = r.work;
  EXPECT_FALSE(ApplyModelShape(other, &w2).ok());
  // Without a kernel list (nsys) an MoE call gives no work.
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(direct), "fused_moe_kernel").outcome, LaunchOutcome::kNone);
}

TEST(LaunchWork, DecodeAttentionTakesTheStepAnnotationOnItsStack) {
  Tables t;
  // vLLM's gpt-oss decode: 32 sequences, 55086 keys; the unified attention kernel and its
  // split-KV reduction.
  const uint32_t step = t.Frame(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)",
      "user_annotation");
  const uint32_t attn = t.Frame("vllm::unified_attention_with_output", "cpu_op",
                                "[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]]",
                                R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","","","","c10::BFloat16"])");
  const uint32_t set = t.Set({{"kernel_unified_attention_3d", "vllm::unified_attention_with_output", 1},
                              {"reduce_segments", "vllm::unified_attention_with_output", 1}});
  const double flops = 4.0 * 64 * 55086 * 64;
  LaunchWorkResult r =
      ResolveLaunchWork(t.stats(), Ctx(t.Stack({step, attn}), set, set), "kernel_unified_attention_3d");
  ASSERT_EQ(r.outcome, LaunchOutcome::kWork) << r.error;
  EXPECT_DOUBLE_EQ(r.work.work.flops, flops);
  EXPECT_EQ(r.work.workers, 1u);  // reduce_segments is the split-KV reduction: a helper
  EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(t.Stack({step, attn}), set, set), "reduce_segments").outcome,
            LaunchOutcome::kNone);
  // Without the annotation: no work, and why.
  LaunchWorkResult none = ResolveLaunchWork(t.stats(), Ctx(t.Stack({attn}), set, set), "kernel_unified_attention_3d");
  EXPECT_EQ(none.outcome, LaunchOutcome::kInvalid);
  EXPECT_NE(none.error.find("key lengths are not recorded"), std::string::npos) << none.error;
  // A plain annotation nested inside the detailed one (SGLang's step[...] inside the
  // plugin's execute_...) does not hide the sums.
  const uint32_t plain = t.Frame("step[DECODE bs=32]", "user_annotation");
  LaunchWorkResult nested =
      ResolveLaunchWork(t.stats(), Ctx(t.Stack({step, plain, attn}), set, set), "kernel_unified_attention_3d");
  ASSERT_EQ(nested.outcome, LaunchOutcome::kWork) << nested.error;
  EXPECT_DOUBLE_EQ(nested.work.work.flops, flops);
  // A step given by the caller (a graph replay's) wins over the stack's.
  auto other = ParseIterationAnnotation(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk1000sqsq32sqsk1000)");
  ASSERT_TRUE(other.has_value());
  LaunchWorkResult given = ResolveLaunchWork(t.stats(), Ctx(t.Stack({step, attn}), set, set),
                                             "kernel_unified_attention_3d", &*other);
  ASSERT_EQ(given.outcome, LaunchOutcome::kWork);
  EXPECT_DOUBLE_EQ(given.work.work.flops, 4.0 * 64 * 1000 * 64);
}

TEST(LaunchWork, MiopenConvolutionsWorkIsTheirGemmKernels) {
  Tables t;
  // convolution_backward on MI300X: grad input (igemm_bwd) and grad weight (igemm_wrw), each
  // the forward's FLOPs, around MIOpen's fills and layout transposes.
  const uint32_t bwd = t.Frame(
      "aten::convolution_backward", "cpu_op", "[[10,512,7,7],[10,512,7,7],[512,512,3,3],[],[],[],[],[],[],[],[]]",
      R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","ScalarList","Scalar","ScalarList","Scalar","ScalarList"])",
      R"(["","","","[0]","[1, 1]","[1, 1]","[1, 1]","False","[0, 0]","1","[True, True, False]"])");
  const char* dgrad = "igemm_bwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2";
  const char* wgrad = "igemm_wrw_gtcx3_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2";
  const uint32_t set = t.Set({{"SubTensorOpWithScalar1d", "aten::convolution_backward", 2},
                              {"batched_transpose_32x32_half", "aten::convolution_backward", 4},
                              {"transpose_NCHW2CNHW_V2_2D_WG_off64", "aten::convolution_backward", 1},
                              {dgrad, "aten::convolution_backward", 1},
                              {wgrad, "aten::convolution_backward", 1}});
  const uint32_t stack = t.Stack({bwd});
  const double fwd = 2.0 * 10 * 512 * 512 * 9 * 49;
  for (const char* k : {dgrad, wgrad}) {
    LaunchWorkResult r = ResolveLaunchWork(t.stats(), Ctx(stack, set, set), k);
    ASSERT_EQ(r.outcome, LaunchOutcome::kWork) << r.error;
    EXPECT_EQ(r.work.workers, 2u);
    EXPECT_DOUBLE_EQ(r.work.work.flops, fwd);  // half of grad input + grad weight
  }
  for (const char* helper : {"SubTensorOpWithScalar1d", "batched_transpose_32x32_half",
                             "transpose_NCHW2CNHW_V2_2D_WG_off64"}) {
    EXPECT_EQ(ResolveLaunchWork(t.stats(), Ctx(stack, set, set), helper).outcome, LaunchOutcome::kNone);
  }
}

// Composable Kernel names carry helper words in their template arguments; their compute
// kernels are no helpers, their split-KV combine is.
TEST(LaunchWork, ComposableKernelNamesAreReadByTheirKernel) {
  EXPECT_FALSE(IsHelperKernel(
      "_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmhaBatchPrefill"
      "PipelineQRKSVSAsyncENS_28BlockAttentionQuantScaleEnumE0EEEEEvT0_"));
  EXPECT_FALSE(IsHelperKernel(
      "_ZN2ck16tensor_operation6device12_GLOBAL__N_149kernel_grouped_conv_fwd_multiple_abd_xdl_"
      "cshuffleINS_34GridwiseGemmMultipleD_xdl_cshuffleItttftNS_5TupleIJEEEtNS0_12element_wise"
      "11PassThroughES8_S8_EEvv"));
  EXPECT_TRUE(IsHelperKernel("_ZN7ck_tile6kentryILi1ENS_27FmhaFwdSplitKVCombineKernelIiEEEEvT0_"));
  EXPECT_TRUE(IsHelperKernel("SubTensorOpWithScalar1d"));
  EXPECT_TRUE(IsHelperKernel("paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, 128, 256>"));
  EXPECT_FALSE(IsHelperKernel("paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16, 1, 128>"));
}

TEST(LaunchWork, MoeHiddenStatesPaddedForTheKernel) {
  Tables t;
  // vLLM's MXFP4 MoE on ROCm pads gpt-oss's hidden 2880 to 3072.
  const uint32_t moe = t.Frame("vllm::moe_forward", "cpu_op", "[[32,3072],[32,32],[],[]]",
                               R"(["c10::BFloat16","c10::BFloat16","",""])");
  const uint32_t set = t.Set({{"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu", "vllm::moe_forward", 1},
                              {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1", "vllm::moe_forward", 1},
                              {"_finalize_matmul_scatter_bf16", "vllm::moe_forward", 1},
                              {"_sum_bitmatrix_rows", "SortTokens", 1},
                              {"_topk_forward", "TopK", 1}});
  LaunchWorkResult r = ResolveLaunchWork(t.stats(), Ctx(t.Stack({moe}), set, set),
                                         "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1");
  ASSERT_EQ(r.outcome, LaunchOutcome::kWork);
  EXPECT_EQ(r.work.workers, 2u);  // the two expert GEMMs; routing and finalize are helpers
  auto shape = ParseHfConfig(R"({"model_type":"gpt_oss","hidden_size":2880,"intermediate_size":2880,
      "num_local_experts":32,"experts_per_token":4,"quantization_config":{"quant_method":"mxfp4"}})",
                             "gpt-oss-20b.json");
  ASSERT_TRUE(shape.ok()) << shape.status();
  LaunchWork w = r.work;
  ASSERT_TRUE(ApplyModelShape(*shape, &w).ok());
  EXPECT_DOUBLE_EQ(w.work.flops, 2.0 * 32 * 4 * 3 * 2880 * 2880 / 2);  // the model's sizes
  EXPECT_NE(w.work.description.find("padded to 3072"), std::string::npos) << w.work.description;
  // A call wider than one alignment block is another model.
  ModelShape narrow = *shape;
  narrow.hidden = 2048;
  LaunchWork w2 = r.work;
  EXPECT_FALSE(ApplyModelShape(narrow, &w2).ok());
}

}  // namespace
}  // namespace qprof::work
