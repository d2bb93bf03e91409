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
  MetricPlan plan = ChooseMetrics("GH100", kHopper, {});
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
  MetricPlan plan = ChooseMetrics("GB100", b200, {"smsp__inst_executed.sum"});
  EXPECT_EQ(plan.tensor_pct.size(), 2u);
  EXPECT_EQ(plan.fma_pct, "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active");
  EXPECT_EQ(plan.metrics.back(), "smsp__inst_executed.sum");
}

TEST(MetricPlanTest, MissingMetricsAreListed) {
  MetricPlan plan = ChooseMetrics("XX", {"sm__throughput"}, {}, MetricSet::kFull);
  EXPECT_THAT(plan.not_offered, Contains("sm__pipe_tensor_cycles_active"));
  EXPECT_THAT(plan.not_offered, Contains("dram__throughput"));
  EXPECT_TRUE(plan.tensor_pct.empty());
  EXPECT_EQ(plan.metrics.size(), 1u);
  // Said in the trace: no tensor evidence of either kind on this chip.
  ASSERT_EQ(plan.missing.size(), 3u);
  EXPECT_NE(plan.missing[0].find("chip XX has no tensor-pipe utilisation counter"), std::string::npos);
  EXPECT_NE(plan.missing[1].find("no tensor-pipe instruction counter"), std::string::npos);
}

// Issue 16, bug 3: the tensor instruction counters differ per chip (names from
// libcupti 13.0.1's offline lists); each chip gets the ones it has.
TEST(MetricPlanTest, TensorInstructionCountersPerChip) {
  const std::set<std::string> gb100 = {"sm__pipe_tensor_cycles_active", "sm__pipe_tc_cycles_active",
                                       "sm__inst_executed_pipe_tensor",
                                       "sm__inst_executed_pipe_tensor_subpipe_hmma",
                                       "sm__inst_executed_pipe_tc", "dram__throughput"};
  MetricPlan b = ChooseMetrics("GB100", gb100, {});
  EXPECT_THAT(b.tensor_inst, Contains("sm__inst_executed_pipe_tc.sum"));
  EXPECT_THAT(b.tensor_inst, Contains("sm__inst_executed_pipe_tensor_subpipe_hmma.sum"));
  EXPECT_THAT(b.metrics, Not(Contains("sm__inst_executed_pipe_tensor_op_hmma.sum")));
  const std::set<std::string> gb202 = {"sm__pipe_tensor_cycles_active",
                                       "sm__inst_executed_pipe_tensor_subpipe_hmma"};
  MetricPlan r = ChooseMetrics("GB202", gb202, {});
  EXPECT_EQ(r.tensor_inst, std::vector<std::string>{"sm__inst_executed_pipe_tensor_subpipe_hmma.sum"});
  MetricPlan h = ChooseMetrics("GH100", kHopper, {});
  EXPECT_THAT(h.tensor_inst, Contains("sm__inst_executed_pipe_tensor_op_gmma.sum"));
  for (const MetricPlan* p : {&b, &r, &h}) {
    for (const std::string& m : p->missing) {
      EXPECT_EQ(m.find("instruction counter"), std::string::npos) << m;
    }
  }
}

TEST(MetricPlanTest, KeepOfferedDropsNamesTheChipWouldRefuse) {
  MetricPlan plan = ChooseMetrics("GH100", kHopper, {"made_up__metric.sum"});
  std::vector<std::string> rejected = KeepOffered(&plan, [](const std::string& base, const std::string&) {
    return base != "made_up__metric" && base != "dram__throughput";
  });
  EXPECT_THAT(rejected, Contains("made_up__metric.sum"));
  EXPECT_THAT(rejected, Contains("dram__throughput.avg.pct_of_peak_sustained_elapsed"));
  EXPECT_TRUE(plan.dram_pct.empty());
  EXPECT_THAT(plan.metrics, Not(Contains("made_up__metric.sum")));
  EXPECT_EQ(SplitMetricName("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            std::make_pair(std::string("sm__throughput"),
                           std::string(".avg.pct_of_peak_sustained_elapsed")));
  EXPECT_EQ(SplitMetricName("bare").second, "");
}

