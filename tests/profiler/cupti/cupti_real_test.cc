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

#ifdef QPROF_HAVE_NVPERF_HOST
#include <nvperf_cuda_host.h>
#include <nvperf_host.h>
#endif

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/range_profiler.h"
#include "tests/profiler/cupti/fake/fake_cupti.h"

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
    EXPECT_EQ(def.plan.threads, "sm__threads_launched.sum") << w.chip;
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
  // The CTA and thread counts, the range's identity checks, cost no pass of their own.
  EXPECT_FALSE(cost.plan.threads.empty()) << GetParam();
  PlanCost without = cost;
  std::vector<std::string> names;
  for (const std::string& m : cost.plan.metrics) {
    if (m != cost.plan.ctas && m != cost.plan.threads) names.push_back(m);
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

#ifdef QPROF_HAVE_NVPERF_HOST
// ---- Issue 35: the fake's counter data sizes against the host library libcupti uses ----
//
// libcupti sizes the range profiler's counter data image with libnvperf_host (its strings
// name NVPW_CUDA_CounterDataBuilder_Create and NVPW_CUDA_Profiler_CounterDataImage_
// CalculateSize); cuptiRangeProfilerGetCounterDataSize itself needs a range profiler object,
// i.e. a GPU context. Offline the same library answers from the chip name: the metrics'
// raw counters (documented NVPW_MetricsEvaluator / NVPW_CounterDataBuilder calls), then
// the size. The size call is not declared in CUDA 13.0's headers; libcupti resolves it by
// name, and its parameters here (a counter data prefix, its size, the maximum ranges and
// range-tree nodes, the range name length; no struct header) were read from the library.
// Assumed as for CUPTI's own images: raw counters isolated, per-unit instances not kept,
// 64-byte range names (the device check prints libcupti's own figure).
struct NvpwCounterDataOptions {
  const uint8_t* prefix;
  size_t prefix_size;
  uint32_t max_ranges;
  uint32_t max_range_tree_nodes;
  uint32_t max_range_name_length;
};
struct NvpwCounterDataCalculateSize {
  size_t struct_size;
  void* priv;
  size_t options_size;
  const NvpwCounterDataOptions* options;
  size_t counter_data_size;  // [out]
};
extern "C" NVPA_Status NVPW_CUDA_Profiler_CounterDataImage_CalculateSize(
    NvpwCounterDataCalculateSize* params) __attribute__((weak));

// The counter data size libnvperf_host computes for `metrics` on `chip`; 0 on failure.
size_t HostLibraryCounterDataBytes(const std::string& chip, const std::vector<std::string>& metrics,
                                   uint32_t ranges) {
  NVPW_InitializeHost_Params init = {NVPW_InitializeHost_Params_STRUCT_SIZE};
  if (NVPW_InitializeHost(&init) != NVPA_STATUS_SUCCESS) return 0;
  NVPW_CUDA_MetricsEvaluator_CalculateScratchBufferSize_Params scratch_size = {
      NVPW_CUDA_MetricsEvaluator_CalculateScratchBufferSize_Params_STRUCT_SIZE};
  scratch_size.pChipName = chip.c_str();
  if (NVPW_CUDA_MetricsEvaluator_CalculateScratchBufferSize(&scratch_size)) return 0;
  std::vector<uint8_t> scratch(scratch_size.scratchBufferSize);
  NVPW_CUDA_MetricsEvaluator_Initialize_Params eval = {
      NVPW_CUDA_MetricsEvaluator_Initialize_Params_STRUCT_SIZE};
  eval.pScratchBuffer = scratch.data();
  eval.scratchBufferSize = scratch.size();
  eval.pChipName = chip.c_str();
  if (NVPW_CUDA_MetricsEvaluator_Initialize(&eval)) return 0;
  std::vector<std::string> raw;
  for (const std::string& m : metrics) {
    NVPW_MetricEvalRequest request;
    NVPW_MetricsEvaluator_ConvertMetricNameToMetricEvalRequest_Params convert = {
        NVPW_MetricsEvaluator_ConvertMetricNameToMetricEvalRequest_Params_STRUCT_SIZE};
    convert.pMetricsEvaluator = eval.pMetricsEvaluator;
    convert.pMetricName = m.c_str();
    convert.pMetricEvalRequest = &request;
    convert.metricEvalRequestStructSize = NVPW_MetricEvalRequest_STRUCT_SIZE;
    if (NVPW_MetricsEvaluator_ConvertMetricNameToMetricEvalRequest(&convert)) return 0;
    NVPW_MetricsEvaluator_GetMetricRawDependencies_Params deps = {
        NVPW_MetricsEvaluator_GetMetricRawDependencies_Params_STRUCT_SIZE};
    deps.pMetricsEvaluator = eval.pMetricsEvaluator;
    deps.pMetricEvalRequests = &request;
    deps.numMetricEvalRequests = 1;
    deps.metricEvalRequestStructSize = NVPW_MetricEvalRequest_STRUCT_SIZE;
    deps.metricEvalRequestStrideSize = sizeof(request);
    if (NVPW_MetricsEvaluator_GetMetricRawDependencies(&deps)) return 0;
    std::vector<const char*> names(deps.numRawDependencies);
    deps.ppRawDependencies = names.data();
    if (NVPW_MetricsEvaluator_GetMetricRawDependencies(&deps)) return 0;
    for (const char* n : names) raw.push_back(n);
  }
  NVPW_CUDA_CounterDataBuilder_Create_Params create = {
      NVPW_CUDA_CounterDataBuilder_Create_Params_STRUCT_SIZE};
  create.pChipName = chip.c_str();
  if (NVPW_CUDA_CounterDataBuilder_Create(&create)) return 0;
  std::vector<NVPA_RawMetricRequest> requests;
  for (const std::string& r : raw) {
    NVPA_RawMetricRequest q = {NVPA_RAW_METRIC_REQUEST_STRUCT_SIZE};
    q.pMetricName = r.c_str();
    q.isolated = 1;
    q.keepInstances = 0;
    requests.push_back(q);
  }
  NVPW_CounterDataBuilder_AddMetrics_Params add = {NVPW_CounterDataBuilder_AddMetrics_Params_STRUCT_SIZE};
  add.pCounterDataBuilder = create.pCounterDataBuilder;
  add.pRawMetricRequests = requests.data();
  add.numMetricRequests = requests.size();
  NVPW_CounterDataBuilder_GetCounterDataPrefix_Params prefix = {
      NVPW_CounterDataBuilder_GetCounterDataPrefix_Params_STRUCT_SIZE};
  prefix.pCounterDataBuilder = create.pCounterDataBuilder;
  std::vector<uint8_t> bytes;
  bool ok = NVPW_CounterDataBuilder_AddMetrics(&add) == NVPA_STATUS_SUCCESS &&
            NVPW_CounterDataBuilder_GetCounterDataPrefix(&prefix) == NVPA_STATUS_SUCCESS;
  if (ok) {
    bytes.resize(prefix.bytesCopied);
    prefix.bytesAllocated = bytes.size();
    prefix.pBuffer = bytes.data();
    ok = NVPW_CounterDataBuilder_GetCounterDataPrefix(&prefix) == NVPA_STATUS_SUCCESS;
  }
  NVPW_CounterDataBuilder_Destroy_Params destroy = {NVPW_CounterDataBuilder_Destroy_Params_STRUCT_SIZE};
  destroy.pCounterDataBuilder = create.pCounterDataBuilder;
  NVPW_CounterDataBuilder_Destroy(&destroy);
  if (!ok) return 0;
  const NvpwCounterDataOptions options{bytes.data(), bytes.size(), ranges, ranges, 64};
  NvpwCounterDataCalculateSize size{sizeof(NvpwCounterDataCalculateSize), nullptr,
                                    sizeof(options), &options, 0};
  if (NVPW_CUDA_Profiler_CounterDataImage_CalculateSize(&size) != NVPA_STATUS_SUCCESS) return 0;
  return size.counter_data_size;
}

TEST_P(PerChipPlanTest, FakeCounterDataSizesAreTheHostLibrarysForTheDefaultSet) {
  if (NVPW_CUDA_Profiler_CounterDataImage_CalculateSize == nullptr) {
    GTEST_SKIP() << "this libnvperf_host has no NVPW_CUDA_Profiler_CounterDataImage_CalculateSize";
  }
  PlanCost cost;
  CoreStatus s = PlanCostOffline(RealCuptiApi(), GetParam(), MetricSet::kDefault, {}, &cost);
  if (!s.ok()) GTEST_SKIP() << "no offline data for " << GetParam() << ": " << s.message();
  for (uint32_t ranges : {1u, 16u, 2048u}) {
    const size_t real = HostLibraryCounterDataBytes(GetParam(), cost.plan.metrics, ranges);
    ASSERT_GT(real, 0u) << GetParam();
    EXPECT_EQ(fake::FakeCupti::CounterDataBytes(GetParam(), cost.plan.metrics, ranges), real)
        << GetParam() << " at " << ranges << " ranges";
  }
  // The full set too, where the fake's raw-counter table covers it.
  PlanCost full;
  ASSERT_TRUE(PlanCostOffline(RealCuptiApi(), GetParam(), MetricSet::kFull, {}, &full).ok());
  EXPECT_EQ(fake::FakeCupti::CounterDataBytes(GetParam(), full.plan.metrics, 2048),
            HostLibraryCounterDataBytes(GetParam(), full.plan.metrics, 2048)) << GetParam();
}
#endif  // QPROF_HAVE_NVPERF_HOST

TEST(CuptiRealTest, VersionIsAtLeastTheHeaders) {
  uint32_t v = 0;
  ASSERT_EQ(RealCuptiApi().GetVersion(&v), CUPTI_SUCCESS);
  EXPECT_GE(v, static_cast<uint32_t>(CUPTI_API_VERSION));
}

}  // namespace
}  // namespace qprof::profiler::cupti
