// Analyze() on a hand-built trace whose answer is computed by hand (see the fixture).
#include "analysis/analyze.h"

#include <map>

#include "gtest/gtest.h"
#include "tests/analysis/fixture_util.h"

namespace qprof {
namespace {

std::map<std::string, uint64_t> ClassTimes(const proto::Profile& p) {
  std::map<std::string, uint64_t> m;
  for (const auto& c : p.classes()) m[c.class_()] = c.time_ns();
  return m;
}

const proto::KernelRow* Kernel(const proto::Profile& p, const std::string& prefix) {
  for (const auto& k : p.kernels()) {
    if (k.name().rfind(prefix, 0) == 0) return &k;
  }
  return nullptr;
}

TEST(Analyze, KnownAnswerTrace) {
  proto::Trace t = testing::LoadTextTrace("golden/decode_known_answer.textproto");
  auto r = Analyze({t}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  const proto::Profile& p = *r;
  // Per step 13000 ns of kernels (8 launches), two steps.
  EXPECT_EQ(p.totals().kernel_time_ns(), 26000u);
  EXPECT_EQ(p.totals().kernel_count(), 16u);
  EXPECT_EQ(p.totals().busy_time_ns(), 24000u);  // the fill overlaps the slot GEMV
  EXPECT_EQ(p.totals().span_ns(), 25000u);
  EXPECT_EQ(p.totals().idle_ns(), 1000u);        // the gap between the two steps
  EXPECT_EQ(p.totals().memcpy_time_ns(), 300u);
  EXPECT_DOUBLE_EQ(p.totals().tokens_per_s(), 8 * 1e9 / 40000);
  auto c = ClassTimes(p);
  EXPECT_EQ(c["tensor"], 4000u);   // nvjet
  EXPECT_EQ(c["simt"], 17000u);    // norm + slot GEMV + xmma ffma trap + measured fmha
  EXPECT_EQ(c["comm"], 2000u);
  EXPECT_EQ(c["memory"], 2000u);
  EXPECT_EQ(c["other"], 1000u);    // Kernel2: unknown
  const auto* gemv = Kernel(p, "_mxfp4_slot_gemv_kernel");
  ASSERT_NE(gemv, nullptr);
  EXPECT_EQ(gemv->evidence(), "registry");
  EXPECT_EQ(gemv->format(), "mxfp4");
  EXPECT_EQ(gemv->kernel_id(), "moe.slot_gemv.mxfp4");
  EXPECT_EQ(gemv->calls(), 2u);
  EXPECT_NEAR(gemv->share(), 10000.0 / 26000, 1e-12);
  ASSERT_TRUE(gemv->has_achieved_gbps());
  EXPECT_NEAR(gemv->achieved_gbps(), 2200000.0 / 5000, 1e-9);  // bytes / ns = GB/s
  const auto* fmha = Kernel(p, "fmha_fake_kernel");
  ASSERT_NE(fmha, nullptr);
  EXPECT_EQ(fmha->class_(), "simt");  // measured 0.4% < 1% beats the "fmha" name rule
  EXPECT_EQ(fmha->evidence(), "measured");
  ASSERT_TRUE(fmha->has_tensor_pipe_pct());
  EXPECT_DOUBLE_EQ(fmha->tensor_pipe_pct(), 0.4);
  const auto* trap = Kernel(p, "sm80_xmma_gemm_f32f32");
  ASSERT_NE(trap, nullptr);
  EXPECT_EQ(trap->class_(), "simt");
  EXPECT_EQ(trap->evidence(), "name_rule");
  ASSERT_EQ(p.unknown_kernels_size(), 1);
  EXPECT_EQ(p.unknown_kernels(0), "Kernel2");
  // Steps, ranges, timeline.
  ASSERT_EQ(p.steps_size(), 2);
  EXPECT_EQ(p.steps(0).span_ns(), 12500u);
  EXPECT_EQ(p.steps(0).kernel_time_ns(), 13000u);
  EXPECT_EQ(p.timeline_size(), 8);
  bool moe_range = false;
  for (const auto& r : p.ranges()) {
    if (r.path() == "decode/step */layer */moe") {
      moe_range = true;
      EXPECT_EQ(r.time_ns(), 2 * (5000u + 1000u + 500u));
    }
  }
  EXPECT_TRUE(moe_range);
  // Ceilings: weights per step = 2125000 B at 4.25 bpw = 4e6 params; H200 is profiled.
  ASSERT_GT(p.ceilings().formats_size(), 0);
  const auto& f0 = p.ceilings().formats(0);
  EXPECT_TRUE(f0.is_profiled_device());
  EXPECT_EQ(f0.device(), "H200 SXM");
  EXPECT_EQ(f0.format(), "mxfp4");
  EXPECT_TRUE(f0.is_run_format());
  // bytes = 4e6 * 4.25 / 8 + 75000 activation bytes = 2200000; at 4300 GB/s measured copy.
  EXPECT_NEAR(f0.bytes_per_step(), 2200000.0, 1e-6);
  EXPECT_NEAR(f0.memory_time_ns(), 2200000.0 / 4300, 1e-9);
  EXPECT_EQ(f0.batch(), 4u);
  // Amdahl for the simt class: f = 17000/26000, 1/(1-f) = 26000/9000.
  bool found = false;
  for (const auto& a : p.ceilings().amdahl()) {
    if (a.scope() == "class" && a.name() == "simt") {
      found = true;
      EXPECT_NEAR(a.speedup_if_vanished(), 26000.0 / 9000, 1e-12);
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace qprof
