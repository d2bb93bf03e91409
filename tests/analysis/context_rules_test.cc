// The context rule table: which frame decides, weak plain ops, emit_nvtx names, formats
// from frames, and when a context role replaces the name's.
#include "analysis/classify/context_rules.h"

#include "analysis/classify/classify.h"
#include "gtest/gtest.h"

namespace qprof::classify {
namespace {

std::vector<Frame> F(std::initializer_list<const char*> names, const char* kind = "cpu_op") {
  std::vector<Frame> out;
  for (const char* n : names) out.push_back({n, kind});
  return out;
}

TEST(ContextRules, InnermostStrongFrameDecidesOverWeakPlainOps) {
  ContextVerdict v = MatchContext(F({"ProfilerStep#3", "vllm::moe_forward", "aten::bmm"}));
  EXPECT_EQ(v.role, "moe.experts");
  EXPECT_EQ(v.frame, "vllm::moe_forward");
  EXPECT_FALSE(v.weak);
  EXPECT_EQ(v.innermost, "vllm::moe_forward (cpu_op)");
  // Routing inside the MoE layer: the inner router frame wins.
  v = MatchContext(F({"nn.Module: FusedMoE_0", "select_experts", "aten::topk"}));
  EXPECT_EQ(v.role, "moe.router");
  // Only a plain op: weak.
  v = MatchContext(F({"ProfilerStep#3", "aten::mm"}));
  EXPECT_EQ(v.role, "gemm.dense");
  EXPECT_TRUE(v.weak);
  EXPECT_EQ(v.frame, "aten::mm");
  // Nothing known: no role; the innermost operator frame is still shown.
  v = MatchContext(F({"ProfilerStep#3", "aten::add"}));
  EXPECT_EQ(v.role, "");
  EXPECT_EQ(v.innermost, "aten::add (cpu_op)");
}

TEST(ContextRules, EmitNvtxNamesAndPythonFrames) {
  ContextVerdict v = MatchContext(F({"aten::mm, op_id = 12, sizes = [[16, 4096], [4096, 4096]]"}, "nvtx"));
  EXPECT_EQ(v.role, "gemm.dense");
  EXPECT_EQ(v.frame, "aten::mm");
  v = MatchContext(F({"nn.Module: DeepseekV4Attention_0",
                      "sglang/srt/layers/attention/nsa_backend.py(702): forward_decode",
                      "triton/runtime/jit.py(330): <lambda>"},
                     "python_function"));
  EXPECT_EQ(v.role, "attn.sparse_mla");
  // No operator frame: the deciding Python frame is shown.
  EXPECT_NE(v.innermost.find("nsa_backend.py"), std::string::npos);
  v = MatchContext(F({"nn.Module: Qwen2RMSNorm_0", "aten::pow"}));
  EXPECT_EQ(v.role, "norm");
  v = MatchContext(F({"nn.Module: RotaryEmbedding_0", "aten::mul"}));
  EXPECT_EQ(v.role, "elementwise");
  v = MatchContext(F({"nn.Module: VocabParallelEmbedding_0", "aten::embedding"}));
  EXPECT_EQ(v.role, "embedding");
  v = MatchContext(F({"nccl:all_reduce"}));
  EXPECT_EQ(v.role, "comm");
  // diffusers' upsampling layer resizes images: no token sampling.
  v = MatchContext(F({"diffusers/models/upsampling.py(180): forward", "aten::upsample_nearest2d"},
                     "python_function"));
  EXPECT_EQ(v.role, "elementwise");
}

// Op identity before context. The stacks are vLLM's LM head as the B200 gpt-oss trace
// records it (LogitsProcessor calls VocabParallelEmbedding's quant method, which runs the
// GEMM) and a ViT patch embedding, a convolution inside a module called an embedding.
std::vector<Frame> WithShapes(std::vector<Frame> frames, size_t from) {
  for (size_t i = from; i < frames.size(); ++i) frames[i].has_shapes = true;
  return frames;
}

TEST(ContextRules, AGemmOpKeepsAGemmRoleWhateverModuleItSitsIn) {
  const std::vector<Frame> lm_head = {
      {"execute_context_1(888_788544)_generation_0(0)", "user_annotation"},
      {"nn.Module: LogitsProcessor_0", "python_function"},
      {"vllm/model_executor/layers/logits_processor.py(85): _get_logits", "python_function"},
      {"vllm/model_executor/layers/vocab_parallel_embedding.py(63): apply", "python_function"},
      {"vllm/model_executor/layers/utils.py(99): default_unquantized_gemm", "python_function"},
      {"aten::linear", "cpu_op"}, {"aten::matmul", "cpu_op"}, {"aten::mm", "cpu_op"}};
  ContextVerdict v = MatchContext(WithShapes(lm_head, 5));
  EXPECT_TRUE(v.gemm_op);
  EXPECT_EQ(v.role, "gemm.dense");
  EXPECT_EQ(v.frame, "vllm/model_executor/layers/logits_processor.py(85): _get_logits");
  EXPECT_FALSE(v.weak);
  EXPECT_NE(v.why.find("says embedding"), std::string::npos) << v.why;
  EXPECT_TRUE(ContextRoleWins(v, ""));
  // Without shapes the op is not known to be a GEMM of those operands: context as before.
  v = MatchContext(lm_head);
  EXPECT_FALSE(v.gemm_op);
  EXPECT_EQ(v.role, "embedding");
  // A patch embedding's convolution: no GEMM-role frame, the convolution op decides, firmly.
  v = MatchContext(WithShapes({{"nn.Module: ViTPatchEmbeddings_0", "python_function"},
                               {"aten::conv2d", "cpu_op"}, {"aten::convolution", "cpu_op"},
                               {"aten::_convolution", "cpu_op"},
                               {"aten::miopen_convolution", "cpu_op"}},
                              1));
  EXPECT_EQ(v.role, "gemm.dense");
  EXPECT_EQ(v.frame, "aten::miopen_convolution");
  EXPECT_FALSE(v.weak);
  EXPECT_TRUE(ContextRoleWins(v, "embedding"));  // even over a name that said embedding
  // A GEMM in an MoE layer still chooses among GEMM roles.
  v = MatchContext(WithShapes({{"vllm::moe_forward", "cpu_op"}, {"aten::mm", "cpu_op"}}, 0));
  EXPECT_EQ(v.role, "moe.experts");
  // An embedding lookup stays one: aten::embedding is not a GEMM.
  v = MatchContext(WithShapes({{"nn.Module: VocabParallelEmbedding_0", "python_function"},
                               {"aten::embedding", "cpu_op"}, {"aten::index_select", "cpu_op"}},
                              1));
  EXPECT_FALSE(v.gemm_op);
  EXPECT_EQ(v.role, "embedding");
  // emit_nvtx ranges carry their sizes in the name.
  v = MatchContext({{"nn.Module: ParallelLMHead", "nvtx"},
                    {"aten::mm, op_id = 7, sizes = [[32, 2880], [2880, 201088]]", "nvtx"}});
  EXPECT_TRUE(v.gemm_op);
  EXPECT_EQ(v.role, "gemm.dense");
  EXPECT_EQ(v.frame, "nn.Module: ParallelLMHead");
}

TEST(ContextRules, FormatFromAFrame) {
  ContextVerdict v = MatchContext(F({"sglang/srt/layers/quantization/mxfp4.py(712): apply",
                                     "fused_experts"}));
  EXPECT_EQ(v.role, "moe.experts");
  EXPECT_EQ(v.format, "mxfp4");
  EXPECT_EQ(MatchContext(F({"ModelOptNvFp4FusedMoEMethod.apply", "fused_moe"})).format, "nvfp4");
}

TEST(ContextRules, WhenTheContextRoleWins) {
  ContextVerdict moe = MatchContext(F({"vllm::moe_forward"}));
  EXPECT_TRUE(ContextRoleWins(moe, "gemm.dense"));
  EXPECT_TRUE(ContextRoleWins(moe, "elementwise"));
  EXPECT_TRUE(ContextRoleWins(moe, "memory"));
  EXPECT_TRUE(ContextRoleWins(moe, ""));
  EXPECT_FALSE(ContextRoleWins(moe, "comm"));        // NCCL inside MoE: still comm
  EXPECT_FALSE(ContextRoleWins(moe, "moe.router"));  // a router kernel stays router
  EXPECT_FALSE(ContextRoleWins(moe, "norm"));
  ContextVerdict sparse = MatchContext(F({"sparse_mla_decode"}));
  EXPECT_TRUE(ContextRoleWins(sparse, "attn.dense"));  // flash kernel in sparse backend
  EXPECT_FALSE(ContextRoleWins(moe, "attn.dense"));
  ContextVerdict weak = MatchContext(F({"aten::mm"}));
  EXPECT_TRUE(ContextRoleWins(weak, "other"));
  EXPECT_FALSE(ContextRoleWins(weak, "elementwise"));
}

TEST(ContextRules, EveryRowIsLowerCaseAndHasAKnownRoleAndAReason) {
  for (const ContextRule& r : ContextRules()) {
    for (const char* p = r.pattern; *p; ++p) EXPECT_FALSE(std::isupper(*p)) << r.pattern;
    EXPECT_TRUE(std::string(r.why).size() > 3) << r.pattern;
    bool known = false;
    for (const char* role : {"moe.experts", "moe.router", "attn.sparse_mla", "attn.indexer",
                             "attn.dense", "norm", "gemm.dense", "comm", "elementwise",
                             "sampling", "embedding"}) {
      known |= std::string(r.role) == role;
    }
    EXPECT_TRUE(known) << r.pattern << " -> " << r.role;
  }
}

TEST(Classify, LaunchContextSetsTheRoleNotTheClass) {
  Classifier c({});
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_KERNEL);
  // An FP8 batched GEMM (MoE or MLA BMM: only the context tells).
  a.set_name("bmm_E4m3_E4m3E4m3_Fp32_t128x8x512u2_s6_et128x8_m128x8x64_cga1x1x1_16dp256b_TN");
  ContextVerdict v = MatchContext(F({"ProfilerStep#1", "vllm::moe_forward", "aten::empty"}));
  proto::Attribution at = c.Classify(a, a.name(), &v);
  EXPECT_EQ(at.role(), "moe.experts");
  EXPECT_EQ(at.pipe_class(), "tensor");  // from the name rule bmm_*
  EXPECT_EQ(at.evidence(), "launch_context");
  EXPECT_NE(at.evidence_detail().find("vllm::moe_forward"), std::string::npos);
  EXPECT_NE(at.evidence_detail().find("rule bmm_*:"), std::string::npos);
  // Without the context: the name rule's role.
  at = c.Classify(a, a.name());
  EXPECT_EQ(at.role(), "gemm.dense");
  EXPECT_EQ(at.evidence(), "name_rule");
  // An unknown kernel: role from the context, class stays unknown ("other").
  proto::Activity u;
  u.set_kind(proto::ACTIVITY_KIND_KERNEL);
  u.set_name("_tiled_sparse_decode_kernel");
  ContextVerdict s = MatchContext(F({"nsa_backend.py(702): forward_decode"}, "python_function"));
  at = c.Classify(u, u.name(), &s);
  EXPECT_EQ(at.role(), "attn.sparse_mla");
  EXPECT_EQ(at.pipe_class(), "other");
  EXPECT_EQ(at.evidence(), "launch_context");
  EXPECT_NE(at.evidence_detail().find("pipe class unknown"), std::string::npos);
  // The registry outranks the context.
  ClassifyOptions o;
  o.known_kernels.push_back({"qprof_moe_slot_gemv_mxfp4", "moe.slot_gemv.mxfp4", "moe.experts",
                             "simt", "mxfp4", "simt_fp32"});
  Classifier r(o);
  proto::Activity q;
  q.set_kind(proto::ACTIVITY_KIND_KERNEL);
  q.set_name("qprof_moe_slot_gemv_mxfp4");
  ContextVerdict attn = MatchContext(F({"sparse_mla_decode"}));
  at = r.Classify(q, q.name(), &attn);
  EXPECT_EQ(at.role(), "moe.experts");
  EXPECT_EQ(at.evidence(), "registry");
}

}  // namespace
}  // namespace qprof::classify
