#include "reports/json/json_report.h"

#include <filesystem>
#include <string>

#include "base/file_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/reports/fixtures.h"

namespace qprof::reports {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("qprof_reports_" + name + "_" +
                                            std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

TEST(JsonReportTest, UsesSnakeCaseFieldNamesAndPrintsZeroScalars) {
  proto::Profile p = testing::MakeFixtureProfile("mxfp4", /*with_metrics=*/false);
  auto json = ProfileToJson(p);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"schema_version\": 1"), std::string::npos);
  EXPECT_NE(json->find("\"kernel_time_ns\""), std::string::npos);
  EXPECT_NE(json->find("\"evidence_detail\""), std::string::npos);
  EXPECT_EQ(json->find("kernelTimeNs"), std::string::npos);
  // records_dropped is 0 but still printed, so consumers read a number, not a missing key.
  EXPECT_NE(json->find("\"records_dropped\": 0,"), std::string::npos) << *json;
}

TEST(JsonReportTest, TensorPipePctAppearsOnlyWhenMeasured) {
  auto without = ProfileToJson(testing::MakeFixtureProfile("mxfp4", false));
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->find("tensor_pipe_pct"), std::string::npos);
  // achieved_gbps is not a metric: it comes from the rows' work (the fixture gives some rows
  // work), so it may appear either way.

  auto with = ProfileToJson(testing::MakeFixtureProfile("mxfp4", true));
  ASSERT_TRUE(with.ok());
  EXPECT_NE(with->find("\"tensor_pipe_pct\": 0.6"), std::string::npos);
  // A measured 0% is a measurement and must be printed.
  EXPECT_NE(with->find("\"tensor_pipe_pct\": 0\n"), std::string::npos) << *with;
}

TEST(JsonReportTest, ProfileRoundTrips) {
  proto::Profile p = testing::MakeFixtureProfile("nvfp4", true);
  auto json = ProfileToJson(p, {.pretty = false});
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(json->find('\n'), std::string::npos);
  auto back = ProfileFromJson(*json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*back, p));
  EXPECT_TRUE(back->kernels(0).has_tensor_pipe_pct());
}

TEST(JsonReportTest, DiffRoundTripsAndKeepsOptionalRatio) {
  auto a = testing::MakeFixtureProfile("mxfp4", false);
  auto b = testing::MakeFixtureProfile("nvfp4", false);
  proto::Diff d = testing::MakeFixtureDiff(a, b);
  auto json = DiffToJson(d);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"tokens_per_s_ratio\""), std::string::npos);
  EXPECT_NE(json->find("\"tensor_share_delta\""), std::string::npos);
  EXPECT_NE(json->find("\"status\": \"only_b\""), std::string::npos);
  auto back = DiffFromJson(*json);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*back, d));
}

TEST(JsonReportTest, ParseErrorNamesTheInput) {
  auto bad = ProfileFromJson("{\"schema_version\": \"x\"", "/tmp/broken.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("/tmp/broken.json"), std::string::npos);
}

TEST(JsonReportTest, WritesAtomicallyAndLeavesNoTemporaries) {
  const std::string dir = TempDir("json");
  const std::string path = dir + "/mxfp4.json";
  auto p = testing::MakeFixtureProfile("mxfp4", false);
  ASSERT_TRUE(WriteProfileJson(p, path).ok());
  auto text = ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, *ProfileToJson(p));
  ASSERT_TRUE(WriteDiffJson(testing::MakeFixtureDiff(p, p), dir + "/diff.json").ok());
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
  EXPECT_EQ(files, 2);
  fs::remove_all(dir);
}

TEST(JsonReportTest, WriteIntoMissingDirectoryFailsAndNamesPath) {
  auto st = WriteProfileJson(testing::MakeFixtureProfile("mxfp4", false),
                             "/nonexistent-qprof-dir/x.json");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(std::string(st.message()).find("/nonexistent-qprof-dir/x.json"), std::string::npos);
}

}  // namespace
}  // namespace qprof::reports
