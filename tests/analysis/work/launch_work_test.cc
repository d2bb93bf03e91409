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

}  // namespace
}  // namespace qprof::work
