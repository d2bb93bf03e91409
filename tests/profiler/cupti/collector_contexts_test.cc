// Issue 25: metrics sessions and CUDA contexts as CUPTI has them: counter data dies with
// its context, one session per device, and what the collector holds per context is
// bounded. Also the metrics plan's cost as recorded in the trace, and the handling of
// passes that were not all submitted or a config that needs none. Each test fails when
// the handling it names is removed.
#include "profiler/cupti/collector_core.h"
#include "tests/profiler/cupti/collector_test_util.h"

namespace qprof::profiler::cupti {
namespace {

using testing::CollectorSeamTest;
using testing::HasWarning;

class ContextSeamTest : public CollectorSeamTest {
 protected:
  std::vector<fake::FakeDevice> Devices() override {
    fake::FakeDevice second;
    second.name = "Fake H100 #2";
    return {fake::FakeDevice{}, second};
  }
  CuptiOptions Metrics() {
    CuptiOptions o;
    o.mode = CuptiOptions::Mode::kMetrics;
    return o;
  }
  static int Count(const proto::Trace& t, const std::string& name) {
    int n = 0;
    for (const proto::Activity& a : t.activities()) n += a.name() == name;
    return n;
  }
};

// A context destroyed before the program ends (cudaDeviceReset, a temporary context):
// its session is ended inside CONTEXT_DESTROY_STARTING, while its counter data still
// exists. Fails when the session is ended only at Stop().
TEST_F(ContextSeamTest, CounterDataIsReadBeforeItsContextGoes) {
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext first = fake_->CreateContext(0);
  for (int i = 0; i < 3; ++i) fake_->LaunchKernel(first, 7, "before_reset", 1000, 1);
  fake_->DestroyContext(first);
  CUcontext second = fake_->CreateContext(0);
  fake_->LaunchKernel(second, 7, "after_reset", 1000, 1);
  proto::Trace t = Finish(c.get());
  ASSERT_TRUE(t.header().collector().metrics_available()) << t.header().collector().DebugString();
  EXPECT_EQ(Count(t, "before_reset"), 3);
  EXPECT_EQ(Count(t, "after_reset"), 1) << t.header().collector().DebugString();
}

// CUPTI allows one profiling session per device. A second context of a device waits for
// the first one's session to end (its kernels meanwhile run without counters, and the
// trace says so), and neither it nor a context on another device ends the metrics pass.
// Fails when the second context's session is simply attempted (the failure would mark
// the whole pass unavailable and skip every later context).
TEST_F(ContextSeamTest, ASecondContextOnOneDeviceWaitsForTheDevice) {
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext a = fake_->CreateContext(0);
  fake_->LaunchKernel(a, 7, "on_a", 1000, 1);
  CUcontext b = fake_->CreateContext(0);  // same device, while a's session is active
  fake_->LaunchKernel(b, 7, "on_b_unprofiled", 1000, 1);
  fake_->LaunchKernel(b, 7, "on_b_unprofiled", 1000, 1);
  CUcontext other = fake_->CreateContext(1);
  fake_->LaunchKernel(other, 7, "on_device_1", 1000, 1);
  fake_->DestroyContext(a);  // the device is free: b gets its session
  fake_->LaunchKernel(b, 7, "on_b", 1000, 1);
  proto::Trace t = Finish(c.get());
  const proto::CollectorStats& s = t.header().collector();
  ASSERT_TRUE(s.metrics_available()) << s.DebugString();
  EXPECT_EQ(Count(t, "on_a"), 1);
  EXPECT_EQ(Count(t, "on_b"), 1);
  EXPECT_EQ(Count(t, "on_device_1"), 1);
  EXPECT_EQ(Count(t, "on_b_unprofiled"), 0);
  ASSERT_EQ(s.cupti_detail().contexts_not_profiled_size(), 1) << s.DebugString();
  EXPECT_NE(s.cupti_detail().contexts_not_profiled(0).find("first 2 kernels ran without counters"),
            std::string::npos) << s.cupti_detail().contexts_not_profiled(0);
  EXPECT_TRUE(HasWarning(t, "(device 0): its first 2 kernels"));
}

// A context that waited all along is said too.
TEST_F(ContextSeamTest, AContextThatNeverGotTheDeviceIsSaid) {
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext a = fake_->CreateContext(0);
  CUcontext b = fake_->CreateContext(0);
  fake_->LaunchKernel(a, 7, "on_a", 1000, 1);
  fake_->LaunchKernel(b, 7, "on_b", 1000, 1);
  proto::Trace t = Finish(c.get());
  const proto::CollectorStats& s = t.header().collector();
  EXPECT_TRUE(s.metrics_available());
  EXPECT_EQ(Count(t, "on_a"), 1);
  ASSERT_EQ(s.cupti_detail().contexts_not_profiled_size(), 1);
  EXPECT_NE(s.cupti_detail().contexts_not_profiled(0).find("never profiled"), std::string::npos);
}

// Launches held to name ranges are bounded by the kernel limit per context (the counter
// data has no room for more ranges); later ones are counted. Fails when every launch
// name is kept.
TEST_F(ContextSeamTest, LaunchesHeldForNamingAreBounded) {
  CoreOptions options;
  options.mode = CoreOptions::Mode::kMetrics;
  options.max_metric_kernels = 100;
  CollectorCore core(*fake_, options);
  ASSERT_TRUE(core.Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 1000; ++i) {
    fake_->LaunchKernel(ctx, 7, "kernel_" + std::to_string(i % 7), 1000, 1);
  }
  EXPECT_EQ(core.metric_launches_held(), 100u);
  ASSERT_TRUE(core.Stop().ok());
  DecodedBatch out;
  core.TakeRemaining(&out);
  EXPECT_EQ(out.activities.size(), 100u);  // the first 100, each named and measured
  CollectorStatsData stats;
  core.FillStats(0, &stats);
  ASSERT_TRUE(stats.cupti_detail.has_value());
  EXPECT_EQ(stats.cupti_detail->metric_launches_past_limit, 900u);
  EXPECT_TRUE(stats.metrics_available);
}

// The trace records what the metrics pass cost: the set and its passes (the fake's
// model; the real figures are asserted against libcupti in profiler_cupti_real_test).
TEST_F(ContextSeamTest, TheTraceRecordsTheSetAndItsPasses) {
  for (MetricSet set : {MetricSet::kDefault, MetricSet::kFull}) {
    fake_ = std::make_unique<fake::FakeCupti>(Devices());
    CuptiOptions o = Metrics();
    o.metric_set = set;
    auto c = Make(o);
    ASSERT_TRUE(c->Start().ok());
    CUcontext ctx = fake_->CreateContext(0);
    fake_->LaunchKernel(ctx, 7, "_Z8mma_gemmv", 1000, 1);
    proto::Trace t = Finish(c.get());
    const proto::CuptiCollectionDetail& d = t.header().collector().cupti_detail();
    EXPECT_EQ(d.metric_set(), MetricSetName(set));
    EXPECT_EQ(d.metric_passes(), set == MetricSet::kFull ? 10u : 3u);
    ASSERT_EQ(t.activities_size(), 1);
    EXPECT_EQ(t.activities(0).metrics().has_sm_throughput_pct(), set == MetricSet::kFull);
    EXPECT_TRUE(t.activities(0).metrics().has_tensor_pipe_pct());
    EXPECT_DOUBLE_EQ(t.activities(0).metrics().raw().at("qprof.passes"), d.metric_passes());
  }
}

// Stop reports that not every counter pass was submitted: the trace says some metrics
// may be missing. Fails without the all-passes check.
TEST_F(ContextSeamTest, PassesNotAllSubmittedAreSaid) {
  fake_->faults.passes_not_submitted = true;
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace t = Finish(c.get());
  EXPECT_TRUE(HasWarning(t, "not all counter passes were submitted"));
}

// A config image that needs no pass would measure nothing: no session, and why. Fails
// without the zero-pass check.
TEST_F(ContextSeamTest, AConfigThatNeedsNoPassIsRefused) {
  fake_->faults.zero_passes = true;
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace t = Finish(c.get());
  const proto::CollectorStats& s = t.header().collector();
  EXPECT_FALSE(s.metrics_available());
  EXPECT_NE(s.metrics_unavailable_reason().find("needs 0 passes"), std::string::npos)
      << s.metrics_unavailable_reason();
  EXPECT_EQ(t.activities_size(), 0);
}

}  // namespace
}  // namespace qprof::profiler::cupti