TEST(MetricPlanTest, FillTakesTheLargerTensorPipeAndSkipsNaN) {
  std::set<std::string> b200 = {"sm__pipe_tensor_cycles_active", "sm__pipe_tc_cycles_active",
                                "dram__throughput", "sm__throughput"};
  MetricPlan plan = ChooseMetrics("GB100", b200, {}, MetricSet::kFull);
  std::vector<double> values;
  for (const std::string& m : plan.metrics) {
    if (m.rfind("sm__pipe_tensor", 0) == 0) values.push_back(3.5);
    else if (m.rfind("sm__pipe_tc", 0) == 0) values.push_back(71.25);
    else if (m.rfind("dram", 0) == 0) values.push_back(std::numeric_limits<double>::quiet_NaN());
    else values.push_back(40.0);
  }
  MetricsData out;
  FillKernelMetrics(plan, plan.metrics, values, &out);
  EXPECT_DOUBLE_EQ(*out.tensor_pipe_pct, 71.25);
  EXPECT_FALSE(out.dram_throughput_pct.has_value());
  EXPECT_DOUBLE_EQ(*out.sm_throughput_pct, 40.0);
  EXPECT_EQ(out.raw.size(), plan.metrics.size() - 1);
  EXPECT_FALSE(out.source.empty());
}

// Issue 25: sm__throughput alone costs eight passes on GH100, so the default set leaves it
// out; the full set adds it. Both keep the CTA count the ranges are checked with.
TEST(MetricPlanTest, DefaultSetLeavesTheCostlySmThroughputOut) {
  std::set<std::string> hopper = kHopper;
  hopper.insert("sm__ctas_launched");
  MetricPlan def = ChooseMetrics("GH100", hopper, {});
  MetricPlan full = ChooseMetrics("GH100", hopper, {}, MetricSet::kFull);
  EXPECT_EQ(def.set, MetricSet::kDefault);
  EXPECT_TRUE(def.sm_pct.empty());
  EXPECT_THAT(def.metrics, Not(Contains("sm__throughput.avg.pct_of_peak_sustained_elapsed")));
  EXPECT_EQ(full.sm_pct, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(full.metrics.size(), def.metrics.size() + 1);
  for (const MetricPlan* p : {&def, &full}) {
    EXPECT_EQ(p->ctas, "sm__ctas_launched.sum");
    EXPECT_FALSE(p->tensor_pct.empty());
    EXPECT_FALSE(p->fma_pct.empty());
    EXPECT_FALSE(p->dram_pct.empty());
  }
  MetricSet set = MetricSet::kFull;
  EXPECT_TRUE(ParseMetricSet("", &set));
  EXPECT_EQ(set, MetricSet::kDefault);
  EXPECT_TRUE(ParseMetricSet("full", &set));
  EXPECT_EQ(set, MetricSet::kFull);
  EXPECT_FALSE(ParseMetricSet("fast", &set));
  EXPECT_STREQ(MetricSetName(MetricSet::kFull), "full");
}

TEST(MetricPlanTest, DropMetricClearsItsRole) {
  MetricPlan plan = ChooseMetrics("GH100", kHopper, {});
  DropMetric(&plan, plan.dram_pct);
  EXPECT_TRUE(plan.dram_pct.empty());
  EXPECT_THAT(plan.metrics, Not(Contains("dram__throughput.avg.pct_of_peak_sustained_elapsed")));
}

}  // namespace
}  // namespace qprof::profiler::cupti

namespace qprof::profiler::cupti {
namespace {

TEST(MetricsUnavailableReasonTest, PermissionSaysHowToEnableCounters) {
  std::string r = MetricsUnavailableReason(CoreStatus(CoreCode::kPermissionDenied,
      "cuptiProfilerGetCounterAvailability(&avail): CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35)"));
  EXPECT_NE(r.find("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"), std::string::npos);
  EXPECT_NE(r.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(r.find("root"), std::string::npos);
}

TEST(MetricsUnavailableReasonTest, OtherSubscriberIsNamed) {
  std::string r = MetricsUnavailableReason(CoreStatus(CoreCode::kFailedPrecondition, "nsys"));
  EXPECT_NE(r.find("another profiler"), std::string::npos);
  EXPECT_EQ(r.find("NVreg"), std::string::npos);
}

}  // namespace
}  // namespace qprof::profiler::cupti
