#include "reports/html/html_report.h"

#include <filesystem>
#include <regex>
#include <string>

#include "base/file_util.h"
#include "gtest/gtest.h"
#include "reports/common/format.h"
#include "reports/html/html_util.h"
#include "tests/reports/fixtures.h"

namespace qprof::reports {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

void ExpectSelfContained(const std::string& page) {
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  EXPECT_EQ(page.find("@import"), std::string::npos);
  EXPECT_EQ(page.find("url("), std::string::npos);
  EXPECT_FALSE(std::regex_search(page, std::regex("<(script|img|iframe)[^>]*\\ssrc=")));
  EXPECT_EQ(Count(page, "<script>"), 1u);
}

TEST(HtmlEscapeTest, EscapesMarkupAndRepairsUtf8) {
  EXPECT_EQ(html::Escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(html::Escape("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(html::Escape("x\xff y"), "x\xef\xbf\xbd y");
  EXPECT_EQ(html::Escape("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");  // cut 3-byte sequence
  EXPECT_EQ(html::Escape(std::string("a\0b", 3)), "a\xef\xbf\xbd" "b");
}

TEST(HtmlEscapeTest, ProvenanceBadgesSayWhatTheyMean) {
  EXPECT_EQ(html::BadgeKindFor("modelled (not measured)"), "modelled");
  EXPECT_EQ(html::BadgeKindFor("modelled from the device spec table"), "modelled");
  EXPECT_EQ(html::BadgeKindFor("measured on host CPU (not a GPU)"), "host");
  EXPECT_EQ(html::BadgeKindFor("measured on GPU"), "measured");
  EXPECT_EQ(html::BadgeKindFor("imported from a.sqlite"), "imported");
}

TEST(HtmlReportTest, ProfilePageIsSelfContainedAndEscaped) {
  auto p = testing::MakeFixtureProfile("mxfp4", true);
  p.mutable_kernels(1)->set_name("evil</td><script>alert(1)</script>");
  std::string page = RenderProfileHtml(p);
  ExpectSelfContained(page);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("evil&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("_mxfp4_slot_gemv_kernel&lt;6, 2048&gt;"), std::string::npos);
  EXPECT_NE(page.find("silu_and_mul&lt;&amp;&gt;"), std::string::npos);
}

TEST(HtmlReportTest, ProfilePageHasEverySectionAndTheNumbers) {
  auto p = testing::MakeFixtureProfile("mxfp4", true);
  std::string page = RenderProfileHtml(p);
  for (const char* id : {"id=\"split\"", "id=\"bottlenecks\"", "id=\"timeline\"",
                         "id=\"ceilings\"", "id=\"warnings\"", "id=\"class-split\"",
                         "id=\"step-timeline\"", "id=\"waterfall\"", "id=\"kernels\""}) {
    EXPECT_NE(page.find(id), std::string::npos) << id;
  }
  // One kernel row per kernel, one timeline mark per event, one split segment per class.
  EXPECT_EQ(Count(page, "<tr data-class="), static_cast<size_t>(p.kernels_size()));
  EXPECT_EQ(Count(page, "<g class=\"ev\""), static_cast<size_t>(p.timeline_size()));
  EXPECT_EQ(Count(page, "<g class=\"seg\""), static_cast<size_t>(p.classes_size()));
  EXPECT_NE(page.find(FormatSig3(p.totals().tokens_per_s())), std::string::npos);
  EXPECT_NE(page.find("tensor pipe"), std::string::npos);
  EXPECT_NE(page.find("data-tensor-pipe-pct=\"61\""), std::string::npos);
  // Waterfall: measured, Amdahl of the top role, this format's roofline, two other formats.
  EXPECT_EQ(Count(page, "<g class=\"ceil\""), 5u);
  EXPECT_NE(page.find("Amdahl: moe.experts vanished"), std::string::npos);
}

TEST(HtmlReportTest, UnmeasuredMetricsAndHostCpuAreSaid) {
  auto p = testing::MakeFixtureProfile("mxfp4", false);
  p.mutable_collector()->set_metrics_unavailable_reason("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  std::string page = RenderProfileHtml(p);
  EXPECT_EQ(page.find("<th class=\"num\">tensor pipe</th>"), std::string::npos);
  EXPECT_NE(page.find("id=\"no-tensor-pipe\""), std::string::npos);
  EXPECT_NE(page.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos);
  EXPECT_EQ(page.find("provenance-banner"), std::string::npos);
  p.set_provenance(proto::PROVENANCE_MEASURED_HOST);
  p.mutable_devices(0)->set_kind("host_cpu");
  page = RenderProfileHtml(p);
  EXPECT_NE(page.find("Measured on the host CPU, not on a GPU."), std::string::npos);
}

TEST(HtmlReportTest, EmptyProfileStillRenders) {
  proto::Profile p;
  std::string page = RenderProfileHtml(p);
  ExpectSelfContained(page);
  EXPECT_NE(page.find("No timeline in this profile"), std::string::npos);
  EXPECT_NE(page.find("No ceilings"), std::string::npos);
  EXPECT_NE(page.find("id=\"no-warnings\""), std::string::npos);
}

TEST(HtmlReportTest, DiffPageLeadsWithTheStory) {
  auto a = testing::MakeFixtureProfile("mxfp4", false);
  auto b = testing::MakeFixtureProfile("nvfp4", false);
  auto d = testing::MakeFixtureDiff(a, b);
  std::string page = RenderDiffHtml(d, {.a = &a, .b = &b});
  ExpectSelfContained(page);
  const size_t hero = page.find("id=\"headline\"");
  ASSERT_NE(hero, std::string::npos);
  // The headline is the first thing in the body after the title and is about moe.experts.
  EXPECT_LT(hero, page.find("id=\"roles-section\""));
  EXPECT_NE(page.find("moe.experts: simt &rarr; tensor, 39.0% &rarr; "), std::string::npos);
  EXPECT_NE(page.find("id=\"split-a\""), std::string::npos);
  EXPECT_NE(page.find("id=\"split-b\""), std::string::npos);
  EXPECT_EQ(Count(page, "<g class=\"pair\""), static_cast<size_t>(d.roles_size()));
  EXPECT_EQ(Count(page, "data-status=\"only_a\""), 0u);
  EXPECT_EQ(Count(page, "data-status=\"only_b\""), 1u);
  EXPECT_EQ(Count(page, "data-change=\"replaced\""), 1u);
  EXPECT_NE(page.find("<b>1</b> kernel replaced"), std::string::npos);
  EXPECT_NE(page.find("id=\"timeline-a\""), std::string::npos);
  EXPECT_NE(page.find("id=\"timeline-b\""), std::string::npos);
  // Without the profiles, the diff alone still renders the story and the tables.
  std::string bare = RenderDiffHtml(d);
  EXPECT_NE(bare.find("id=\"headline\""), std::string::npos);
  EXPECT_EQ(bare.find("id=\"timeline-a\""), std::string::npos);
}

TEST(HtmlReportTest, WritesAtomically) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("qprof_html_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto p = testing::MakeFixtureProfile("nvfp4", false);
  ASSERT_TRUE(WriteProfileHtml(p, (dir / "p.html").string()).ok());
  auto d = testing::MakeFixtureDiff(p, p);
  ASSERT_TRUE(WriteDiffHtml(d, (dir / "d.html").string()).ok());
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++n;
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos);
  }
  EXPECT_EQ(n, 2);
  EXPECT_EQ(*ReadFile((dir / "p.html").string()), RenderProfileHtml(p));
  EXPECT_FALSE(WriteProfileHtml(p, "/nonexistent-qprof/p.html").ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace qprof::reports
