#include "profiler/cupti/metrics_join.h"

#include "gtest/gtest.h"

namespace qprof::profiler::cupti {
namespace {

proto::Activity* AddKernel(proto::Trace* t, const std::string& name, int64_t start) {
  proto::Activity* a = t->add_activities();
  a->set_kind(proto::ACTIVITY_KIND_KERNEL);
  a->set_name(name);
  a->set_start_ns(start);
  a->set_end_ns(start + 10);
  return a;
}

void AddMeasured(proto::Trace* t, const std::string& name, double tensor) {
  proto::Activity* a = t->add_activities();
  a->set_kind(proto::ACTIVITY_KIND_KERNEL);
  a->set_name(name);
  a->mutable_metrics()->set_tensor_pipe_pct(tensor);
  (*a->mutable_metrics()->mutable_raw())["x"] = tensor;
  a->mutable_metrics()->set_source("cupti range profiler (kernel replay)");
}

TEST(MetricsJoinTest, ByOccurrenceInStartOrder) {
  proto::Trace metrics;
  metrics.mutable_header()->mutable_collector()->set_metrics_available(true);
  AddMeasured(&metrics, "gemm", 80);
  AddMeasured(&metrics, "gemv", 1);
  AddMeasured(&metrics, "gemm", 90);
  proto::Trace trace;
  // Out of start order on purpose.
  proto::Activity* second_gemm = AddKernel(&trace, "gemm", 300);
  proto::Activity* first_gemm = AddKernel(&trace, "gemm", 100);
  proto::Activity* gemv = AddKernel(&trace, "gemv", 200);
  JoinStats stats = JoinKernelMetrics(metrics, &trace);
  EXPECT_EQ(stats.matched_by_occurrence, 3u);
  EXPECT_DOUBLE_EQ(first_gemm->metrics().tensor_pipe_pct(), 80);
  EXPECT_DOUBLE_EQ(second_gemm->metrics().tensor_pipe_pct(), 90);
  EXPECT_DOUBLE_EQ(gemv->metrics().tensor_pipe_pct(), 1);
  EXPECT_TRUE(trace.header().collector().metrics_available());
}

TEST(MetricsJoinTest, CountMismatchFallsBackToMeanAndUnknownNamesAreCounted) {
  proto::Trace metrics;
  AddMeasured(&metrics, "gemm", 80);
  AddMeasured(&metrics, "gemm", 90);
  proto::Trace trace;
  for (int i = 0; i < 5; ++i) AddKernel(&trace, "gemm", i * 100);
  AddKernel(&trace, "never_measured", 1000);
  JoinStats stats = JoinKernelMetrics(metrics, &trace);
  EXPECT_EQ(stats.matched_by_name_mean, 5u);
  EXPECT_EQ(stats.unmatched, 1u);
  EXPECT_DOUBLE_EQ(trace.activities(4).metrics().tensor_pipe_pct(), 85);
  EXPECT_DOUBLE_EQ(trace.activities(4).metrics().raw().at("x"), 85);
  EXPECT_NE(trace.activities(4).metrics().source().find("mean of 2"), std::string::npos);
  EXPECT_FALSE(trace.activities(5).has_metrics());
  // Counted in the trace (issue 16, bug 1: matched/unmatched said, not silent).
  EXPECT_EQ(trace.header().collector().metrics_kernels_matched(), 5u);
  EXPECT_EQ(trace.header().collector().metrics_kernels_unmatched(), 1u);
}

TEST(MetricsJoinTest, UnavailableReasonIsCarriedOver) {
  proto::Trace metrics;
  metrics.mutable_header()->mutable_collector()->set_metrics_unavailable_reason(
      "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  proto::Trace trace;
  AddKernel(&trace, "gemm", 0);
  JoinKernelMetrics(metrics, &trace);
  EXPECT_TRUE(trace.header().collector().metrics_requested());
  EXPECT_FALSE(trace.header().collector().metrics_available());
  EXPECT_EQ(trace.header().collector().metrics_unavailable_reason(),
            "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(trace.header().collector().metrics_kernels_unmatched(), 1u);
  EXPECT_EQ(trace.header().collector().warnings_size(), 0);  // the reason says it all
}

// Issue 25: the trace keeps what its metrics pass cost and refused.
TEST(MetricsJoinTest, TheTraceTakesTheMetricsPassCost) {
  proto::Trace metrics;
  proto::CuptiCollectionDetail* d = metrics.mutable_header()->mutable_collector()->mutable_cupti_detail();
  d->set_metric_set("full");
  d->set_metric_passes(10);
  d->set_metric_ranges_refused(4);
  d->add_contexts_not_profiled("context 2 (device 0): never profiled");
  proto::Trace trace;
  trace.mutable_header()->mutable_collector()->mutable_cupti_detail()->set_records_incomplete(1);
  JoinKernelMetrics(metrics, &trace);
  const proto::CuptiCollectionDetail& t = trace.header().collector().cupti_detail();
  EXPECT_EQ(t.metric_set(), "full");
  EXPECT_EQ(t.metric_passes(), 10u);
  EXPECT_EQ(t.metric_ranges_refused(), 4u);
  EXPECT_EQ(t.records_incomplete(), 1u);  // the trace pass's own
  ASSERT_EQ(t.contexts_not_profiled_size(), 1);
  EXPECT_EQ(t.contexts_not_profiled(0), "metrics pass: context 2 (device 0): never profiled");
}

}  // namespace
}  // namespace qprof::profiler::cupti
