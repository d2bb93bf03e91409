// The real libcupti, without a GPU. This test program is built as a non-PIE executable on
// purpose (see the CMakeLists).
//  - Issue 16, bug 13: finding libcupti's file. In a non-PIE program, the address of an
//    imported function is the program's own PLT slot, so dladdr(&cuptiActivityEnable)
//    names the program; the seam asks libcupti's own handle instead.
//  - Issue 16, bugs 2 and 3, offline: for each chip, the metric plan the collector makes
//    from libcupti's own lists is accepted in ONE ConfigAddMetrics call (one refused name
//    would make libcupti refuse every later call: shown below too), and the tensor
//    instruction counters are the chip's own.
#include <dlfcn.h>

#include <algorithm>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/range_profiler.h"

namespace qprof::profiler::cupti {
namespace {

using ::testing::Contains;

TEST(CuptiRealTest, LibraryPathNamesLibcuptiEvenInANonPieProgram) {
  // What the collector used to do: here it names this test program.
  void* imported = reinterpret_cast<void*>(&cuptiActivityEnable);
  Dl_info naive;
  ASSERT_NE(dladdr(imported, &naive), 0);
  const std::string naive_file = naive.dli_fname != nullptr ? naive.dli_fname : "";
  const std::string path = RealCuptiApi().LibraryPath();
  EXPECT_NE(path.find("libcupti.so"), std::string::npos) << path;
  EXPECT_NE(path, naive_file);
  // Shows this program is the case the fix is for (a PIE build would not be).
  EXPECT_EQ(naive_file.find("libcupti"), std::string::npos)
      << "dladdr of the imported address named " << naive_file;
}

struct Host {
  explicit Host(const char* chip) {
    CUpti_Profiler_Host_Initialize_Params p = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip;  // offline: no counter availability image, no GPU
    rc = RealCuptiApi().HostInitialize(&p);
    object = p.pHostObject;
  }
  ~Host() {
    if (object == nullptr) return;
    CUpti_Profiler_Host_Deinitialize_Params p = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = object;
    RealCuptiApi().HostDeinitialize(&p);
  }
  CUptiResult Add(const std::vector<std::string>& names) {
    std::vector<const char*> ptrs;
    for (const std::string& n : names) ptrs.push_back(n.c_str());
    CUpti_Profiler_Host_ConfigAddMetrics_Params p = {
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    p.pHostObject = object;
    p.ppMetricNames = ptrs.data();
    p.numMetrics = ptrs.size();
    return RealCuptiApi().HostConfigAddMetrics(&p);
  }
  CUptiResult rc;
  CUpti_Profiler_Host_Object* object = nullptr;
};

class PerChipPlanTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PerChipPlanTest, PlanIsAcceptedInOneCall) {
  Host host(GetParam());
  if (host.rc != CUPTI_SUCCESS) GTEST_SKIP() << "this libcupti has no offline data for " << GetParam();
  MetricPlan plan = PlanMetricsOnHost(RealCuptiApi(), host.object, GetParam(),
                                      {"smsp__inst_executed.sum", "made_up__metric.sum"});
  EXPECT_THAT(plan.not_offered, Contains("made_up__metric.sum"));
  ASSERT_GE(plan.metrics.size(), 5u);
  EXPECT_FALSE(plan.tensor_pct.empty());
  EXPECT_FALSE(plan.fma_pct.empty());
  EXPECT_FALSE(plan.dram_pct.empty());
  EXPECT_EQ(host.Add(plan.metrics), CUPTI_SUCCESS) << GetParam();
  const std::string chip = GetParam();
  if (chip == "GH100") {
    EXPECT_THAT(plan.tensor_inst, Contains("sm__inst_executed_pipe_tensor_op_gmma.sum"));
  } else if (chip == "GB100") {
    EXPECT_THAT(plan.tensor_inst, Contains("sm__inst_executed_pipe_tc.sum"));
    EXPECT_THAT(plan.tensor_pct,
                Contains("sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active"));
  } else if (chip == "GB202") {
    EXPECT_THAT(plan.tensor_inst, Contains("sm__inst_executed_pipe_tensor_subpipe_hmma.sum"));
  }
  EXPECT_FALSE(plan.tensor_inst.empty()) << chip;
  EXPECT_TRUE(plan.missing.empty()) << chip << ": " << plan.missing.front();
}

INSTANTIATE_TEST_SUITE_P(Chips, PerChipPlanTest,
                         ::testing::Values("GA100", "AD102", "GH100", "GB100", "GB202"));

// Issue 25: what a metrics pass costs, from libcupti's own scheduler offline (the same
// call the collector and `qprof record` make). The default set must stay cheap: the
// full set (sm__throughput) costs ten passes on GH100 and nine on GB100, each a replay
// of every kernel with its memory saved and restored.
TEST(CuptiRealTest, DefaultPlanCostsThreePassesAndTheFullPlanTen) {
  struct Want {
    const char* chip;
    size_t default_passes;
    size_t full_passes;
  };
  for (const Want& w : {Want{"GH100", 3, 10}, Want{"GB100", 3, 9}}) {
    PlanCost def, full;
    CoreStatus s = PlanCostOffline(RealCuptiApi(), w.chip, MetricSet::kDefault, {}, &def);
    if (!s.ok()) GTEST_SKIP() << "no offline data for " << w.chip << ": " << s.message();
    ASSERT_TRUE(PlanCostOffline(RealCuptiApi(), w.chip, MetricSet::kFull, {}, &full).ok());
    EXPECT_EQ(def.passes, w.default_passes) << w.chip;
    EXPECT_EQ(full.passes, w.full_passes) << w.chip;
    // The default set keeps the evidence the analysis reads, and the range identity check.
    EXPECT_FALSE(def.plan.tensor_pct.empty()) << w.chip;
    EXPECT_FALSE(def.plan.fma_pct.empty()) << w.chip;
    EXPECT_FALSE(def.plan.dram_pct.empty()) << w.chip;
    EXPECT_EQ(def.plan.ctas, "sm__ctas_launched.sum") << w.chip;
    EXPECT_TRUE(def.plan.sm_pct.empty()) << w.chip;
    EXPECT_FALSE(full.plan.sm_pct.empty()) << w.chip;
  }
}

// Every chip the collector names offline: the default set never needs more than three.
TEST_P(PerChipPlanTest, DefaultPlanFitsThreePasses) {
  PlanCost cost;
  CoreStatus s = PlanCostOffline(RealCuptiApi(), GetParam(), MetricSet::kDefault, {}, &cost);
  if (!s.ok()) GTEST_SKIP() << "no offline data for " << GetParam() << ": " << s.message();
  EXPECT_GE(cost.passes, 1u);
  EXPECT_LE(cost.passes, 3u) << GetParam();
  // The CTA count, the range's identity check, costs no pass of its own.
  PlanCost without = cost;
  std::vector<std::string> names;
  for (const std::string& m : cost.plan.metrics) {
    if (m != cost.plan.ctas) names.push_back(m);
  }
  Host host(GetParam());
  ASSERT_EQ(host.rc, CUPTI_SUCCESS);
  std::vector<const char*> ptrs;
  for (const std::string& n : names) ptrs.push_back(n.c_str());
  std::vector<uint8_t> image;
  ASSERT_TRUE(MakeConfigImage(RealCuptiApi(), host.object, GetParam(), ptrs, &image,
                              &without.passes).ok());
  EXPECT_EQ(without.passes, cost.passes) << GetParam();
}

// Why the plan is validated before one call: after one refusal, libcupti refuses every
// later ConfigAddMetrics on that host object, good names included.
TEST(CuptiRealTest, OneRefusedMetricPoisonsTheHostObject) {
  Host host("GH100");
  if (host.rc != CUPTI_SUCCESS) GTEST_SKIP() << "no offline data for GH100";
  EXPECT_EQ(host.Add({"sm__throughput.avg.pct_of_peak_sustained_elapsed"}), CUPTI_SUCCESS);
  EXPECT_NE(host.Add({"sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_active"}), CUPTI_SUCCESS);
  EXPECT_NE(host.Add({"dram__throughput.avg.pct_of_peak_sustained_elapsed"}), CUPTI_SUCCESS);
}

TEST(CuptiRealTest, VersionIsAtLeastTheHeaders) {
  uint32_t v = 0;
  ASSERT_EQ(RealCuptiApi().GetVersion(&v), CUPTI_SUCCESS);
  EXPECT_GE(v, static_cast<uint32_t>(CUPTI_API_VERSION));
}

}  // namespace
}  // namespace qprof::profiler::cupti
