// Golden tests: the terminal summaries of the fixture profile and diff, compared with the
// checked-in text. After an intended change, regenerate with:
//   QPROF_UPDATE_GOLDEN=1 build/tests/reports/reports_golden_test
#include <cstdlib>
#include <string>

#include "base/file_util.h"
#include "gtest/gtest.h"
#include "reports/terminal/terminal_report.h"
#include "tests/reports/fixtures.h"

namespace qprof::reports {
namespace {

// The project's own notes, which users do not have: no output may cite them (checked
// before the comparison, so a regenerated golden cannot take one in).
constexpr const char* kInternalNames[] = {"FACTS.md", "DESIGN.md", "STYLE.md", "SOURCES.md"};

void CheckGolden(const std::string& name, const std::string& actual) {
  for (const char* internal : kInternalNames) {
    EXPECT_EQ(actual.find(internal), std::string::npos) << name << " cites " << internal;
  }
  const std::string path = std::string(QPROF_SOURCE_DIR) + "/tests/reports/testdata/" + name;
  if (std::getenv("QPROF_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(WriteFileAtomic(path, actual).ok());
    GTEST_SKIP() << "updated " << path;
  }
  auto expected = ReadFile(path);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(actual, *expected) << "golden " << path
                               << " differs; if intended, rerun with QPROF_UPDATE_GOLDEN=1";
}

TEST(GoldenTest, ProfileSummary) {
  CheckGolden("fixture_profile_summary.txt",
              ProfileSummaryText(testing::MakeFixtureProfile("mxfp4", true)));
}

TEST(GoldenTest, DiffSummary) {
  auto a = testing::MakeFixtureProfile("mxfp4", false);
  auto b = testing::MakeFixtureProfile("nvfp4", false);
  CheckGolden("fixture_diff_summary.txt", DiffSummaryText(testing::MakeFixtureDiff(a, b)));
}

}  // namespace
}  // namespace qprof::reports
