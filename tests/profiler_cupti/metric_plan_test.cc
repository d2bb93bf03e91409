#include "profiler/cupti/metric_plan.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace qprof::profiler::cupti {
namespace {

using ::testing::Contains;
using ::testing::Not;

// What a Hopper chip lists (subset): tensor pipe and gmma counters, no tcgen05 pipe.
const std::set<std::string> kHopper = {
    "sm__pipe_tensor_cycles_active", "sm__inst_executed_pipe_tensor_op_hmma",
    "sm__inst_executed_pipe_tensor_op_gmma", "sm__pipe_fma_cycles_active",
    "sm__inst_executed_pipe_fma", "dram__throughput", "sm__throughput", "gpu__time_duration"};

TEST(MetricPlanTest, HopperSet) {
  MetricPlan plan = ChooseMetrics(kHopper, {});
  EXPECT_THAT(plan.metrics, Contains("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"));
  EXPECT_THAT(plan.metrics, Contains("sm__inst_executed_pipe_tensor_op_gmma.sum"));
  EXPECT_THAT(plan.metrics, Contains("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_THAT(plan.metrics, Not(Contains("sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active")));
  EXPECT_EQ(plan.fma_pct, "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_TRUE(plan.not_offered.empty());
}

TEST(MetricPlanTest, BlackwellDatacenterAddsTcPipeAndFmaSplit) {
  std::set<std::string> b200 = {"sm__pipe_tensor_cycles_active", "sm__pipe_tc_cycles_active",
                                "sm__pipe_fmaheavy_cycles_active", "dram__throughput",
                                "sm__throughput"};
  MetricPlan plan = ChooseMetrics(b200, {"smsp__inst_executed.sum"});
  EXPECT_EQ(plan.tensor_pct.size(), 2u);
  EXPECT_EQ(plan.fma_pct, "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(plan.metrics.back(), "smsp__inst_executed.sum");
}

TEST(MetricPlanTest, MissingMetricsAreListed) {
  MetricPlan plan = ChooseMetrics({"sm__throughput"}, {});
  EXPECT_THAT(plan.not_offered, Contains("sm__pipe_tensor_cycles_active"));
  EXPECT_THAT(plan.not_offered, Contains("dram__throughput"));
  EXPECT_TRUE(plan.tensor_pct.empty());
  EXPECT_EQ(plan.metrics.size(), 1u);
}

TEST(MetricPlanTest, FillTakesTheLargerTensorPipeAndSkipsNaN) {
  std::set<std::string> b200 = {"sm__pipe_tensor_cycles_active", "sm__pipe_tc_cycles_active",
                                "dram__throughput", "sm__throughput"};
  MetricPlan plan = ChooseMetrics(b200, {});
  std::vector<double> values;
  for (const std::string& m : plan.metrics) {
    if (m.rfind("sm__pipe_tensor", 0) == 0) values.push_back(3.5);
    else if (m.rfind("sm__pipe_tc", 0) == 0) values.push_back(71.25);
    else if (m.rfind("dram", 0) == 0) values.push_back(std::numeric_limits<double>::quiet_NaN());
    else values.push_back(40.0);
  }
  proto::KernelMetrics out;
  FillKernelMetrics(plan, plan.metrics, values, &out);
  EXPECT_DOUBLE_EQ(out.tensor_pipe_pct(), 71.25);
  EXPECT_FALSE(out.has_dram_throughput_pct());
  EXPECT_DOUBLE_EQ(out.sm_throughput_pct(), 40.0);
  EXPECT_EQ(out.raw().size(), plan.metrics.size() - 1);
  EXPECT_FALSE(out.source().empty());
}

TEST(MetricPlanTest, DropMetricClearsItsRole) {
  MetricPlan plan = ChooseMetrics(kHopper, {});
  DropMetric(&plan, plan.dram_pct);
  EXPECT_TRUE(plan.dram_pct.empty());
  EXPECT_THAT(plan.metrics, Not(Contains("dram__throughput.avg.pct_of_peak_sustained_elapsed")));
}

}  // namespace
}  // namespace qprof::profiler::cupti

namespace qprof::profiler::cupti {
namespace {

TEST(MetricsUnavailableReasonTest, PermissionSaysHowToEnableCounters) {
  std::string r = MetricsUnavailableReason(absl::PermissionDeniedError(
      "cuptiProfilerGetCounterAvailability(&avail): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"));
  EXPECT_NE(r.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos);
  EXPECT_NE(r.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(r.find("root"), std::string::npos);
}

TEST(MetricsUnavailableReasonTest, OtherSubscriberIsNamed) {
  std::string r = MetricsUnavailableReason(absl::FailedPreconditionError("nsys"));
  EXPECT_NE(r.find("another profiler"), std::string::npos);
  EXPECT_EQ(r.find("NVreg"), std::string::npos);
}

}  // namespace
}  // namespace qprof::profiler::cupti
