// Properties any sane decode model must have, checked over sweeps of hand-built plans.
#include <random>

#include "analysis/model/decode_model.h"
#include "gtest/gtest.h"
#include "tests/analysis/model/test_plans.h"

namespace qprof::model {
namespace {

using testing::MoeLayerPlan;
using testing::RoundDevice;

double StepNs(const proto::DecodePlan& plan, const devices::DeviceSpec& d) {
  auto r = ModelDecodeStep(plan, d, DefaultModelParameters());
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->step_ns : 0;
}

TEST(Monotonicity, MoreBandwidthNeverSlower) {
  for (bool slot : {true, false}) {
    for (int batch : {1, 3, 16, 61}) {
      proto::DecodePlan plan = MoeLayerPlan(batch, slot, 4);
      double prev = 1e300;
      for (double bw : {100.0, 480.0, 1000.0, 1790.0, 4800.0, 8000.0}) {
        devices::DeviceSpec d = RoundDevice();
        d.memory_bandwidth_gbps.value = bw;
        double t = StepNs(plan, d);
        EXPECT_LE(t, prev + 2) << "slot=" << slot << " batch=" << batch << " bw=" << bw;
        prev = t;
      }
    }
  }
}

TEST(Monotonicity, FasterPipesAndLinksNeverSlower) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> scale(1.0, 4.0);
  for (bool slot : {true, false}) {
    proto::DecodePlan plan = MoeLayerPlan(16, slot, 8);
    devices::DeviceSpec d = RoundDevice();
    double prev = StepNs(plan, d);
    for (int i = 0; i < 12; ++i) {
      switch (i % 4) {
        case 0: d.fp32_simt_tflops.value *= scale(rng); break;
        case 1: d.bf16_tensor_tflops.value *= scale(rng); break;
        case 2: d.interconnect_gbps.value *= scale(rng); break;
        default: d.memory_bandwidth_gbps.value *= scale(rng); break;
      }
      double t = StepNs(plan, d);
      EXPECT_LE(t, prev + 2) << "step " << i;
      prev = t;
    }
  }
}

// More batch never gives fewer tokens/s while the step stays memory (or launch/comm)
// bound; once a kernel turns compute bound the property is no longer promised.
TEST(Monotonicity, MoreBatchNeverFewerTokensWhileMemoryBound) {
  for (bool slot : {true, false}) {
    double prev_tps = 0;
    int memory_bound_steps = 0;
    for (int batch = 1; batch <= 96; batch += (batch < 20 ? 1 : 7)) {
      proto::DecodePlan plan = MoeLayerPlan(batch, slot, 1);
      auto r = ModelDecodeStep(plan, RoundDevice(), DefaultModelParameters());
      ASSERT_TRUE(r.ok());
      bool compute_bound = false;
      for (const KernelEstimate& e : r->kernels) {
        compute_bound |= e.time.bound == "simt" || e.time.bound == "tensor";
      }
      if (compute_bound) break;
      ++memory_bound_steps;
      EXPECT_GE(r->tokens_per_s, prev_tps) << "slot=" << slot << " batch=" << batch;
      prev_tps = r->tokens_per_s;
    }
    EXPECT_GT(memory_bound_steps, 5) << "the sweep must exercise the memory-bound range";
  }
}

TEST(Monotonicity, SlotPathNeverReadsFewerWeightBytesThanGrouped) {
  for (int batch : {1, 2, 7, 16, 33, 128}) {
    double slot = MoeLayerPlan(batch, true).kernels(1).work().weight_bytes();
    double grouped = MoeLayerPlan(batch, false).kernels(1).work().weight_bytes();
    EXPECT_GE(slot, grouped - 1e-6) << batch;
    if (batch == 1) {
      EXPECT_NEAR(slot, grouped, 1e-6);
    }
  }
}

}  // namespace
}  // namespace qprof::model
