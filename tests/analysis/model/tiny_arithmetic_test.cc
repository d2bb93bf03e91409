// The model's arithmetic on the runtime's real plan of the `tiny` preset: bytes and FLOPs
// of the main kernels against values computed by hand from the preset's shapes (dim 128,
// moe_inter 64, 8 experts top-2, 4 heads, index_topk 16 + window 8), then the model's
// time for them on a device with round numbers.
#include "analysis/model/decode_model.h"
#include "gtest/gtest.h"
#include "runtime/plan.h"
#include "runtime/run.h"
#include "tests/analysis/model/test_plans.h"

namespace qprof::model {
namespace {

proto::DecodePlan TinyPlan(const std::string& format, const std::string& moe_backend) {
  runtime::RunOptions o;
  o.model = "tiny";
  o.format = format;
  o.moe_backend = moe_backend;
  o.batch = 4;
  o.context = 32;
  o.steps = 1;
  o.tp = 1;
  auto plan = runtime::PlanDecode(o);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::DecodePlan();
}

const proto::PlannedKernel* Find(const proto::DecodePlan& plan, const std::string& id,
                                 int nth = 0) {
  for (const proto::PlannedKernel& k : plan.kernels()) {
    if (k.kernel_id() == id && nth-- == 0) return &k;
  }
  return nullptr;
}

TEST(TinyArithmetic, SlotGemvMxfp4BytesAndFlops) {
  proto::DecodePlan plan = TinyPlan("mxfp4", "slot_gemv");
  // embed + 2 layers x (16 attention (rope is two launches) + 4 MoE kernels) + 3 head.
  EXPECT_EQ(plan.kernels_size(), 44);
  const proto::PlannedKernel* moe = Find(plan, "moe.slot_gemv.mxfp4");
  ASSERT_NE(moe, nullptr);
  // 4 tokens x top-2 = 8 slot reads of one expert: 3 * 64 * 128 * 4.25 / 8 = 13056 bytes.
  EXPECT_DOUBLE_EQ(moe->work().weight_bytes(), 8 * 13056.0);
  // x (4x128x2) in, out read+written, hidden 8 x 64 x 2 written and read, ids+weights 8x8.
  EXPECT_DOUBLE_EQ(moe->work().activation_bytes(), 3072 + 2048 + 64);
  EXPECT_DOUBLE_EQ(moe->work().bytes(), 104448 + 5184);
  EXPECT_DOUBLE_EQ(moe->work().flops(), 2.0 * 8 * 3 * 64 * 128);
  EXPECT_DOUBLE_EQ(moe->work().decode_ops(), 8.0 * 3 * 64 * 128);
  EXPECT_EQ(moe->work().compute_pipe(), "simt_fp32");
  // The shared expert: one slot per token, 4 reads.
  const proto::PlannedKernel* shared = Find(plan, "moe.slot_gemv.mxfp4", 1);
  ASSERT_NE(shared, nullptr);
  EXPECT_DOUBLE_EQ(shared->work().weight_bytes(), 4 * 13056.0);

  // Model on 1000 GB/s, 100 TFLOPS SIMT: memory 109632 / 850 = 128.979 ns; SIMT
  // (393216 + 196608 * 12) / 5e4 = 55.050 ns; memory-bound, + 3000 ns launch.
  ModelParameters p = DefaultModelParameters();
  auto e = EstimateKernel(*moe, 1, testing::RoundDevice(), p);
  ASSERT_TRUE(e.ok());
  EXPECT_NEAR(e->time.memory_ns, 128.979, 1e-3);
  EXPECT_NEAR(e->time.simt_ns, 55.050, 1e-3);
  EXPECT_EQ(e->time.bound, "memory");
  EXPECT_NEAR(e->time.total_ns, 3128.979, 1e-3);
}

TEST(TinyArithmetic, GroupedNvfp4ReadsUniqueExperts) {
  proto::DecodePlan plan = TinyPlan("nvfp4", "w4a16_mma");
  const proto::PlannedKernel* moe = Find(plan, "moe.w4a16_mma.nvfp4");
  ASSERT_NE(moe, nullptr);
  // U(8, 2, 4) = 8 * (1 - 0.75^4) = 5.469, planned as 5 experts of
  // 3 * 64 * 128 * 4.5 / 8 + 2 FP32 tensor scales = 13832 bytes.
  EXPECT_EQ(moe->shape().at("unique_experts"), 5);
  EXPECT_DOUBLE_EQ(moe->work().weight_bytes(), 5 * 13832.0);
  EXPECT_DOUBLE_EQ(moe->work().flops(), 2.0 * 8 * 3 * 64 * 128);
  EXPECT_DOUBLE_EQ(moe->work().decode_ops(), 5.0 * 3 * 64 * 128);
  ModelParameters p = DefaultModelParameters();
  auto e = EstimateKernel(*moe, 1, testing::RoundDevice(), p);
  ASSERT_TRUE(e.ok());
  // 8 slots over 5 experts = 1.6 tokens per expert, paid as a 16-row tile: padding 10.
  EXPECT_NEAR(e->tensor_padding, 10.0, 1e-12);
  // 393216 * 10 / (400 TFLOPS * 0.7) = 14.043 ns; decode 122880 * 4 / 5e4 = 9.830 ns;
  // memory (69160 + 5184) / 850 = 87.464 ns.
  EXPECT_NEAR(e->time.tensor_ns, 14.043, 1e-3);
  EXPECT_NEAR(e->time.simt_ns, 9.830, 1e-3);
  EXPECT_NEAR(e->time.memory_ns, 87.464, 1e-3);
}

TEST(TinyArithmetic, DenseGemmAndSparseMla) {
  proto::DecodePlan plan = TinyPlan("mxfp4", "slot_gemv");
  const proto::PlannedKernel* wq_a = Find(plan, "gemm.dense");
  ASSERT_NE(wq_a, nullptr);
  // m 4, n 64 (q_lora), k 128: BF16 weight 64*128*2, activations (4*128 + 4*64) * 2.
  EXPECT_DOUBLE_EQ(wq_a->work().weight_bytes(), 16384);
  EXPECT_DOUBLE_EQ(wq_a->work().activation_bytes(), 1536);
  EXPECT_DOUBLE_EQ(wq_a->work().flops(), 2.0 * 4 * 64 * 128);
  const proto::PlannedKernel* mla = Find(plan, "attn.sparse_mla.simt");
  ASSERT_NE(mla, nullptr);
  // Contexts 32, 27, 22, 16 (+1 new token) capped at index_topk 16 + window 8 = 24:
  // 24, 24, 23, 17 -> 22 on average. KV: 4 x 22 x 576 x 2 bytes.
  EXPECT_EQ(mla->shape().at("selected"), 22);
  EXPECT_DOUBLE_EQ(mla->work().kv_bytes(), 4.0 * 22 * 576 * 2);
  EXPECT_DOUBLE_EQ(mla->work().flops(), 2.0 * 4 * 4 * 22 * (576 + 512));
}

TEST(TinyArithmetic, StepIsTheSumOfKernels) {
  proto::DecodePlan plan = TinyPlan("mxfp4", "slot_gemv");
  ModelParameters p = DefaultModelParameters();
  auto r = ModelDecodeStep(plan, testing::RoundDevice(), p);
  ASSERT_TRUE(r.ok()) << r.status();
  double sum = 0;
  for (const KernelEstimate& e : r->kernels) sum += std::llround(e.time.total_ns) * e.launches;
  EXPECT_DOUBLE_EQ(r->step_ns, sum);
  EXPECT_EQ(r->trace.activities_size(), 44);
  // Tiny is launch-dominated: 44 launches x 3 us is most of the step.
  EXPECT_GT(44 * 3000.0 / r->step_ns, 0.9);
}

}  // namespace
}  // namespace qprof::model
