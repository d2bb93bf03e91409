// The synthetic Kineto trace shaped like the user story (tests/analysis/testdata/
// make_story_trace.py: MXFP4 slot-GEMV and sparse-decode kernels launched from an
// SGLang-like MoE and attention stack with small grids on an RTX PRO 6000): the slot-GEMV
// is moe.experts, the sparse decode attn.sparse_mla by its launch context, both are flagged
// as under one wave with the numbers (as questions: the trace gives no work to place them
// on the roofline), and the reports show contexts and occupancy.
#include <string>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "reports/html/html_report.h"
#include "reports/terminal/terminal_report.h"

namespace qprof {
namespace {

const proto::KernelRow* Find(const proto::Profile& p, const std::string& name) {
  for (const auto& k : p.kernels()) {
    if (k.name() == name) return &k;
  }
  return nullptr;
}

class StoryTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    importers::ImportOptions io;
    io.progress = false;
    auto t = importers::ImportFile(
        std::string(QPROF_SOURCE_DIR) + "/tests/analysis/testdata/story_sglang_mxfp4_kineto.json", io);
    ASSERT_TRUE(t.ok()) << t.status();
    trace_ = *std::move(t);
    auto p = Analyze({trace_}, {});
    ASSERT_TRUE(p.ok()) << p.status();
    profile_ = *std::move(p);
  }
  proto::Trace trace_;
  proto::Profile profile_;
};

TEST_F(StoryTrace, RolesFromTheSglangStack) {
  const proto::KernelRow* slot = Find(profile_, "_mxfp4_slot_gemv_kernel");
  const proto::KernelRow* mla = Find(profile_, "_tiled_sparse_decode_kernel");
  ASSERT_NE(slot, nullptr);
  ASSERT_NE(mla, nullptr);
  EXPECT_EQ(slot->role(), "moe.experts");
  EXPECT_EQ(slot->class_(), "simt");  // name rule *mxfp4_slot_gemv*
  EXPECT_EQ(slot->format(), "mxfp4");
  EXPECT_NE(slot->launch_context().find("mxfp4"), std::string::npos) << slot->launch_context();
  EXPECT_EQ(mla->role(), "attn.sparse_mla");
  EXPECT_EQ(mla->evidence(), "launch_context");
  EXPECT_NE(mla->evidence_detail().find("sparse"), std::string::npos);
  // The shares are the trace's construction (39% and 38%), read back exactly.
  double moe = 0, sparse = 0;
  for (const auto& r : profile_.roles()) {
    if (r.role() == "moe.experts") moe = r.share();
    if (r.role() == "attn.sparse_mla") sparse = r.share();
  }
  uint64_t slot_ns = 0, mla_ns = 0, all = 0;
  for (const auto& a : trace_.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    all += a.end_ns() - a.start_ns();
    if (a.name() == "_mxfp4_slot_gemv_kernel") slot_ns += a.end_ns() - a.start_ns();
    if (a.name() == "_tiled_sparse_decode_kernel") mla_ns += a.end_ns() - a.start_ns();
  }
  EXPECT_NEAR(moe, static_cast<double>(slot_ns) / all, 1e-9);
  EXPECT_NEAR(sparse, static_cast<double>(mla_ns) / all, 1e-9);
  // Router, norm and comm kernels keep their own roles inside the same stack (and the trace
  // has each of them: a check over no kernel would pass by default).
  int router = 0, comm = 0, norm = 0;
  for (const auto& k : profile_.kernels()) {
    if (k.name().find("grouped_topk") != std::string::npos) {
      ++router;
      EXPECT_EQ(k.role(), "moe.router") << k.name();
    }
    if (k.name().find("cross_device_reduce") != std::string::npos) {
      ++comm;
      EXPECT_EQ(k.role(), "comm") << k.name();
    }
    if (k.name().find("RMSNorm") != std::string::npos) {
      ++norm;
      EXPECT_EQ(k.role(), "norm") << k.name();
    }
  }
  EXPECT_GT(router, 0);
  EXPECT_GT(comm, 0);
  EXPECT_GT(norm, 0);
}

