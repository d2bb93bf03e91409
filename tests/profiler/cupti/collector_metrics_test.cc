// Metrics mode through the seam: range names, the one-call config, per-chip counters,
// refused counters, every context, nothing called inside cuInit.
#include <algorithm>

#include "profiler/cupti/collector_core.h"
#include "profiler/cupti/metrics_join.h"
#include "tests/profiler/cupti/collector_test_util.h"

namespace qprof::profiler::cupti {
namespace {

using testing::CollectorSeamTest;
using testing::HasWarning;

class MetricsSeamTest : public CollectorSeamTest {
 protected:
  std::vector<fake::FakeDevice> Devices() override {
    fake::FakeDevice gb202;
    gb202.name = "Fake RTX PRO 6000";
    gb202.chip = "GB202";
    fake::FakeDevice gb100;
    gb100.name = "Fake B200";
    gb100.chip = "GB100";
    fake::FakeDevice old;
    old.name = "Fake old GPU";
    old.chip = "FAKE0";
    return {fake::FakeDevice{}, gb202, gb100, old};
  }
  CuptiOptions Metrics() {
    CuptiOptions o;
    o.mode = CuptiOptions::Mode::kMetrics;
    return o;
  }
  // Runs kernels on a context of `device` under a metrics collector.
  proto::Trace MetricsPass(uint32_t device, const std::vector<std::string>& kernels) {
    auto c = Make(Metrics());
    EXPECT_TRUE(c->Start().ok());
    CUcontext ctx = fake_->CreateContext(device);
    for (const std::string& k : kernels) fake_->LaunchKernel(ctx, 7, k, 1000, 1);
    return Finish(c.get());
  }
};

// Issue 16, bug 1: auto range names ranges "0", "1", ...; the collector names them after
// the kernels launched, in order, so the join onto a trace pass matches every kernel.
TEST_F(MetricsSeamTest, RangesAreNamedByLaunchOrderAndJoinOntoTheTracePass) {
  const std::vector<std::string> kernels = {"_Z8mma_gemmv", "rmsnorm_kernel", "_Z8mma_gemmv"};
  proto::Trace metrics = MetricsPass(0, kernels);
  ASSERT_EQ(metrics.activities_size(), 3);
  EXPECT_EQ(metrics.activities(0).name(), "mma_gemm()");
  EXPECT_EQ(metrics.activities(0).mangled_name(), "_Z8mma_gemmv");
  EXPECT_EQ(metrics.activities(1).name(), "rmsnorm_kernel");
  EXPECT_EQ(metrics.activities(2).args().at("range_index"), "2");
  EXPECT_TRUE(metrics.header().collector().metrics_available());
  EXPECT_DOUBLE_EQ(metrics.activities(0).metrics().tensor_pipe_pct(), 80.0);
  EXPECT_DOUBLE_EQ(metrics.activities(1).metrics().tensor_pipe_pct(), 0.5);

  // The trace pass of the same program (a second, independent fake GPU).
  fake::FakeCupti trace_gpu;
  auto t = MakeCuptiCollector(CuptiOptions{}, trace_gpu);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE((*t)->Start().ok());
  CUcontext ctx = trace_gpu.CreateContext(0);
  for (const std::string& k : kernels) trace_gpu.LaunchKernel(ctx, 7, k, 1000, 1);
  trace_gpu.SyncAll();
  proto::Trace trace;
  ASSERT_TRUE((*t)->Stop().ok());
  ASSERT_TRUE((*t)->Flush(&trace).ok());
  JoinStats join = JoinKernelMetrics(metrics, &trace);
  EXPECT_EQ(join.matched_by_occurrence, 3u);
  EXPECT_EQ(join.unmatched, 0u);
  EXPECT_EQ(trace.header().collector().metrics_kernels_matched(), 3u);
  EXPECT_EQ(trace.header().collector().metrics_kernels_unmatched(), 0u);
  EXPECT_DOUBLE_EQ(trace.activities(0).metrics().tensor_pipe_pct(), 80.0);
}

// Issue 16, bug 2: the chip lists sm__pipe_tc_cycles_active but refuses the full name.
// One refusal poisons libcupti's host object, so names are validated first and added in
// one call: the other metrics survive.
TEST_F(MetricsSeamTest, ARefusedMetricIsLeftOutBeforeItCanPoisonTheRest) {
  fake_->faults.refused_metrics = {"sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active"};
  proto::Trace metrics = MetricsPass(2, {"_Z8mma_gemmv"});  // GB100
  ASSERT_TRUE(metrics.header().collector().metrics_available())
      << metrics.header().collector().DebugString();
  ASSERT_EQ(metrics.activities_size(), 1);
  const proto::KernelMetrics& m = metrics.activities(0).metrics();
  EXPECT_TRUE(m.has_tensor_pipe_pct());
  EXPECT_TRUE(m.has_dram_throughput_pct());
  EXPECT_FALSE(m.has_sm_throughput_pct());  // the full set only (eight passes on its own)
  EXPECT_TRUE(m.has_fma_pipe_pct());
  EXPECT_EQ(m.raw().count("sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active"), 0u);
  // Exactly one ConfigAddMetrics call.
  const auto calls = fake_->calls();
  EXPECT_EQ(std::count_if(calls.begin(), calls.end(),
                          [](const std::string& c) { return c.rfind("HostConfigAddMetrics", 0) == 0; }),
            1);
  EXPECT_TRUE(HasWarning(metrics, "sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active is not "
                                  "offered on chip GB100"));
}

TEST_F(MetricsSeamTest, AnEmptyConfigImageMeansNoMetricsAndSaysWhy) {
  fake_->faults.empty_config_image = true;
  proto::Trace metrics = MetricsPass(0, {"k"});
  const proto::CollectorStats& s = metrics.header().collector();
  EXPECT_FALSE(s.metrics_available());
  EXPECT_NE(s.metrics_unavailable_reason().find("empty config image"), std::string::npos)
      << s.metrics_unavailable_reason();
  EXPECT_EQ(metrics.activities_size(), 0);
}

// Issue 16, bug 3: per-chip tensor instruction counters, and the trace says when a chip
// has none.
TEST_F(MetricsSeamTest, TensorInstructionCountersPerChip) {
  proto::Trace gb202 = MetricsPass(1, {"_Z8mma_gemmv"});
  ASSERT_EQ(gb202.activities_size(), 1);
  EXPECT_DOUBLE_EQ(gb202.activities(0).metrics().raw().at(
                       "sm__inst_executed_pipe_tensor_subpipe_hmma.sum"), 4096.0);
  EXPECT_EQ(gb202.header().collector().metrics_missing_size(), 0);
}

TEST_F(MetricsSeamTest, TcgenCounterOnGb100) {
  proto::Trace gb100 = MetricsPass(2, {"_Z8mma_gemmv"});
  ASSERT_EQ(gb100.activities_size(), 1);
  EXPECT_EQ(gb100.activities(0).metrics().raw().count("sm__inst_executed_pipe_tc.sum"), 1u);
}

TEST_F(MetricsSeamTest, AChipWithoutTensorInstructionCountersIsSaid) {
  proto::Trace old = MetricsPass(3, {"_Z8mma_gemmv"});
  ASSERT_EQ(old.header().collector().metrics_missing_size(), 1);
  EXPECT_NE(old.header().collector().metrics_missing(0).find(
                "chip FAKE0 has no tensor-pipe instruction counter"), std::string::npos);
  ASSERT_EQ(old.activities_size(), 1);
  EXPECT_TRUE(old.activities(0).metrics().has_tensor_pipe_pct());  // utilisation still there
}

// Counters restricted to admins: the metrics pass says so and how to fix it; joined onto
// a trace pass, kernels keep no metrics (analysis falls back to SASS and names), and the
// trace carries the reason.
TEST_F(MetricsSeamTest, CountersRefusedDegradeWithTheReasonInTheTrace) {
  fake_->faults.counters_denied = true;
  proto::Trace metrics = MetricsPass(0, {"_Z8mma_gemmv", "k"});
  const proto::CollectorStats& s = metrics.header().collector();
  EXPECT_TRUE(s.metrics_requested());
  EXPECT_FALSE(s.metrics_available());
  EXPECT_NE(s.metrics_unavailable_reason().find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
            std::string::npos);
  EXPECT_NE(s.metrics_unavailable_reason().find("NVreg_RestrictProfilingToAdminUsers=0"),
            std::string::npos);
  proto::Trace trace;
  proto::Activity* k = trace.add_activities();
  k->set_kind(proto::ACTIVITY_KIND_KERNEL);
  k->set_name("mma_gemm()");
  JoinKernelMetrics(metrics, &trace);
  EXPECT_FALSE(trace.activities(0).has_metrics());
  EXPECT_FALSE(trace.header().collector().metrics_available());
  EXPECT_NE(trace.header().collector().metrics_unavailable_reason().find("admin"), std::string::npos);
}

// Issue 16, bug 7 (metrics): every context is profiled, including one that ends before
// the program does and one created after that.
TEST_F(MetricsSeamTest, EveryContextIsProfiled) {
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext a = fake_->CreateContext(0);
  CUcontext b = fake_->CreateContext(1);
  fake_->LaunchKernel(a, 7, "on_a", 1000, 1);
  fake_->LaunchKernel(b, 7, "on_b", 1000, 1);
  fake_->DestroyContext(a);
  CUcontext later = fake_->CreateContext(0);
  fake_->LaunchKernel(later, 7, "on_later", 1000, 1);
  fake_->LaunchKernel(b, 7, "on_b", 1000, 1);
  proto::Trace metrics = Finish(c.get());
  std::map<std::string, int> names;
  for (const proto::Activity& m : metrics.activities()) ++names[m.name()];
  EXPECT_EQ(names["on_a"], 1);
  EXPECT_EQ(names["on_b"], 2);
  EXPECT_EQ(names["on_later"], 1);
  EXPECT_EQ(metrics.activities_size(), 4);
}

// Issue 16, bug 13: inside InitializeInjection (during cuInit) the collector calls no
// driver function; the context created next starts the session.
TEST_F(MetricsSeamTest, NothingIsCalledInTheDriverDuringCuInit) {
  CoreOptions options;
  options.mode = CoreOptions::Mode::kMetrics;
  options.in_driver_init = true;
  CollectorCore core(*fake_, options);
  fake_->SetInsideCuInit(true);
  ASSERT_TRUE(core.Start().ok());
  fake_->SetInsideCuInit(false);
  EXPECT_EQ(fake_->driver_calls_inside_cu_init(), 0u);
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  ASSERT_TRUE(core.Stop().ok());
  DecodedBatch out;
  core.TakeRemaining(&out);
  ASSERT_EQ(out.activities.size(), 1u);
  EXPECT_EQ(out.activities[0].name, "k");
}

// In-process (not inside cuInit) a context made before Start() is profiled at once.
TEST_F(MetricsSeamTest, ExistingContextIsProfiledInProcess) {
  CUcontext ctx = fake_->CreateContext(0);
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace metrics = Finish(c.get());
  EXPECT_EQ(metrics.activities_size(), 1);
}

// More kernels than the counter data image has ranges for: the rest are counted and said.
TEST_F(MetricsSeamTest, KernelsPastTheRangeLimitAreCounted) {
  CuptiOptions options = Metrics();
  options.max_metric_kernels = 3;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 5; ++i) fake_->LaunchKernel(ctx, 7, "k" + std::to_string(i), 1000, 1);
  proto::Trace metrics = Finish(c.get());
  ASSERT_EQ(metrics.activities_size(), 3);
  EXPECT_EQ(metrics.activities(2).name(), "k2");
  EXPECT_TRUE(HasWarning(metrics, "2 kernels were not profiled (more than 3 kernels"));
}

TEST_F(MetricsSeamTest, SubscriberConflictMeansNoMetricsAndSaysWho) {
  fake_->faults.other_subscriber = "Nsight Compute";
  proto::Trace metrics = MetricsPass(0, {"k"});
  const proto::CollectorStats& s = metrics.header().collector();
  EXPECT_FALSE(s.metrics_available());
  EXPECT_NE(s.metrics_unavailable_reason().find("Nsight Compute"), std::string::npos);
  EXPECT_EQ(s.subscriber_conflict(), "Nsight Compute");
}

}  // namespace
}  // namespace qprof::profiler::cupti
