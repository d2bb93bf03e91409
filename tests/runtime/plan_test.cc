#include "runtime/plan.h"

#include <chrono>
#include <string>

#include "gtest/gtest.h"
#include "runtime/model_arch.h"

namespace qprof::runtime {
namespace {

TEST(ModelArchTest, PresetsValidateAndV4FlashHasPublishedShapes) {
  for (const char* name : {"tiny", "small", "v4-flash"}) {
    auto c = PresetArch(name);
    ASSERT_TRUE(c.ok()) << name;
    EXPECT_TRUE(ValidateModelArch(*c).ok()) << name;
  }
  ModelArch v4 = *PresetArch("v4-flash");
  EXPECT_EQ(v4.dim, 4096);
  EXPECT_EQ(v4.n_layers, 43);
  EXPECT_EQ(v4.n_routed_experts, 256);
  EXPECT_EQ(v4.n_activated_experts, 6);
  EXPECT_EQ(v4.moe_inter_dim, 2048);
  EXPECT_EQ(v4.index_topk, 512);
  EXPECT_EQ(v4.vocab_size, 129280);
  EXPECT_EQ(v4.d_qk(), 576);
  EXPECT_EQ(PresetArch("huge").status().code(), absl::StatusCode::kNotFound);
}

TEST(ModelArchTest, InvalidConfigsGiveOneClearMessage) {
  ModelArch c = *PresetArch("tiny");
  c.n_activated_experts = 9;
  absl::Status s = ValidateModelArch(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("exceeds n_routed_experts"), std::string::npos);
  c = *PresetArch("tiny");
  c.moe_inter_dim = 48;  // a multiple of 16 but not of 32
  EXPECT_TRUE(ValidateModelArch(c, "nvfp4").ok());
  s = ValidateModelArch(c, "mxfp4");
  EXPECT_NE(std::string(s.message()).find("not a multiple of the mxfp4 block 32"),
            std::string::npos)
      << s.message();
}

TEST(ModelArchTest, JsonRoundTripAndErrors) {
  ModelArch tiny = *PresetArch("tiny");
  auto parsed = ParseModelArchJson(ModelArchToJson(tiny), "x.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->dim, tiny.dim);
  EXPECT_EQ(parsed->name, "tiny");
  EXPECT_FLOAT_EQ(parsed->swiglu_limit, tiny.swiglu_limit);
  auto bad = ParseModelArchJson("{\"dim\": 128, \"colour\": 3}", "cfg.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("cfg.json: unknown field 'colour'"),
            std::string::npos);
  EXPECT_FALSE(ParseModelArchJson("[1,2]", "cfg.json").ok());
  EXPECT_FALSE(ParseModelArchJson("{\"dim\": 12.5}", "cfg.json").ok());
}

TEST(PlanTest, V4FlashPlansFastWithOneMoeLaunchPerLayerAndKnownNames) {
  RunOptions o;
  o.model = "v4-flash";
  o.format = "mxfp4";
  o.batch = 16;
  o.context = 4096;
  auto t0 = std::chrono::steady_clock::now();
  auto plan = PlanDecode(o);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_LT(secs, 0.5);
  EXPECT_EQ(plan->layers(), 43u);
  EXPECT_EQ(plan->moe_backend(), "slot_gemv");
  int moe = 0;
  for (const auto& k : plan->kernels()) {
    EXPECT_FALSE(k.name().empty()) << k.kernel_id();
    EXPECT_FALSE(k.role().empty()) << k.kernel_id();
    if (k.kernel_id() == "moe.slot_gemv.mxfp4") ++moe;
  }
  EXPECT_EQ(moe, 2 * 43);  // routed + shared
  EXPECT_GT(plan->active_expert_weight_bytes(), 0);
  EXPECT_EQ(plan->kernels(0).nvtx_path(), "decode/step 0/embed");
}

// The registry's rule (kernels/registry/entries_moe.cc): MXFP4 on the slot GEMV, NVFP4 on
// native FP4 tensor cores where a kernel exists (sm_120a only: qprof has no tcgen05 kernel
// for sm_100a), else on the BF16 tensor-core path.
TEST(PlanTest, AutoBackendRule) {
  auto path = [](const char* format, const char* requested, const char* arch) {
    RunOptions o;
    o.format = format;
    o.moe_backend = requested;
    o.target_arch = arch;
    auto k = ChooseKernels(o);
    return k.ok() ? k->moe_backend : std::string(k.status().message());
  };
  EXPECT_EQ(path("mxfp4", "auto", "sm_120"), "slot_gemv");
  EXPECT_EQ(path("nvfp4", "auto", "sm_120a"), "fp4_mma");
  EXPECT_EQ(path("nvfp4", "auto", "sm_100a"), "w4a16_mma");
  EXPECT_EQ(path("nvfp4", "auto", "sm_90"), "w4a16_mma");
  EXPECT_EQ(path("nvfp4", "auto", ""), "w4a16_mma");
  EXPECT_EQ(path("mxfp4", "w4a16_mma", "sm_90"), "w4a16_mma");
  // Named paths: on the host (no arch) every path runs through its CPU stand-in; on a GPU
  // only where it has code. Unknown names list the registry's choices.
  EXPECT_EQ(path("nvfp4", "fp4_mma", ""), "fp4_mma");
  EXPECT_EQ(path("nvfp4", "fp4_mma", "sm_90"),
            "MoE backend fp4_mma has no kernel for sm_90 (it runs on sm_120a; choices on "
            "sm_90: auto, slot_gemv, w4a16_mma)");
  EXPECT_EQ(path("nvfp4", "nonsense", "sm_90"),
            "unknown MoE backend 'nonsense' (choices: auto, slot_gemv, w4a16_mma, fp4_mma)");
}

TEST(PlanTest, GroupedPathMovesFewerExpertBytesAndTpShardsShapes) {
  RunOptions o;
  o.model = "small";
  o.format = "nvfp4";
  o.moe_backend = "slot_gemv";
  auto slot = PlanDecode(o);
  o.moe_backend = "w4a16_mma";
  auto mma = PlanDecode(o);
  ASSERT_TRUE(slot.ok() && mma.ok());
  EXPECT_LT(mma->active_expert_weight_bytes(), slot->active_expert_weight_bytes());
  o.tp = 2;
  auto tp2 = PlanDecode(o);
  ASSERT_TRUE(tp2.ok()) << tp2.status();
  int comm = 0;
  for (const auto& k : tp2->kernels()) comm += k.kernel_id() == "comm.allreduce";
  EXPECT_EQ(comm, 2 * 4);
  o.tp = 3;
  EXPECT_EQ(PlanDecode(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlanTest, BadOptionsAreRefused) {
  RunOptions o;
  o.model = "tiny";
  o.format = "fp8";
  EXPECT_EQ(PlanDecode(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.format = "mxfp4";
  o.batch = 0;
  EXPECT_EQ(PlanDecode(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.batch = 1;
  o.layers = 3;
  EXPECT_EQ(PlanDecode(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlanTest, ContextLengthsSpreadFromFullToHalf) {
  auto lens = ContextLengths(256, 5);
  ASSERT_EQ(lens.size(), 5u);
  EXPECT_EQ(lens[0], 256);
  EXPECT_EQ(lens[4], 128);
  EXPECT_EQ(ContextLengths(7, 1)[0], 7);
}

}  // namespace
}  // namespace qprof::runtime
