// The regression gate (`qprof diff --max-regression`, analysis/diff/verdict.h) through the
// API the command calls, on the shared before/after nsys pair: the expected change of the
// comm role per call is computed here from the raw SQLite tables, not by the analyzer.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "api/diff.h"
#include "gtest/gtest.h"
#include "tests/analysis/raw_nsys.h"

namespace qprof::api {
namespace {

using testing_raw::CommPerCall;
using testing_raw::TestDataDir;

class DiffGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    before_ = TestDataDir() + "/nsys/h100x2_train_before.sqlite";
    after_ = TestDataDir() + "/nsys/h100x2_train_after.sqlite";
    if (!std::filesystem::exists(before_) || !std::filesystem::exists(after_)) {
      GTEST_SKIP() << "shared test data not found at " << TestDataDir()
                   << " (set QPROF_TESTDATA, or place ../shared/testdata beside the repo)";
    }
  }
  absl::StatusOr<DiffResult> Gate(const std::string& limits) {
    DiffRequest r;
    r.a.path = before_;
    r.b.path = after_;
    r.max_regression = limits;
    return Diff(r);
  }
  static const proto::RegressionCheck* Check(const proto::DiffVerdict& v, const std::string& k) {
    for (const auto& c : v.checks()) {
      if (c.key() == k) return &c;
    }
    return nullptr;
  }
  std::string before_, after_;
};

TEST_F(DiffGateTest, TenPercentFailsNamingCommWithItsRawChange) {
  const double want = 100.0 * (CommPerCall(after_) / CommPerCall(before_) - 1.0);
  ASSERT_GT(want, 10.0);  // the pair's comm per call grew (185 us -> 226 us)
  auto r = Gate("10%");
  ASSERT_TRUE(r.ok()) << r.status();
  const proto::DiffVerdict& v = r->diff.verdict();
  EXPECT_EQ(v.unit(), "call");  // neither export records tokens or steps
  EXPECT_TRUE(v.failed()) << v.summary();
  EXPECT_EQ(v.worst(), "comm") << v.summary();
  const proto::RegressionCheck* comm = Check(v, "comm");
  ASSERT_NE(comm, nullptr);
  EXPECT_NEAR(comm->change_pct(), want, 1e-6);
  EXPECT_NEAR(v.worst_change_pct(), want, 1e-6);
  EXPECT_TRUE(comm->exceeded());
  // No steps in these exports: no noise estimate, and the verdict says why.
  EXPECT_EQ(v.noise_per_step_ns(), 0);
  EXPECT_NE(v.noise_note().find("no noise estimate"), std::string::npos) << v.noise_note();
  EXPECT_EQ(v.summary().rfind("comm: time per call", 0), 0u) << v.summary();
  // The Diff's headline is what the reports lead with: the per-unit sentence.
  EXPECT_EQ(r->diff.headline(), r->diff.per_unit_headline());
  EXPECT_FALSE(r->diff.totals_headline().empty());
}

TEST_F(DiffGateTest, CommAtFiftyPercentPasses) {
  auto r = Gate("comm=50%");
  ASSERT_TRUE(r.ok()) << r.status();
  const proto::DiffVerdict& v = r->diff.verdict();
  EXPECT_FALSE(v.failed()) << v.summary();
  ASSERT_EQ(v.checks_size(), 1);  // only the role named: no default limit
  EXPECT_EQ(v.checks(0).key(), "comm");
  EXPECT_EQ(v.checks(0).limit_pct(), 50);
  EXPECT_EQ(v.summary().rfind("no regression past the limits", 0), 0u) << v.summary();
}

TEST_F(DiffGateTest, NoLimitsNoVerdictAndBadLimitsFailBeforeReading) {
  auto r = Gate("");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->diff.has_verdict());
  for (const char* bad : {"ten", "comm=", "-5%", "10%,20%", "comm=5,comm=6", "=5"}) {
    DiffRequest req;
    req.a.path = "/does/not/exist";  // never read: the limits fail first
    req.b.path = "/does/not/exist";
    req.max_regression = bad;
    auto d = Diff(req);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(d.status().message().find("--max-regression"), std::string::npos) << d.status();
  }
}

TEST_F(DiffGateTest, ARoleNeitherSideHasIsAnErrorNamingTheRoles) {
  // A misspelt role would gate nothing: it is refused, with the roles there are. Both
  // exports run NCCL kernels, so comm is among them.
  auto r = Gate("10%,comms=5%");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string m(r.status().message());
  EXPECT_EQ(m.rfind("--max-regression: no role 'comms' in either profile (roles: ", 0), 0u) << m;
  EXPECT_TRUE(m.find(" comm,") != std::string::npos || m.find(" comm;") != std::string::npos)
      << m;
  // "total" is no role of either profile but names all kernels.
  auto total = Gate("total=50%");
  ASSERT_TRUE(total.ok()) << total.status();
  ASSERT_EQ(total->diff.verdict().checks_size(), 1);
  EXPECT_EQ(total->diff.verdict().checks(0).key(), "total");
}

}  // namespace
}  // namespace qprof::api
