// The format/path split's arithmetic on known tokens/s figures (the runs themselves are
// covered by cli_run_split_test, which runs the command on the CPU backend).
#include "api/format_path_split.h"

#include <string>

#include "gtest/gtest.h"

namespace qprof::api {
namespace {

SplitSamples ThreeRepetitions() {
  SplitSamples s;
  s.mxfp4_path = "slot_gemv";
  s.nvfp4_path = "w4a16_mma";
  s.a_mx_on_pm = {10, 20, 10};   // A: mxfp4 on slot_gemv
  s.b_mx_on_pn = {20, 30, 25};   // B: mxfp4 on w4a16_mma
  s.c_nv_on_pn = {19, 33, 20};   // C: nvfp4 on w4a16_mma
  return s;
}

TEST(FormatPathSplitTest, RatiosWithinEachRepetitionAndTheirMedians) {
  auto s = SummariseSplit(ThreeRepetitions());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_FALSE(s->same_path);
  // as run C/A: 1.9, 1.65, 2.0; format alone C/B: 0.95, 1.1, 0.8; path alone B/A: 2, 1.5, 2.5.
  EXPECT_DOUBLE_EQ(s->as_run.median, 1.9);
  EXPECT_DOUBLE_EQ(s->as_run.min, 1.65);
  EXPECT_DOUBLE_EQ(s->as_run.max, 2.0);
  EXPECT_DOUBLE_EQ(s->format_alone.median, 0.95);
  EXPECT_DOUBLE_EQ(s->path_alone.median, 2.0);
  EXPECT_DOUBLE_EQ(s->path_alone.min, 1.5);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(s->as_run.values[i], s->format_alone.values[i] * s->path_alone.values[i], 1e-12);
  }
  EXPECT_NEAR(s->path_alone.spread(), (2.5 - 1.5) / 2.0, 1e-12);
}

TEST(FormatPathSplitTest, EvenCountMedianAveragesTheMiddleTwo) {
  SplitSamples in = ThreeRepetitions();
  in.a_mx_on_pm.pop_back();
  in.b_mx_on_pn.pop_back();
  in.c_nv_on_pn.pop_back();
  auto s = SummariseSplit(in);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->as_run.median, (1.9 + 1.65) / 2);
}

TEST(FormatPathSplitTest, TextWarnsOnLargeSpreadAndJsonHasEveryFigure) {
  auto s = SummariseSplit(ThreeRepetitions());
  ASSERT_TRUE(s.ok());
  s->batch = 16;
  s->where = "host CPU, measured";
  const std::string text = FormatSplitText(*s);
  EXPECT_NE(text.find("format alone (both on w4a16_mma)"), std::string::npos) << text;
  EXPECT_NE(text.find("path alone (mxfp4: slot_gemv -> w4a16_mma)"), std::string::npos);
  EXPECT_NE(text.find("1.90x  [1.65..2.00]"), std::string::npos) << text;
  EXPECT_NE(text.find("warning: the ratios vary by up to 50%"), std::string::npos) << text;
  const std::string json = FormatSplitJson(*s);
  EXPECT_NE(json.find("\"mxfp4_on_nvfp4_path\": [20, 30, 25]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"provenance\": \"measured\""), std::string::npos);
}

TEST(FormatPathSplitTest, NoWarningWhenStable) {
  SplitSamples in;
  in.mxfp4_path = "slot_gemv";
  in.nvfp4_path = "w4a16_mma";
  in.a_mx_on_pm = {10, 10.1, 9.9};
  in.b_mx_on_pn = {12, 12.1, 11.9};
  in.c_nv_on_pn = {11, 11.1, 10.9};
  auto s = SummariseSplit(in);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(FormatSplitText(*s).find("warning"), std::string::npos);
}

TEST(FormatPathSplitTest, SamePathHasOnlyTheFormat) {
  SplitSamples in;
  in.mxfp4_path = in.nvfp4_path = "w4a16_mma";
  in.a_mx_on_pm = {10, 12};
  in.c_nv_on_pn = {9, 12};
  auto s = SummariseSplit(in);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->same_path);
  EXPECT_DOUBLE_EQ(s->format_alone.median, 0.95);
  EXPECT_TRUE(s->path_alone.values.empty());
  const std::string text = FormatSplitText(*s);
  EXPECT_NE(text.find("same MoE path"), std::string::npos) << text;
  EXPECT_EQ(FormatSplitJson(*s).find("path_alone"), std::string::npos);
  in.b_mx_on_pn = {1, 1};
  EXPECT_FALSE(SummariseSplit(in).ok());
}

TEST(FormatPathSplitTest, BadSeriesAreRefused) {
  SplitSamples in = ThreeRepetitions();
  in.b_mx_on_pn.pop_back();
  EXPECT_FALSE(SummariseSplit(in).ok());
  in = ThreeRepetitions();
  in.c_nv_on_pn[1] = 0;
  EXPECT_FALSE(SummariseSplit(in).ok());
  EXPECT_FALSE(SummariseSplit(SplitSamples()).ok());
}

}  // namespace
}  // namespace qprof::api
