#include "analysis/ceilings/ceilings.h"

#include "gtest/gtest.h"

namespace qprof::ceilings {
namespace {

TEST(Ceilings, BitsPerWeightIncludeScales) {
  EXPECT_DOUBLE_EQ(BitsPerWeight("mxfp4"), 4.25);  // 4 + 8/32
  EXPECT_DOUBLE_EQ(BitsPerWeight("nvfp4"), 4.5);   // 4 + 8/16
  EXPECT_NEAR(BitsPerWeight("fp8"), 8.001953125, 1e-12);
  EXPECT_DOUBLE_EQ(BitsPerWeight("bf16"), 16);
  EXPECT_DOUBLE_EQ(BitsPerWeight("nonsense"), 0);
}

TEST(Ceilings, ModelConfigValidation) {
  EXPECT_FALSE(ParseModelConfig("{", "m.json").ok());
  EXPECT_FALSE(ParseModelConfig("[1]", "m.json").ok());
  EXPECT_FALSE(ParseModelConfig(R"({"batch": 4})", "m.json").ok());  // no params
  EXPECT_FALSE(ParseModelConfig(R"({"active_params": -1})", "m.json").ok());
  EXPECT_FALSE(ParseModelConfig(R"({"active_params": "13e9"})", "m.json").ok());
  auto bad = ParseModelConfig(R"({"name": 3, "active_params": 1})", "m.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("m.json"), absl::string_view::npos);
  auto m = ParseModelConfig(R"({"active_params": 13000000000, "batch": 16, "note": "ignored"})", "m.json");
  ASSERT_TRUE(m.ok()) << m.status();
  StepWork w = StepWorkFromModel(*m, 0);
  EXPECT_EQ(w.batch, 16u);
  EXPECT_DOUBLE_EQ(w.weight_params, 13e9);
  EXPECT_DOUBLE_EQ(w.flops, 2 * 13e9 * 16);
  EXPECT_EQ(StepWorkFromModel(*m, 3).batch, 3u);  // the run's batch wins
}

TEST(Ceilings, FormatCeilingMemoryAndComputeBound) {
  const devices::DeviceSpec* b200 = devices::FindDevice("b200");
  const devices::DeviceSpec* a100 = devices::FindDevice("a100");
  ASSERT_NE(b200, nullptr);
  ASSERT_NE(a100, nullptr);
  StepWork w;
  w.weight_params = 8e9;
  w.batch = 1;
  w.flops = 2 * 8e9;
  proto::FormatCeiling c = FormatCeilingFor(*b200, "nvfp4", w);
  EXPECT_EQ(c.pipe(), "tensor_fp4");
  EXPECT_EQ(c.bound(), "memory");
  EXPECT_NEAR(c.bytes_per_step(), 8e9 * 4.5 / 8, 1);
  EXPECT_NEAR(c.tokens_per_s(), 1.0 / (4.5e9 / 8000e9), 1e-6);
  EXPECT_EQ(FormatCeilingFor(*a100, "fp8", w).pipe(), "tensor_bf16");  // no FP8 on Ampere
  // A huge batch makes it compute-bound: flops/rate > bytes/BW.
  w.batch = 4096;
  w.flops = 2 * 8e9 * 4096;
  proto::FormatCeiling big = FormatCeilingFor(*a100, "bf16", w);
  EXPECT_EQ(big.bound(), "compute");
  EXPECT_NEAR(big.compute_time_ns(), w.flops / (312e3), 1e-3);
  EXPECT_FALSE(big.provenance().empty());
  EXPECT_NE(big.inputs().find("2039"), std::string::npos);
}

TEST(Ceilings, AmdahlRows) {
  proto::Profile p;
  auto* c = p.add_classes();
  c->set_class_("simt");
  c->set_time_ns(39);
  auto* r = p.add_roles();
  r->set_role("moe.experts");
  r->set_time_ns(39);
  CeilingInputs in;
  in.total_kernel_time_ns = 100;
  in.role_roofline_ns["moe.experts"] = 9;
  proto::Ceilings out = ComputeCeilings(p, in);
  ASSERT_EQ(out.amdahl_size(), 2);
  EXPECT_NEAR(out.amdahl(0).speedup_if_vanished(), 1 / (1 - 0.39), 1e-12);  // 1.64x, not 2x
  EXPECT_FALSE(out.amdahl(0).has_speedup_at_roofline());
  EXPECT_NEAR(out.amdahl(1).speedup_at_roofline(), 100.0 / (100 - 39 + 9), 1e-12);
  EXPECT_EQ(out.formats_size(), 0);  // no step work: no format rows, a note instead
  EXPECT_FALSE(out.notes().empty());
}

}  // namespace
}  // namespace qprof::ceilings
