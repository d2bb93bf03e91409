// The regression gate's rules (analysis/diff/verdict.h) on synthetic noisy pairs: limits,
// the noise band from the steps' own spread, the minimum share, named roles.
#include "analysis/diff/verdict.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analysis/diff/diff.h"
#include "gtest/gtest.h"

namespace qprof::diff {
namespace {

// A decode run of `steps` steps: attention, MoE and a tiny norm role, each step's kernel
// time jittered by +-`jitter` (uniform, seeded) around `moe_ns` + `attn_ns` + `norm_ns`.
proto::Profile DecodeRun(const std::string& label, int steps, double attn_ns, double moe_ns,
                   double norm_ns, double jitter, uint32_t seed) {
  proto::Profile p;
  p.set_label(label);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-jitter, jitter);
  uint64_t total = 0;
  for (int s = 0; s < steps; ++s) {
    const uint64_t t = static_cast<uint64_t>(attn_ns + moe_ns + norm_ns + u(rng));
    proto::StepRow* r = p.add_steps();
    r->set_step(static_cast<uint32_t>(s));
    r->set_kernel_time_ns(t);
    total += t;
  }
  // Roles hold the step totals in their proportions (the jitter lands on the MoE).
  auto add = [&](const std::string& role, double per_step) {
    proto::RoleRow* r = p.add_roles();
    r->set_role(role);
    r->set_class_("tensor");
    r->set_calls(static_cast<uint64_t>(steps));
    r->set_time_ns(static_cast<uint64_t>(per_step * steps));
    proto::KernelRow* k = p.add_kernels();
    k->set_name(role + "_kernel");
    k->set_role(role);
    k->set_class_("tensor");
    k->set_calls(r->calls());
    k->set_time_ns(r->time_ns());
  };
  add("attn.sparse_mla", attn_ns);
  add("norm", norm_ns);
  add("moe.experts", static_cast<double>(total) / steps - attn_ns - norm_ns);
  for (proto::RoleRow& r : *p.mutable_roles()) {
    r.set_share(static_cast<double>(r.time_ns()) / static_cast<double>(total));
  }
  p.mutable_totals()->set_kernel_time_ns(total);
  p.mutable_totals()->set_kernel_count(static_cast<uint64_t>(3 * steps));
  p.mutable_totals()->set_steps(static_cast<uint32_t>(steps));
  return p;
}

const proto::RegressionCheck* Check(const proto::DiffVerdict& v, const std::string& key) {
  for (const auto& c : v.checks()) {
    if (c.key() == key) return &c;
  }
  return nullptr;
}

proto::DiffVerdict Judge(const proto::Profile& a, const proto::Profile& b, const char* spec) {
  auto limits = ParseRegressionLimits(spec);
  EXPECT_TRUE(limits.ok()) << limits.status();
  return JudgeRegression(DiffProfiles(a, b), a, b, *limits);
}

TEST(DiffVerdict, ParsesLimits) {
  auto l = ParseRegressionLimits(" 10% , comm=50%,moe.experts=2.5");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_TRUE(l->default_pct.has_value());
  EXPECT_EQ(*l->default_pct, 10);
  EXPECT_EQ(l->per_role.at("comm"), 50);
  EXPECT_EQ(l->per_role.at("moe.experts"), 2.5);
  for (const char* bad : {"", " ", "x", "10%%", "-1", "a=", "=1", "1,2", "a=1,a=2", "nan"}) {
    EXPECT_FALSE(ParseRegressionLimits(bad).ok()) << bad;
  }
}

TEST(DiffVerdict, ChangeInsideTheStepsSpreadIsNoise) {
  // 40 steps each; step time jitters by +-50 us around 1 ms; B's MoE is 20 us slower per
  // step (+2% of the total, +3.3% of MoE): past a 1% limit, but inside the spread.
  const proto::Profile a = DecodeRun("a", 40, 300'000, 600'000, 100'000, 50'000, 1);
  const proto::Profile b = DecodeRun("b", 40, 300'000, 620'000, 100'000, 50'000, 2);
  const proto::DiffVerdict v = Judge(a, b, "1%");
  EXPECT_EQ(v.unit(), "step");
  EXPECT_GT(v.noise_per_step_ns(), 50'000);   // p90 - p10 of +-50 us uniform: ~80 us
  EXPECT_LT(v.noise_per_step_ns(), 100'000);
  const proto::RegressionCheck* moe = Check(v, "moe.experts");
  ASSERT_NE(moe, nullptr);
  EXPECT_GT(moe->change_pct(), 1);
  EXPECT_TRUE(moe->within_noise());
  EXPECT_FALSE(moe->exceeded());
  EXPECT_FALSE(v.failed()) << v.summary();
  EXPECT_NE(v.summary().find("within noise"), std::string::npos) << v.summary();
  EXPECT_NE(v.noise_note().find("p90 - p10"), std::string::npos) << v.noise_note();
}

TEST(DiffVerdict, ChangeBeyondTheSpreadFailsAndNamesTheRole) {
  // The same noise, but B's MoE is 200 us slower per step (+33%).
  const proto::Profile a = DecodeRun("a", 40, 300'000, 600'000, 100'000, 50'000, 1);
  const proto::Profile b = DecodeRun("b", 40, 300'000, 800'000, 100'000, 50'000, 2);
  const proto::DiffVerdict v = Judge(a, b, "10%");
  EXPECT_TRUE(v.failed()) << v.summary();
  EXPECT_EQ(v.worst(), "moe.experts");
  EXPECT_NEAR(v.worst_change_pct(), 33.3, 2.0);
  EXPECT_EQ(v.summary().rfind("moe.experts: time per step", 0), 0u) << v.summary();
  // The total grew by 20%: exceeded too, but less past its limit than the MoE.
  ASSERT_NE(Check(v, "total"), nullptr);
  EXPECT_TRUE(Check(v, "total")->exceeded());
  // A named limit above the change lets the MoE pass; the total still fails at 10%.
  const proto::DiffVerdict named = Judge(a, b, "10%,moe.experts=50%");
  EXPECT_FALSE(Check(named, "moe.experts")->exceeded());
  EXPECT_EQ(named.worst(), "total");
}

TEST(DiffVerdict, WithoutStepsEveryChangeCountsAndTinyRolesAreNotGated) {
  // Two steps only: no noise estimate. The norm role (0.05% of time) doubles; by default
  // it is below the minimum share and unchecked, named it is checked and fails.
  proto::Profile a = DecodeRun("a", 2, 300'000, 600'000, 500, 0, 1);
  proto::Profile b = DecodeRun("b", 2, 300'000, 600'000, 1'000, 0, 2);
  proto::DiffVerdict v = Judge(a, b, "10%");
  EXPECT_EQ(v.noise_per_step_ns(), 0);
  EXPECT_NE(v.noise_note().find("no noise estimate"), std::string::npos);
  EXPECT_EQ(Check(v, "norm"), nullptr);
  EXPECT_FALSE(v.failed()) << v.summary();
  v = Judge(a, b, "norm=10%");
  ASSERT_NE(Check(v, "norm"), nullptr);
  EXPECT_TRUE(v.failed());
  EXPECT_EQ(v.worst(), "norm");
  EXPECT_NEAR(v.worst_change_pct(), 100, 1e-9);
  // A named role present on one side only is said, not silently ignored.
  proto::RoleRow* comm = b.add_roles();
  comm->set_role("comm");
  comm->set_class_("comm");
  comm->set_calls(2);
  comm->set_time_ns(1'000);
  v = Judge(a, b, "comm=10%");
  EXPECT_FALSE(v.failed());
  EXPECT_NE(v.summary().find("not on both sides, so not checked: comm"), std::string::npos)
      << v.summary();
}

TEST(DiffVerdict, ARoleOnNeitherSideIsRefusedWithTheRolesThereAre) {
  const proto::Profile a = DecodeRun("a", 2, 300'000, 600'000, 500, 0, 1);
  proto::Profile b = DecodeRun("b", 2, 300'000, 600'000, 1'000, 0, 2);
  proto::RoleRow* comm = b.add_roles();  // on B only
  comm->set_role("comm");
  comm->set_time_ns(1'000);
  const proto::Diff d = DiffProfiles(a, b);
  auto check = [&](const char* spec) {
    auto limits = ParseRegressionLimits(spec);
    EXPECT_TRUE(limits.ok()) << spec;
    return CheckLimitRoles(d, *limits);
  };
  const absl::Status s = check("10%,moe.expert=5%");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "--max-regression: no role 'moe.expert' in either profile (roles: "
            "attn.sparse_mla, comm, moe.experts, norm; 'total' names all kernels)");
  EXPECT_TRUE(check("comm=10%").ok());   // one side is enough: the verdict says it
  EXPECT_TRUE(check("total=10%").ok());  // all kernels
  EXPECT_TRUE(check("10%").ok());        // no role named
}

}  // namespace
}  // namespace qprof::diff
