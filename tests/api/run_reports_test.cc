// The report-writing half of `qprof run` (api/run_reports.h) on two small traces.
#include "api/run_reports.h"

#include <filesystem>
#include <string>

#include "base/file_util.h"
#include "gtest/gtest.h"
#include "reports/json/json_report.h"
#include "tests/reports/fixtures.h"

namespace qprof::api {
namespace {

namespace fs = std::filesystem;

proto::Trace TraceFor(const std::string& format) {
  proto::Trace t = testing::MakeFixtureTrace();
  auto* run = t.mutable_header()->mutable_run();
  run->set_format(format);
  run->set_batch(4);
  run->set_steps(1);
  run->set_tokens_generated(4);
  run->set_wall_time_ns(format == "mxfp4" ? 400'000 : 300'000);
  t.mutable_header()->set_source_path(format + ".qtrace");
  return t;
}

TEST(RunReportsTest, WritesEveryFileAndSaysWhere) {
  const fs::path dir = fs::temp_directory_path() / ("qprof_run_reports_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<FormatRunOutput> runs;
  for (const char* f : {"mxfp4", "nvfp4"}) {
    runs.push_back({f, TraceFor(f), (dir / (std::string(f) + ".qtrace")).string()});
  }
  std::vector<std::string> stages;
  absl::StatusOr<std::string> st =
      WriteRunReports(runs, {}, dir.string(), "", [&](const std::string& s) { stages.push_back(s); });
  ASSERT_TRUE(st.ok()) << st.status();
  const std::string text = *st;
  EXPECT_EQ(stages, (std::vector<std::string>{"analysing mxfp4 ...", "analysing nvfp4 ...",
                                              "writing the diff ..."}));
  for (const char* name : {"mxfp4.json", "mxfp4.html", "mxfp4.perfetto.json", "nvfp4.json",
                           "nvfp4.html", "nvfp4.perfetto.json", "diff.json", "diff.html"}) {
    EXPECT_TRUE(fs::exists(dir / name)) << name;
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
  auto a = reports::ProfileFromJson(*ReadFile((dir / "mxfp4.json").string()));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->label(), "mxfp4");
  auto d = reports::DiffFromJson(*ReadFile((dir / "diff.json").string()));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->a().label(), "mxfp4");
  EXPECT_EQ(d->b().label(), "nvfp4");
  EXPECT_NE(text.find("diff.{json,html}  <- start here"), std::string::npos) << text;
  EXPECT_NE(text.find("mxfp4.{qtrace,json,html,perfetto.json}"), std::string::npos) << text;
  EXPECT_NE(text.find("tokens/s: mxfp4 10.0k -> nvfp4 13.3k (1.33x)"), std::string::npos)
      << text;
  fs::remove_all(dir);
}

TEST(RunReportsTest, OneFormatWritesNoDiff) {
  const fs::path dir = fs::temp_directory_path() / ("qprof_run_one_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<FormatRunOutput> runs = {{"nvfp4", TraceFor("nvfp4"), (dir / "nvfp4.qtrace").string()}};
  absl::StatusOr<std::string> st = WriteRunReports(runs, {}, dir.string());
  ASSERT_TRUE(st.ok()) << st.status();
  const std::string text = *st;
  EXPECT_NE(text.find("nvfp4.html in a browser"), std::string::npos) << text;
  EXPECT_TRUE(fs::exists(dir / "nvfp4.html"));
  EXPECT_FALSE(fs::exists(dir / "diff.html"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qprof::api
