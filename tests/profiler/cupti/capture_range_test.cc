// CaptureGate and the option parsers (profiler/capture_range.h), with nsys's semantics.
#include "profiler/capture_range.h"

#include "gtest/gtest.h"

namespace qprof::profiler {
namespace {

CaptureSpec Spec(const std::string& range, const std::string& end) {
  CaptureSpec s;
  std::string error;
  EXPECT_TRUE(ParseCaptureRange(range, &s, &error)) << error;
  EXPECT_TRUE(ParseCaptureRangeEnd(end, &s, &error)) << error;
  return s;
}

TEST(CaptureRangeTest, ParsesNsysSpellings) {
  CaptureSpec s = Spec("nvtx:decode step@vllm", "repeat:3");
  EXPECT_EQ(s.trigger, CaptureSpec::Trigger::kNvtx);
  EXPECT_EQ(s.nvtx_name, "decode step");
  EXPECT_EQ(s.nvtx_domain, "vllm");
  EXPECT_EQ(s.limit, 3u);
  EXPECT_EQ(s.Describe(), "nvtx:decode step@vllm");
  EXPECT_EQ(s.EndText(), "repeat:3");
  EXPECT_EQ(Spec("cudaProfilerApi", "stop-shutdown").Describe(), "cudaProfilerApi");
  EXPECT_TRUE(Spec("cudaProfilerApi", "stop-shutdown").shutdown());
  CaptureSpec bad;
  std::string error;
  EXPECT_FALSE(ParseCaptureRange("cudaProfilerAPI", &bad, &error));
  EXPECT_NE(error.find("cudaProfilerApi"), std::string::npos);
  EXPECT_FALSE(ParseCaptureRangeEnd("repeat-shutdown", &bad, &error));  // N is required
  EXPECT_FALSE(ParseCaptureRangeEnd("repeat:0", &bad, &error));
  EXPECT_FALSE(ParseNvtxCapture("step@", &bad, &error));
}

TEST(CaptureRangeTest, ProfilerApiStopEndsCapturingForGood) {
  CaptureGate g(Spec("cudaProfilerApi", "stop"), 0);
  EXPECT_FALSE(g.OpenAt(5));
  EXPECT_EQ(g.ProfilerStart(10), CaptureGate::Change::kOpened);
  EXPECT_EQ(g.ProfilerStart(15), CaptureGate::Change::kNone);  // no effect while open
  EXPECT_EQ(g.ProfilerStop(20), CaptureGate::Change::kClosed);
  EXPECT_TRUE(g.done());
  EXPECT_EQ(g.ProfilerStart(30), CaptureGate::Change::kNone);  // later ranges ignored
  EXPECT_TRUE(g.OpenAt(10));
  EXPECT_TRUE(g.OpenAt(19));
  EXPECT_FALSE(g.OpenAt(20));
  EXPECT_FALSE(g.OpenAt(35));
}

TEST(CaptureRangeTest, RepeatKeepsEveryRangeUpToN) {
  CaptureGate g(Spec("cudaProfilerApi", "repeat:2"), 0);
  g.ProfilerStart(10);
  g.ProfilerStop(20);
  EXPECT_FALSE(g.done());
  g.ProfilerStart(30);
  EXPECT_EQ(g.ProfilerStop(40), CaptureGate::Change::kClosed);
  EXPECT_TRUE(g.done());
  EXPECT_EQ(g.ProfilerStart(50), CaptureGate::Change::kNone);
  EXPECT_TRUE(g.OpenAt(35));
  EXPECT_FALSE(g.OpenAt(25));
  EXPECT_EQ(g.windows().size(), 2u);
}

TEST(CaptureRangeTest, NoneIgnoresTheEnd) {
  CaptureGate g(Spec("cudaProfilerApi", "none"), 0);
  g.ProfilerStart(10);
  EXPECT_EQ(g.ProfilerStop(20), CaptureGate::Change::kNone);
  EXPECT_TRUE(g.OpenAt(1000));
}

// The range opens with the named push and closes with ITS pop, not an inner one; other
// threads' and domains' ranges do not close it.
TEST(CaptureRangeTest, NvtxRangeByNameOnItsThreadAndDomain) {
  CaptureGate g(Spec("nvtx:profile@*", "stop"), 0);
  g.NvtxPush(1, "", "warmup", 5);
  g.NvtxPop(1, "", 6);
  EXPECT_EQ(g.NvtxPush(1, "app", "profile", 10), CaptureGate::Change::kOpened);
  g.NvtxPush(1, "app", "step", 11);
  EXPECT_EQ(g.NvtxPop(1, "app", 12), CaptureGate::Change::kNone);  // the inner one
  EXPECT_EQ(g.NvtxPop(2, "app", 13), CaptureGate::Change::kNone);  // another thread
  EXPECT_EQ(g.NvtxPop(1, "", 14), CaptureGate::Change::kNone);     // another domain
  EXPECT_EQ(g.NvtxPop(1, "app", 15), CaptureGate::Change::kClosed);
  EXPECT_FALSE(g.OpenAt(5));
  EXPECT_TRUE(g.OpenAt(12));
  EXPECT_FALSE(g.OpenAt(15));
  // The default domain only, unless a domain is named.
  CaptureGate d(Spec("nvtx:profile", "stop"), 0);
  EXPECT_EQ(d.NvtxPush(1, "app", "profile", 10), CaptureGate::Change::kNone);
  EXPECT_EQ(d.NvtxPush(1, "", "profile", 11), CaptureGate::Change::kOpened);
  // Start/end ranges close by id.
  CaptureGate se(Spec("nvtx:profile", "stop"), 0);
  EXPECT_EQ(se.NvtxStart(7, "", "profile", 10), CaptureGate::Change::kOpened);
  EXPECT_EQ(se.NvtxEnd(8, 11), CaptureGate::Change::kNone);
  EXPECT_EQ(se.NvtxEnd(7, 12), CaptureGate::Change::kClosed);
}

TEST(CaptureRangeTest, DelayComesFirst) {
  CaptureSpec s;
  s.delay_s = 1e-6;  // 1000 ns
  CaptureGate g(s, 100);
  EXPECT_FALSE(g.OpenAt(1099));
  EXPECT_TRUE(g.OpenAt(1100));
  CaptureSpec c = Spec("cudaProfilerApi", "stop");
  c.delay_s = 1e-6;
  CaptureGate both(c, 100);
  both.ProfilerStart(500);
  EXPECT_FALSE(both.OpenAt(600));  // inside the range, before the delay ends
  EXPECT_TRUE(both.OpenAt(1200));
}

}  // namespace
}  // namespace qprof::profiler
