#include "analysis/model/decode_model.h"

#include <set>

#include "gtest/gtest.h"
#include "proto/vocabulary.h"
#include "tests/analysis/model/test_plans.h"

namespace qprof::model {
namespace {

using testing::AddKernel;
using testing::MoeLayerPlan;
using testing::RoundDevice;

ModelParameters Params() {
  ModelParameters p = DefaultModelParameters();
  p.launch_overhead_ns.value = 3000;
  return p;
}

TEST(EstimateKernel, MemoryBoundHandValue) {
  proto::DecodePlan plan;
  proto::PlannedKernel* k =
      AddKernel(plan, "norm.rms", "norm", "simt", "simt_fp32", 1e6, 1e3, "decode/step 0/norm");
  auto e = EstimateKernel(*k, 1, RoundDevice(), Params());
  ASSERT_TRUE(e.ok()) << e.status();
  // 1e6 bytes / (1000 GB/s * 0.85) = 1176.47 ns, + 3000 ns launch.
  EXPECT_NEAR(e->time.memory_ns, 1176.47, 0.01);
  EXPECT_NEAR(e->time.total_ns, 4176.47, 0.01);
  EXPECT_EQ(e->time.bound, "memory");
}

TEST(EstimateKernel, SimtWorkIncludesDecodeOps) {
  proto::DecodePlan plan;
  proto::PlannedKernel* k =
      AddKernel(plan, "moe.slot_gemv.mxfp4", "moe.experts", "simt", "simt_fp32", 1e3, 1e9, "x");
  k->mutable_work()->set_decode_ops(2.5e8);
  auto e = EstimateKernel(*k, 1, RoundDevice(), Params());
  ASSERT_TRUE(e.ok());
  // (1e9 + 2.5e8 elements * 12) FLOP / (100 TFLOPS * 0.5) = 4e9 / 5e4 FLOP/ns = 80000 ns.
  EXPECT_NEAR(e->simt_work_flops, 4e9, 1);
  EXPECT_NEAR(e->time.simt_ns, 80000, 1e-6);
  EXPECT_EQ(e->time.bound, "simt");
}

TEST(EstimateKernel, NativeFp4MmaHasNoSimtDecode) {
  proto::DecodePlan plan;
  proto::PlannedKernel* k =
      AddKernel(plan, "moe.fp4_mma.nvfp4", "moe.experts", "tensor", "tensor_fp4", 1e6, 1e9, "x");
  k->mutable_work()->set_decode_ops(2.5e8);
  auto e = EstimateKernel(*k, 1, RoundDevice(), Params());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->simt_work_flops, 0);
  EXPECT_EQ(e->time.simt_ns, 0);
  // No tokens in the shape: no padding; 1e9 / (1600 TFLOPS * 0.5) = 1250 ns.
  EXPECT_NEAR(e->time.tensor_ns, 1250, 1e-9);
}

TEST(EstimateKernel, TensorDecodeOpsGoToSimtAndTilesArePadded) {
  proto::DecodePlan plan = MoeLayerPlan(16, /*slot_path=*/false);
  const proto::PlannedKernel& moe = plan.kernels(1);
  auto e = EstimateKernel(moe, 1, RoundDevice(), Params());
  ASSERT_TRUE(e.ok());
  // 16 tokens * top-4 over U(64, 4, 16) = 41.2113 experts: 1.55 tokens per expert, paid
  // as one 16-row tile: padding 16 / 1.55254 = 10.3057.
  EXPECT_NEAR(e->tensor_padding, 16.0 / (64.0 / 41.21125565), 1e-4);
  EXPECT_NEAR(e->tensor_work_flops, moe.work().flops() * e->tensor_padding, 1);
  EXPECT_NEAR(e->time.tensor_ns, e->tensor_work_flops / (400e3 * 0.7), 1e-6);
  EXPECT_NEAR(e->simt_work_flops, moe.work().decode_ops() * 4, 1);
}

TEST(EstimateKernel, MissingPipeIsAnError) {
  proto::DecodePlan plan;
  proto::PlannedKernel* k =
      AddKernel(plan, "moe.fp4_mma.nvfp4", "moe.experts", "tensor", "tensor_fp4", 1e6, 1e9, "x");
  devices::DeviceSpec h200 = RoundDevice();
  h200.name = "NoFp4";
  h200.fp4_tensor_tflops = {0, "none"};
  auto e = EstimateKernel(*k, 1, h200, Params());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(e.status().message()).find("NoFp4"), std::string::npos);
}

TEST(EstimateKernel, TensorParallelNeedsInterconnect) {
  proto::DecodePlan plan = MoeLayerPlan(4, true, /*tp=*/4);
  devices::DeviceSpec d = RoundDevice();
  d.interconnect_gbps = {0, ""};
  auto r = ModelDecodeStep(plan, d, Params());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  // With TP 1 the same plan's all-reduce is free but still pays its launch.
  plan.set_tp(1);
  auto ok = ModelDecodeStep(plan, d, Params());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->kernels[2].time.comm_ns, 0);
}

TEST(EstimateKernel, AllReduceUsesRanksAndLink) {
  proto::DecodePlan plan = MoeLayerPlan(16, true, /*tp=*/8);
  auto e = EstimateKernel(plan.kernels(2), 8, RoundDevice(), Params());
  ASSERT_TRUE(e.ok());
  // 32768 bytes, 8 ranks, 50 GB/s * 0.75: 5000 + 14000 + 1.75 * 32768 / 37.5 = 20529.17 ns.
  EXPECT_NEAR(e->time.comm_ns, 20529.17, 0.01);
  EXPECT_EQ(e->time.bound, "comm");
}

