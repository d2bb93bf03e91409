// Calibration on synthetic "measured" traces: the model's own trace with known per-path
// distortions, so the expected errors and fits are known exactly.
#include "analysis/model/calibration.h"

#include "gtest/gtest.h"
#include "tests/analysis/model/test_plans.h"

namespace qprof::model {
namespace {

using testing::MoeLayerPlan;
using testing::RoundDevice;

// Turns a modelled result into a "measured" trace of `steps` steps: each kernel's body
// (model time minus launch overhead) times `factor(kernel_id)`, laid end to end with a
// 1 us gap, attributed like the runtime does (role from the registry, evidence registry).
template <typename F>
proto::Trace Synthetic(const ModelResult& model, int steps, F factor) {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  t.mutable_header()->set_source_path("synthetic.qtrace");
  proto::RunInfo* run = t.mutable_header()->mutable_run();
  run->set_model("hand");
  run->set_format("mxfp4");
  run->set_steps(steps);
  int64_t now = 1000;
  for (int s = 0; s < steps; ++s) {
    for (const proto::Activity& m : model.trace.activities()) {
      proto::Activity* a = t.add_activities();
      *a = m;
      a->set_nvtx_path("decode/step " + std::to_string(s) + "/x");
      a->mutable_attribution()->set_evidence("registry");
      double body = (m.end_ns() - m.start_ns()) - std::stod(m.args().at("model.launch_ns"));
      int64_t dur = static_cast<int64_t>(body * factor(m.kernel_id()));
      a->set_start_ns(now);
      a->set_end_ns(now + dur);
      now += dur + 1000;
    }
  }
  run->set_wall_time_ns(now - 1000);
  return t;
}

class CalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    plan_ = MoeLayerPlan(16, true, 8);
    params_ = DefaultModelParameters();
    auto r = ModelDecodeStep(plan_, RoundDevice(), params_);
    ASSERT_TRUE(r.ok());
    model_ = *r;
  }
  proto::DecodePlan plan_;
  ModelParameters params_;
  ModelResult model_;
};

TEST_F(CalibrationTest, PerfectMeasurementHasNoError) {
  proto::Trace m = Synthetic(model_, 3, [](const std::string&) { return 1.0; });
  auto rep = Calibrate(m, plan_, model_, params_, "round");
  ASSERT_TRUE(rep.ok()) << rep.status();
  EXPECT_EQ(rep->steps, 3);
  EXPECT_LT(rep->worst_role_error, 1e-3);
  EXPECT_EQ(rep->by_role.size(), 3u);
  EXPECT_EQ(rep->by_path.size(), 3u);
  for (const FittedEfficiency& f : rep->fits) EXPECT_NEAR(f.fitted, f.current, 1e-3);
  EXPECT_TRUE(rep->warnings.empty()) << rep->warnings.front();
}

TEST_F(CalibrationTest, SlowMoeShowsAsErrorAndFit) {
  // The MoE kernel (memory-bound in the model) measures 1.25x slower; attention 0.8x.
  proto::Trace m = Synthetic(model_, 2, [](const std::string& id) {
    return id == "moe.slot_gemv.mxfp4" ? 1.25 : id == "attn.test" ? 0.8 : 1.0;
  });
  auto rep = Calibrate(m, plan_, model_, params_, "round");
  ASSERT_TRUE(rep.ok());
  std::map<std::string, CalibrationRow> roles;
  for (const auto& r : rep->by_role) roles[r.key] = r;
  EXPECT_NEAR(roles["moe.experts"].error, 1 / 1.25 - 1, 1e-3);
  EXPECT_NEAR(roles["attn.sparse_mla"].error, 1 / 0.8 - 1, 1e-3);
  EXPECT_NEAR(roles["comm"].error, 0, 1e-3);
  EXPECT_NEAR(rep->worst_role_error, 0.25, 1e-3);
  EXPECT_EQ(rep->by_role.front().key, "moe.experts");  // sorted by time
  EXPECT_EQ(rep->by_path.front().bound, "memory");
  EXPECT_TRUE(rep->by_role.front().bound.empty());
  // Both attention and MoE are memory-bound here: the fit pools them.
  const KernelEstimate& moe = model_.kernels[1];
  const KernelEstimate& attn = model_.kernels[0];
  ASSERT_EQ(moe.time.bound, "memory");
  ASSERT_EQ(attn.time.bound, "memory");
  double mb = moe.time.total_ns - moe.time.launch_ns, ab = attn.time.total_ns - attn.time.launch_ns;
  double expected = 0.85 * (mb + ab) / (1.25 * mb + 0.8 * ab);
  ASSERT_EQ(rep->fits.size(), 1u);
  EXPECT_EQ(rep->fits[0].parameter, "memory_bandwidth_efficiency");
  EXPECT_NEAR(rep->fits[0].fitted, expected, 2e-3);
  EXPECT_EQ(rep->fits[0].kernels, 2);
  std::vector<std::string> lines = FitDataLines(*rep, "2026-11-29");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("{\"round\", \"memory_bandwidth_efficiency\", "), std::string::npos);
  EXPECT_NE(lines[0].find("synthetic.qtrace"), std::string::npos);
  std::string table = CalibrationTable(*rep);
  EXPECT_NE(table.find("-20.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("+25.0%"), std::string::npos) << table;
}

TEST_F(CalibrationTest, ImplausibleFitIsFlaggedNotEmitted) {
  // Faster than the model's bandwidth allows: efficiency > 1.
  proto::Trace m = Synthetic(model_, 1, [](const std::string& id) { return 0.5; });
  auto rep = Calibrate(m, plan_, model_, params_, "round");
  ASSERT_TRUE(rep.ok());
  ASSERT_FALSE(rep->fits.empty());
  EXPECT_FALSE(rep->fits[0].plausible);
  EXPECT_TRUE(FitDataLines(*rep, "d").empty());
}

TEST_F(CalibrationTest, MismatchesAndMissingRolesWarn) {
  proto::Trace m = Synthetic(model_, 1, [](const std::string&) { return 1.0; });
  m.mutable_header()->mutable_run()->set_format("nvfp4");
  proto::Activity* extra = m.add_activities();
  extra->set_kind(proto::ACTIVITY_KIND_KERNEL);
  extra->set_name("unknown_kernel");
  extra->set_start_ns(1);
  extra->set_end_ns(500);
  auto rep = Calibrate(m, plan_, model_, params_, "round");
  ASSERT_TRUE(rep.ok());
  bool format_warned = false, other_warned = false;
  for (const std::string& w : rep->warnings) {
    format_warned |= w.find("format differs") != std::string::npos;
    other_warned |= w.find("role other is only in the measurement") != std::string::npos;
  }
  EXPECT_TRUE(format_warned);
  EXPECT_TRUE(other_warned);
}

TEST_F(CalibrationTest, RejectsModelledOrEmptyTraces) {
  EXPECT_EQ(Calibrate(model_.trace, plan_, model_, params_, "round").status().code(),
            absl::StatusCode::kInvalidArgument);
  proto::Trace empty;
  empty.mutable_header()->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  EXPECT_EQ(Calibrate(empty, plan_, model_, params_, "round").status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qprof::model