TEST_F(StoryTrace, BothStoryKernelsAreFlaggedWithTheirNumbers) {
  const proto::KernelRow* slot = Find(profile_, "_mxfp4_slot_gemv_kernel");
  const proto::KernelRow* mla = Find(profile_, "_tiled_sparse_decode_kernel");
  ASSERT_NE(slot, nullptr);
  ASSERT_NE(mla, nullptr);
  // Sparse decode: 8 x 16 = 128 blocks of 128 threads, 168 registers on sm_120: 168 x 32 =
  // 5376 per warp, 16384 / 5376 = 3 warps per sub-partition = 12 warps = 3 blocks per SM.
  EXPECT_EQ(mla->launch().blocks(), 128u);
  EXPECT_EQ(mla->launch().active_blocks_per_sm(), 3u);
  EXPECT_NEAR(mla->launch().waves(), 128.0 / (188 * 3), 1e-9);
  ASSERT_TRUE(mla->has_diagnosis());
  EXPECT_EQ(mla->diagnosis().kind(), "parallelism_bound");
  EXPECT_NE(mla->diagnosis().evidence().find("128 blocks on 188 SMs"), std::string::npos)
      << mla->diagnosis().evidence();
  EXPECT_NE(mla->diagnosis().evidence().find("60 SMs idle"), std::string::npos);
  EXPECT_NE(mla->diagnosis().remedy().find("split"), std::string::npos);
  // Slot-GEMV: 96 (routed) and 16 (shared expert) programs; 8 blocks fit per SM.
  EXPECT_EQ(slot->launch().blocks(), 96u);
  EXPECT_EQ(slot->launch().active_blocks_per_sm(), 8u);
  ASSERT_TRUE(slot->has_diagnosis());
  EXPECT_EQ(slot->diagnosis().kind(), "parallelism_bound");
  EXPECT_NE(slot->diagnosis().evidence().find("92 SMs idle"), std::string::npos)
      << slot->diagnosis().evidence();
  // The trace records no shapes, so nothing places the two on the roofline: the launch
  // shape makes them questions, not verdicts, each with what would settle it.
  EXPECT_TRUE(slot->diagnosis().hypothesis());
  EXPECT_TRUE(mla->diagnosis().hypothesis());
  EXPECT_NE(mla->diagnosis().settle().find("bandwidth"), std::string::npos);
  EXPECT_EQ(profile_.launch_summary().latency_bound_kernels(), 0u);
  EXPECT_GE(profile_.launch_summary().latency_hypothesis_time_share(),
            slot->share() + mla->share() - 1e-9);
  EXPECT_EQ(profile_.launch_summary().launches_with_context(),
            profile_.launch_summary().launches());
}

TEST_F(StoryTrace, ReportsShowContextsOccupancyAndTheDiagnosis) {
  reports::TerminalOptions o;
  o.width = 120;
  std::string text = reports::ProfileSummaryText(profile_, o);
  EXPECT_NE(text.find("Launches of the top kernels"), std::string::npos) << text;
  EXPECT_NE(text.find("Parallelism-bound? ("), std::string::npos) << text;
  EXPECT_EQ(text.find("Latency- and parallelism-bound kernels"), std::string::npos);
  EXPECT_NE(text.find("128 blocks on 188 SMs"), std::string::npos);
  EXPECT_NE(text.find("sparse_decode.py"), std::string::npos);
  std::string html = reports::RenderProfileHtml(profile_, {});
  EXPECT_NE(html.find("id=\"latency\""), std::string::npos);
  EXPECT_NE(html.find("<details class=\"rolek\">"), std::string::npos);
  EXPECT_NE(html.find("launched from"), std::string::npos);
  EXPECT_NE(html.find("under one wave"), std::string::npos);
}

}  // namespace
}  // namespace qprof
