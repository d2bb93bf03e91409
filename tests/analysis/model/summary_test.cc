#include "analysis/model/summary.h"

#include <cmath>

#include "analysis/model/parameters.h"
#include "analysis/model/published.h"
#include "gtest/gtest.h"
#include "tests/analysis/model/test_plans.h"

namespace qprof::model {
namespace {

using testing::MoeLayerPlan;
using testing::RoundDevice;

double Sum(const std::map<std::string, double>& m) {
  double s = 0;
  for (const auto& [k, v] : m) s += v;
  return s;
}

TEST(Summary, SharesSumToOneAndAmdahlFollows) {
  proto::DecodePlan plan = MoeLayerPlan(16, true, 8);
  auto r = ModelDecodeStep(plan, RoundDevice(), DefaultModelParameters());
  ASSERT_TRUE(r.ok());
  ModelSummary s = Summarize(plan, *r, "round");
  EXPECT_NEAR(Sum(s.role_share), 1, 1e-6);
  EXPECT_NEAR(Sum(s.pipe_share), 1, 1e-6);
  EXPECT_NEAR(Sum(s.bound_share), 1, 1e-6);
  double moe = s.role_share.at("moe.experts");
  EXPECT_GT(moe, 0.5);
  EXPECT_NEAR(s.amdahl_if_removed.at("moe.experts"), 1 / (1 - moe), 1e-9);
  EXPECT_EQ(s.top_roles.front(), "moe.experts");
  EXPECT_NEAR(s.tokens_per_s_per_sequence * 16, s.tokens_per_s, 1e-6);
  EXPECT_EQ(s.launches_per_step, 3u);
  EXPECT_NEAR(s.weight_bytes_per_step, plan.kernels(1).work().weight_bytes(), 1e-6);
  EXPECT_NEAR(s.launch_share, 3 * 3000 / r->step_ns, 1e-9);
}

TEST(Summary, AmdahlOfTheStory) {
  // DESIGN.md: removing a 39% kernel entirely gives at most 1/(1-0.39) = 1.64x.
  EXPECT_NEAR(AmdahlIfRemoved(0.39), 1.639, 1e-3);
  EXPECT_TRUE(std::isinf(AmdahlIfRemoved(1.0)));
  EXPECT_EQ(AmdahlIfRemoved(0), 1);
}

TEST(Summary, JsonIsStableAndEscaped) {
  proto::DecodePlan plan = MoeLayerPlan(4, false);
  auto r = ModelDecodeStep(plan, RoundDevice(), DefaultModelParameters());
  ASSERT_TRUE(r.ok());
  ModelSummary s = Summarize(plan, *r, "round");
  std::string a = SummaryJson({s}, {"a \"quoted\" note\nwith newline"});
  std::string b = SummaryJson({s}, {"a \"quoted\" note\nwith newline"});
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("\"provenance\": \"modelled\""), std::string::npos);
  EXPECT_NE(a.find("a \\\"quoted\\\" note\\nwith newline"), std::string::npos);
  EXPECT_NE(a.find("\"label\": \"mxfp4 via w4a16_mma\""), std::string::npos);
  EXPECT_EQ(SummaryJson({}, {}), "{\n  \"schema_version\": 1,\n  \"provenance\": \"modelled\",\n  \"runs\": [],\n  \"notes\": []\n}\n");
  EXPECT_NE(SummaryTable({s}).find("mxfp4 via w4a16_mma"), std::string::npos);
}

TEST(Published, ComparesOnlyMatchingRuns) {
  ModelSummary s;
  s.model = "v4-flash";
  s.target = "rtx-pro-6000";
  s.format = "mxfp4";
  s.moe_backend = "slot_gemv";
  s.label = "mxfp4 via slot_gemv";
  s.batch = 16;
  s.tokens_per_s = 470;
  s.role_share = {{"moe.experts", 0.5}, {"attn.sparse_mla", 0.1}};
  s.role_bytes = {{"moe.experts", 6e9}};
  std::vector<std::string> notes = ComparisonNotes(s);
  // story (two readings, each with an implied-bandwidth note), SGLang MXFP4, FP8 aside,
  // then five "why" notes (slot-GEMV, sparse MLA, tensor-pipe utilisation, serving stack,
  // FP8).
  ASSERT_EQ(notes.size(), 11u);
  for (size_t i = 6; i < 11; ++i) EXPECT_EQ(notes[i].rfind("why: ", 0), 0u) << notes[i];
  EXPECT_NE(notes[0].find("20.4x the published aggregate 23.0"), std::string::npos) << notes[0];
  // Aggregate reading: step = 16 / 23 s = 695.7 ms; MoE 39% = 271.3 ms; 6 GB in it.
  EXPECT_NE(notes[1].find("22 GB/s"), std::string::npos) << notes[1];
  EXPECT_NE(notes[2].find("1.3x the published aggregate 368.0"), std::string::npos) << notes[2];
  EXPECT_NE(notes[3].find("354 GB/s"), std::string::npos) << notes[3];
  EXPECT_NE(notes[4].find("0.9x the published aggregate 497.6"), std::string::npos) << notes[4];
  s.target = "h200";
  EXPECT_TRUE(ComparisonNotes(s).empty());
  // A grouped NVFP4 run of the story matches only the FP8 aside and its why-note.
  s.target = "rtx-pro-6000";
  s.format = "nvfp4";
  s.moe_backend = "w4a16_mma";
  std::vector<std::string> nv = ComparisonNotes(s);
  ASSERT_EQ(nv.size(), 2u);
  EXPECT_NE(nv[0].find("3412.9"), std::string::npos);
}

TEST(Parameters, DefaultsHaveSourcesAndOverridesParse) {
  ModelParameters p = DefaultModelParameters();
  for (const ModelParameter* x : p.All()) {
    EXPECT_FALSE(x->name.empty());
    EXPECT_FALSE(x->source.empty()) << x->name;
    EXPECT_FALSE(x->unit.empty()) << x->name;
  }
  EXPECT_EQ(ParameterNotes(p).size(), p.All().size());
  ASSERT_TRUE(ApplyParameterOverrides(p, "simt_efficiency=0.25, launch_overhead_ns=1500").ok());
  EXPECT_EQ(p.simt_efficiency.value, 0.25);
  EXPECT_EQ(p.simt_efficiency.source, "set on the command line");
  EXPECT_EQ(p.launch_overhead_ns.value, 1500);
  EXPECT_FALSE(ApplyParameterOverrides(p, "simt_efficiency=1.5").ok());
  EXPECT_FALSE(ApplyParameterOverrides(p, "nonsense=1").ok());
  EXPECT_FALSE(ApplyParameterOverrides(p, "simt_efficiency").ok());
  EXPECT_FALSE(ApplyParameterOverrides(p, "launch_overhead_ns=-1").ok());
  EXPECT_FALSE(ApplyParameterOverrides(p, "tensor_token_tile=0.5").ok());
}

}  // namespace
}  // namespace qprof::model