TEST(ModelDecodeStep, TraceIsModelledOrderedAndAnnotated) {
  proto::DecodePlan plan = MoeLayerPlan(16, true, 8);
  plan.mutable_kernels(0)->set_launches(3);
  plan.add_notes("hand-built plan");
  auto r = ModelDecodeStep(plan, RoundDevice(), Params());
  ASSERT_TRUE(r.ok()) << r.status();
  const proto::Trace& t = r->trace;
  EXPECT_EQ(t.header().provenance(), proto::PROVENANCE_MODELLED);
  EXPECT_EQ(t.header().source_kind(), "model");
  EXPECT_EQ(t.header().run().backend(), "model");
  EXPECT_EQ(t.header().run().tokens_generated(), 16u);
  EXPECT_EQ(t.header().run().tp(), 8u);
  ASSERT_EQ(t.header().devices_size(), 1);
  EXPECT_EQ(t.header().devices(0).kind(), "modelled");
  ASSERT_EQ(t.activities_size(), 5);  // 3 launches + moe + all-reduce
  int64_t prev_end = 0;
  for (const proto::Activity& a : t.activities()) {
    EXPECT_EQ(a.start_ns(), prev_end);
    EXPECT_GT(a.end_ns(), a.start_ns());
    EXPECT_EQ(a.attribution().evidence(), "modelled");
    EXPECT_FALSE(a.attribution().role().empty());
    EXPECT_TRUE(a.args().contains("model.bound"));
    prev_end = a.end_ns();
  }
  EXPECT_EQ(static_cast<double>(prev_end), r->step_ns);
  EXPECT_EQ(t.header().run().wall_time_ns(), static_cast<uint64_t>(prev_end));
  EXPECT_NEAR(r->tokens_per_s, 16e9 / r->step_ns, 1e-9);
  EXPECT_EQ(t.activities(3).work().weight_bytes(), plan.kernels(1).work().weight_bytes());
  // Every parameter and the plan's notes are in the header notes.
  std::set<std::string> notes(t.header().notes().begin(), t.header().notes().end());
  int parameters = 0, assumptions = 0;
  bool plan_note = false;
  for (const std::string& n : notes) {
    parameters += n.rfind("parameter: ", 0) == 0;
    assumptions += n.rfind("assumption: ", 0) == 0;
    plan_note |= n == "plan: hand-built plan";
  }
  EXPECT_EQ(parameters, static_cast<int>(DefaultModelParameters().All().size()));
  EXPECT_GE(assumptions, 5);
  EXPECT_TRUE(plan_note);
  EXPECT_NE(t.header().notes(0).find("MODELLED"), std::string::npos);
  // NVTX ranges: decode, decode/step 0, .../layer 0, .../attn, .../moe.
  std::map<std::string, proto::NvtxRange> ranges;
  for (const auto& rg : t.ranges()) ranges[rg.path()] = rg;
  ASSERT_TRUE(ranges.contains("decode"));
  ASSERT_TRUE(ranges.contains("decode/step 0/layer 0/moe"));
  EXPECT_EQ(ranges["decode"].start_ns(), 0);
  EXPECT_EQ(ranges["decode"].end_ns(), prev_end);
  EXPECT_EQ(ranges["decode/step 0/layer 0/moe"].depth(), 3u);
  EXPECT_EQ(ranges["decode/step 0/layer 0/moe"].name(), "moe");
  EXPECT_EQ(ranges["decode/step 0/layer 0/moe"].start_ns(), t.activities(3).start_ns());
}

TEST(ModelDecodeStep, RejectsEmptyPlanAndZeroBatch) {
  proto::DecodePlan empty;
  empty.set_batch(4);
  EXPECT_EQ(ModelDecodeStep(empty, RoundDevice(), Params()).status().code(),
            absl::StatusCode::kInvalidArgument);
  proto::DecodePlan zero = MoeLayerPlan(4, true);
  zero.set_batch(0);
  EXPECT_EQ(ModelDecodeStep(zero, RoundDevice(), Params()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ParametersForTarget, UsesDeviceLaunchOverhead) {
  devices::DeviceSpec d = RoundDevice();
  d.launch_overhead_us = {2.5, "measured gap"};
  ModelParameters p = ParametersForTarget(d);
  EXPECT_EQ(p.launch_overhead_ns.value, 2500);
  EXPECT_NE(p.launch_overhead_ns.source.find("measured gap"), std::string::npos);
  d.launch_overhead_us = {0, ""};
  EXPECT_EQ(ParametersForTarget(d).launch_overhead_ns.value,
            DefaultModelParameters().launch_overhead_ns.value);
}

TEST(ParametersForTarget, FitsReplaceDefaultsAndCiteTheirOrigin) {
  ModelParameters p = DefaultModelParameters();
  ApplyFittedParameters(p, {{"h200", "memory_bandwidth_efficiency", 0.91, "2026-11-29",
                             "qprof calibrate on mxfp4.qtrace"},
                            {"h200", "no_such_parameter", 0.5, "2026-11-29", "x"},
                            {"h200", "simt_efficiency", 7, "2026-11-29", "x"}});
  EXPECT_EQ(p.memory_bandwidth_efficiency.value, 0.91);
  EXPECT_EQ(p.memory_bandwidth_efficiency.source,
            "fitted on h200 on 2026-11-29 from qprof calibrate on mxfp4.qtrace");
  EXPECT_EQ(p.simt_efficiency.value, DefaultModelParameters().simt_efficiency.value);
  // No fits are stored yet: every target runs on defaults (docs/model.md says so).
  EXPECT_TRUE(AllFittedParameters().empty());
}

}  // namespace
}  // namespace qprof::model
