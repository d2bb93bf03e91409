#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "runtime/cpu_decoder.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace qprof::runtime {
namespace {

RunOptions Tiny(const std::string& format) {
  RunOptions o;
  o.model = "tiny";
  o.format = format;
  o.batch = 5;
  o.steps = 3;
  o.context = 40;
  o.threads = 2;
  return o;
}

TEST(RunDecodeTest, WritesHostTraceWithPlanSequenceAndRangePaths) {
  for (const char* fmt : {"mxfp4", "nvfp4"}) {
    RunOptions o = Tiny(fmt);
    auto r = RunDecode(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const proto::Trace& t = r->trace;
    EXPECT_EQ(t.header().provenance(), proto::PROVENANCE_MEASURED_HOST);
    EXPECT_EQ(t.header().run().format(), fmt);
    EXPECT_EQ(t.header().run().tokens_generated(), 15u);
    EXPECT_GT(t.header().run().wall_time_ns(), 0u);
    ASSERT_EQ(r->tokens.size(), 3u);
    for (const auto& step : r->tokens) {
      ASSERT_EQ(step.size(), 5u);
      for (int32_t tok : step) EXPECT_TRUE(tok >= 0 && tok < 512);
    }
    // Step 0 of the trace launches exactly the plan's kernels, in order, on its paths.
    auto plan = PlanDecode(o);
    ASSERT_TRUE(plan.ok());
    std::vector<const proto::Activity*> step0;
    for (const auto& a : t.activities()) {
      if (a.nvtx_path().rfind("decode/step 0/", 0) == 0) step0.push_back(&a);
    }
    ASSERT_EQ(step0.size(), static_cast<size_t>(plan->kernels_size()));
    for (size_t i = 0; i < step0.size(); ++i) {
      const auto& pk = plan->kernels(static_cast<int>(i));
      EXPECT_EQ(step0[i]->kernel_id(), pk.kernel_id()) << i;
      EXPECT_EQ(step0[i]->nvtx_path(), pk.nvtx_path()) << i;
      EXPECT_EQ(step0[i]->name(), pk.name()) << i;
      EXPECT_EQ(step0[i]->attribution().evidence(), "registry");
      EXPECT_GT(step0[i]->end_ns(), step0[i]->start_ns());
    }
    // Activities of later steps exist too, and ranges cover the layers.
    EXPECT_EQ(t.activities_size(), 3 * plan->kernels_size());
    bool saw_moe_range = false;
    for (const auto& rg : t.ranges()) saw_moe_range |= rg.path() == "decode/step 2/layer 1/moe";
    EXPECT_TRUE(saw_moe_range);
  }
}

TEST(RunDecodeTest, Mxfp4AutoIsSlotPathNvfp4AutoIsMmaRunningGrouped) {
  auto mx = RunDecode(Tiny("mxfp4"));
  auto nv = RunDecode(Tiny("nvfp4"));
  ASSERT_TRUE(mx.ok() && nv.ok());
  EXPECT_EQ(mx->moe_backend_used, "slot_gemv");
  EXPECT_EQ(nv->moe_backend_used, "w4a16_mma");
  bool grouped = false;
  for (const auto& a : nv->trace.activities()) {
    if (a.kernel_id() == "moe.w4a16_mma.nvfp4") {
      grouped = a.args().at("cpu_kernel") == "moe.grouped.nvfp4";
      EXPECT_EQ(a.attribution().pipe_class(), "tensor");
    }
  }
  EXPECT_TRUE(grouped);
}

TEST(RunDecodeTest, DeterministicForASeedAndDifferentAcrossSeeds) {
  auto a = RunDecode(Tiny("mxfp4"));
  auto b = RunDecode(Tiny("mxfp4"));
  RunOptions o = Tiny("mxfp4");
  o.seed = 99;
  auto c = RunDecode(o);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->tokens, b->tokens);
  EXPECT_NE(a->tokens, c->tokens);
}

TEST(CpuDecoderTest, SlotAndGroupedPathsAgreeUpToSummationOrder) {
  for (auto fmt : {kernels::Fp4Format::kMxfp4, kernels::Fp4Format::kNvfp4}) {
    ModelArch c = *PresetArch("tiny");
    kernels::ThreadPool pool(2);
    auto w = MakeSyntheticWeights(c, fmt, 0, 7, &pool);
    ASSERT_TRUE(w.ok()) << w.status();
    DecoderOptions o;
    o.context_lengths = {33, 17, 64};
    o.max_steps = 3;
    o.mla_kernel_id = "attn.sparse_mla.simt";
    o.seed = 7;
    o.moe_kernel_id = std::string("moe.slot_gemv.") + kernels::FormatName(fmt);
    CpuDecoder slot(*w, o, &pool);
    o.moe_kernel_id = std::string("moe.w4a16_mma.") + kernels::FormatName(fmt);
    CpuDecoder grouped(*w, o, &pool);
    ASSERT_TRUE(slot.Init().ok());
    ASSERT_TRUE(grouped.Init().ok());
    std::vector<int32_t> tokens = {1, 100, 511};
    for (int s = 0; s < 3; ++s) {
      std::vector<float> la, lb;
      std::vector<int32_t> na, nb;
      ASSERT_TRUE(slot.Step(s, tokens, nullptr, &la, &na).ok());
      ASSERT_TRUE(grouped.Step(s, tokens, nullptr, &lb, &nb).ok());
      double num = 0, den = 0;
      for (size_t i = 0; i < la.size(); ++i) {
        num += (la[i] - lb[i]) * double(la[i] - lb[i]);
        den += double(la[i]) * la[i];
      }
      EXPECT_LT(std::sqrt(num / den), 1e-4) << "step " << s;
      EXPECT_EQ(na, nb);
      tokens = na;
    }
  }
}

TEST(RunDecodeTest, CheckBoundsFp4ErrorAgainstFp32Experts) {
  double err[2];
  int i = 0;
  for (const char* fmt : {"mxfp4", "nvfp4"}) {
    RunOptions o = Tiny(fmt);
    o.check = true;
    o.steps = 4;
    auto r = RunDecode(o);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->check.has_value());
    EXPECT_EQ(r->check->tokens_compared, 20);
    EXPECT_GT(r->check->logits_rel_error, 0.0);  // FP4 is not exact
    EXPECT_LT(r->check->logits_rel_error, 0.2) << fmt;
    EXPECT_GE(r->check->token_agreement, 0.7) << fmt;
    err[i++] = r->check->logits_rel_error;
  }
  // Outlier channels cost MXFP4's power-of-two, 32-wide block scales more than NVFP4's.
  EXPECT_LT(err[1], err[0]);
}

TEST(RunDecodeTest, BadInputsGiveClearErrors) {
  RunOptions o = Tiny("mxfp4");
  o.model = "nonexistent-model";
  EXPECT_EQ(RunDecode(o).status().code(), absl::StatusCode::kNotFound);
  o = Tiny("mxfp4");
  o.backend = "tpu";
  EXPECT_FALSE(RunDecode(o).ok());
  o = Tiny("mxfp4");
  o.context = 5000;  // beyond tiny's max_seq_len
  auto s = RunDecode(o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("max_seq_len"), std::string::npos);
}

}  // namespace
}  // namespace qprof::runtime
