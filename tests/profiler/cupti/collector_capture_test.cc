// Issue 35: capture ranges (`qprof record --capture-range`), in process on the fake GPU:
// only the work launched inside cudaProfilerStart/Stop or a named NVTX range is recorded,
// in a trace and in a metrics pass, with nsys's range-end behaviour; the trace says which
// range was captured.
#include <algorithm>
#include <map>

#include "profiler/cupti/collector_core.h"
#include "tests/profiler/cupti/collector_test_util.h"

namespace qprof::profiler::cupti {
namespace {

using testing::CollectorSeamTest;
using testing::HasWarning;

class CaptureSeamTest : public CollectorSeamTest {
 protected:
  static CaptureSpec Capture(const std::string& range, const std::string& end) {
    CaptureSpec s;
    std::string error;
    EXPECT_TRUE(ParseCaptureRange(range, &s, &error)) << error;
    EXPECT_TRUE(ParseCaptureRangeEnd(end, &s, &error)) << error;
    return s;
  }
  static std::map<std::string, int> Names(const proto::Trace& t) {
    std::map<std::string, int> out;
    for (const proto::Activity& a : t.activities()) ++out[a.name()];
    return out;
  }
  static const std::string& Extra(const proto::Trace& t, const std::string& key) {
    static const std::string none;
    auto it = t.header().run().extra().find(key);
    return it == t.header().run().extra().end() ? none : it->second;
  }
};

// Work launched between cudaProfilerStart and cudaProfilerStop is kept, a graph replay
// launched inside included; work launched before (even when it runs inside) and after is
// not. Fails without the decoder's capture filter.
TEST_F(CaptureSeamTest, ProfilerApiKeepsOnlyTheBracketedWork) {
  CuptiOptions o;
  o.capture = Capture("cudaProfilerApi", "stop");
  auto c = Make(o);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "warmup", 5'000'000, 1);  // runs on into the range
  const std::vector<std::string> step = {"graph_attn", "graph_moe"};
  fake_->GraphLaunch(ctx, 9, step, 1);  // captured and replayed before the range
  fake_->ProfilerStart(ctx, 1);
  fake_->LaunchKernel(ctx, 7, "step_kernel", 1000, 1);
  fake_->GraphLaunch(ctx, 9, step, 1);
  fake_->Memcpy(ctx, 7, 2, 4096, 1);
  fake_->ProfilerStop(ctx, 1);
  fake_->LaunchKernel(ctx, 7, "after", 1000, 1);
  fake_->ProfilerStart(ctx, 1);  // "stop": later ranges are ignored
  fake_->LaunchKernel(ctx, 7, "second_range", 1000, 1);
  fake_->ProfilerStop(ctx, 1);
  fake_->SyncAll();
  proto::Trace t = Finish(c.get());
  EXPECT_EQ(Names(t), (std::map<std::string, int>{
                          {"step_kernel", 1}, {"graph_attn", 1}, {"graph_moe", 1}, {"Memcpy DtoH", 1}}));
  EXPECT_EQ(testing::CountKind(t, proto::ACTIVITY_KIND_MEMCPY), 1);
  // warmup, the two kernels of the replay before, after, second_range
  EXPECT_EQ(t.header().collector().records_outside_window(), 5u);
  EXPECT_EQ(Extra(t, "capture_range"), "cudaProfilerApi");
  EXPECT_EQ(Extra(t, "capture_range_end"), "stop");
  EXPECT_EQ(Extra(t, "capture_ranges"), "1");
}

TEST_F(CaptureSeamTest, RepeatKeepsEveryRange) {
  CuptiOptions o;
  o.capture = Capture("cudaProfilerApi", "repeat");
  auto c = Make(o);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int r = 0; r < 3; ++r) {
    fake_->LaunchKernel(ctx, 7, "between", 1000, 1);
    fake_->ProfilerStart(ctx, 1);
    fake_->LaunchKernel(ctx, 7, "inside", 1000, 1);
    fake_->ProfilerStop(ctx, 1);
  }
  fake_->SyncAll();
  proto::Trace t = Finish(c.get());
  EXPECT_EQ(Names(t), (std::map<std::string, int>{{"inside", 3}}));
  EXPECT_EQ(Extra(t, "capture_ranges"), "3");
}

// An NVTX range by name, in the default domain or in a named one (NAME@DOMAIN); inner
// ranges and other names do not end it.
TEST_F(CaptureSeamTest, NvtxRangeByName) {
  for (const std::string& spec : {std::string("nvtx:profile"), std::string("nvtx:profile@engine")}) {
    SCOPED_TRACE(spec);
    fake_ = std::make_unique<fake::FakeCupti>(Devices());
    const std::string domain = spec.find('@') != std::string::npos ? "engine" : "";
    CuptiOptions o;
    o.capture = Capture(spec, "stop");
    auto c = Make(o);
    ASSERT_TRUE(c->Start().ok());
    CUcontext ctx = fake_->CreateContext(0);
    fake_->NvtxPush(1, "profile", domain == "" ? "engine" : "");  // the other domain
    fake_->LaunchKernel(ctx, 7, "wrong_domain", 1000, 1);
    fake_->NvtxPop(1, domain == "" ? "engine" : "");
    fake_->NvtxPush(1, "profile", domain);
    fake_->NvtxPush(1, "step 0", domain);
    fake_->LaunchKernel(ctx, 7, "in_step", 1000, 1);
    fake_->NvtxPop(1, domain);
    fake_->LaunchKernel(ctx, 7, "between_steps", 1000, 1);
    fake_->NvtxPop(1, domain);
    fake_->LaunchKernel(ctx, 7, "after", 1000, 1);
    fake_->SyncAll();
    proto::Trace t = Finish(c.get());
    EXPECT_EQ(Names(t), (std::map<std::string, int>{{"in_step", 1}, {"between_steps", 1}}));
    EXPECT_EQ(Extra(t, "capture_range"), spec);
  }
}

// A metrics pass profiles only the bracketed work: the range profiler's range is pushed
// when the capture range opens and popped when it closes. Fails without the gate on the
// session (every kernel profiled: "before" and "after" get ranges and metrics).
TEST_F(CaptureSeamTest, MetricsPassProfilesOnlyTheBracketedWork) {
  CuptiOptions o;
  o.mode = CuptiOptions::Mode::kMetrics;
  o.capture = Capture("cudaProfilerApi", "stop");
  auto c = Make(o);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "before", 1000, 1);
  fake_->ProfilerStart(ctx, 1);
  fake_->LaunchKernel(ctx, 7, "_Z8mma_gemmv", 1000, 1);
  fake_->GraphLaunch(ctx, 9, {"graph_attn", "graph_moe"}, 1);
  fake_->ProfilerStop(ctx, 1);
  fake_->LaunchKernel(ctx, 7, "after", 1000, 1);
  proto::Trace t = Finish(c.get());
  ASSERT_TRUE(t.header().collector().metrics_available()) << t.header().collector().DebugString();
  EXPECT_EQ(Names(t), (std::map<std::string, int>{
                          {"mma_gemm()", 1}, {"graph_attn", 1}, {"graph_moe", 1}}));
  EXPECT_EQ(t.header().collector().cupti_detail().metric_ranges_refused(), 0u);
}

// The end of the last range the spec allows is handed to the caller (the injection
// library finishes the trace then, and ends the program for *-shutdown), once.
TEST_F(CaptureSeamTest, TheLastRangeEndIsHandedOnOnce) {
  for (const std::string& end : {std::string("stop-shutdown"), std::string("repeat:2")}) {
    SCOPED_TRACE(end);
    fake_ = std::make_unique<fake::FakeCupti>(Devices());
    CoreOptions o;
    o.capture = Capture("cudaProfilerApi", end);
    int calls = 0;
    bool shutdown = false;
    o.on_capture_done = [&](bool s) {
      ++calls;
      shutdown = s;
    };
    CollectorCore core(*fake_, o);
    ASSERT_TRUE(core.Start().ok());
    CUcontext ctx = fake_->CreateContext(0);
    for (int r = 0; r < 3; ++r) {
      fake_->ProfilerStart(ctx, 1);
      fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
      fake_->ProfilerStop(ctx, 1);
      EXPECT_EQ(calls, r + 1 >= (end == "repeat:2" ? 2 : 1) ? 1 : 0) << r;
    }
    EXPECT_EQ(shutdown, end == "stop-shutdown");
    ASSERT_TRUE(core.Stop().ok());
  }
}

TEST_F(CaptureSeamTest, ARangeThatNeverStartsIsSaid) {
  CuptiOptions o;
  o.capture = Capture("nvtx:profile", "stop");
  auto c = Make(o);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  fake_->SyncAll();
  proto::Trace t = Finish(c.get());
  EXPECT_EQ(t.activities_size(), 0);
  EXPECT_TRUE(HasWarning(t, "capture range nvtx:profile never started: nothing was recorded"));
  EXPECT_EQ(Extra(t, "capture_ranges"), "0");
}

}  // namespace
}  // namespace qprof::profiler::cupti
