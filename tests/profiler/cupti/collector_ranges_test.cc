// Issue 35: metrics a real GPU will deliver. The range profiler's range is pushed in auto
// range mode (the fake records no range outside one, as we now believe CUPTI does); a graph
// launch whose ranges do not fit refuses only its own kernels; executable-graph ids that
// equal graph ids; a second identity check (threads = grid x block) and neighbours that
// cannot be told apart; counter data sized from the metrics and ranges. Each test fails
// when the handling it names is removed (docs/collector.md lists the experiments).
#include <algorithm>
#include <map>
#include <thread>

#include "profiler/cupti/collector_core.h"
#include "tests/profiler/cupti/collector_test_util.h"

namespace qprof::profiler::cupti {
namespace {

using fake::FakeCupti;
using fake::FakeFaults;
using fake::FakeLaunch;
using testing::CollectorSeamTest;
using testing::HasWarning;

class RangeSeamTest : public CollectorSeamTest {
 protected:
  CuptiOptions Metrics() {
    CuptiOptions o;
    o.mode = CuptiOptions::Mode::kMetrics;
    return o;
  }
  static std::map<std::string, int> Names(const proto::Trace& t) {
    std::map<std::string, int> out;
    for (const proto::Activity& a : t.activities()) ++out[a.name()];
    return out;
  }
  // Every metrics activity carries its own launch's counts (the fake's ranges count the
  // launch's grid and grid x block): never a neighbour's.
  static void ExpectOwnCounts(const proto::Trace& t, const std::map<std::string, FakeLaunch>& by_name) {
    for (const proto::Activity& a : t.activities()) {
      auto it = by_name.find(a.name());
      ASSERT_NE(it, by_name.end()) << a.name();
      EXPECT_DOUBLE_EQ(a.metrics().raw().at("sm__ctas_launched.sum"), it->second.grid) << a.name();
      EXPECT_DOUBLE_EQ(a.metrics().raw().at("sm__threads_launched.sum"),
                       double(it->second.grid) * it->second.block) << a.name();
      EXPECT_DOUBLE_EQ(a.metrics().tensor_pipe_pct(),
                       FakeCupti::MetricValue(a.name(), "sm__pipe_tensor_cycles_active")) << a.name();
    }
  }
  static FakeLaunch L(const std::string& name, uint32_t grid, uint32_t block) {
    FakeLaunch l;
    l.name = name;
    l.grid = grid;
    l.block = block;
    return l;
  }
};

// The range profiler profiles only inside a pushed range: the collector pushes one after
// Start and pops it before Stop, with the single nesting level auto range allows. Fails
// without the push (no range at all: the first GPU run's likely outcome before issue 35).
TEST_F(RangeSeamTest, RangesArePushedAroundTheProfiledWork) {
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (const char* k : {"_Z8mma_gemmv", "rmsnorm_kernel"}) fake_->LaunchKernel(ctx, 7, k, 1000, 1);
  proto::Trace t = Finish(c.get());
  ASSERT_TRUE(t.header().collector().metrics_available()) << t.header().collector().DebugString();
  EXPECT_EQ(t.activities_size(), 2);
  const size_t start = fake_->IndexOfCall("RangeProfilerStart");
  const size_t push = fake_->IndexOfCall("RangeProfilerPushRange");
  const size_t pop = fake_->IndexOfCall("RangeProfilerPopRange");
  const size_t stop = fake_->IndexOfCall("RangeProfilerStop");
  ASSERT_NE(push, SIZE_MAX);
  EXPECT_LT(start, push);
  EXPECT_LT(push, pop);
  EXPECT_LT(pop, stop);
}

// The fake's own contract, without the collector: a started session outside a pushed
// range records nothing, and a pass stopped inside one is refused.
TEST_F(RangeSeamTest, TheFakeRecordsNoRangeOutsideAPushedRange) {
  CUcontext ctx = fake_->CreateContext(0);
  CUpti_RangeProfiler_Enable_Params enable = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = ctx;
  ASSERT_EQ(fake_->RangeProfilerEnable(&enable), CUPTI_SUCCESS);
  std::vector<uint8_t> config(64, 1), image(1 << 16);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = enable.pRangeProfilerObject;
  init.pCounterData = image.data();
  init.counterDataSize = image.size();
  ASSERT_EQ(fake_->RangeProfilerCounterDataImageInitialize(&init), CUPTI_SUCCESS);
  CUpti_RangeProfiler_SetConfig_Params set = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = enable.pRangeProfilerObject;
  set.pConfig = config.data();
  set.configSize = config.size();
  set.range = CUPTI_AutoRange;
  set.replayMode = CUPTI_KernelReplay;
  set.maxRangesPerPass = 16;
  set.numNestingLevels = 2;  // auto range allows one level
  set.minNestingLevel = 1;
  set.targetNestingLevel = 1;
  EXPECT_EQ(fake_->RangeProfilerSetConfig(&set), CUPTI_ERROR_INVALID_PARAMETER);
  set.numNestingLevels = 1;
  ASSERT_EQ(fake_->RangeProfilerSetConfig(&set), CUPTI_SUCCESS);
  CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = enable.pRangeProfilerObject;
  ASSERT_EQ(fake_->RangeProfilerStart(&start), CUPTI_SUCCESS);
  fake_->LaunchKernel(ctx, 7, "outside", 1000, 1);
  CUpti_RangeProfiler_PushRange_Params push = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
  push.pRangeProfilerObject = enable.pRangeProfilerObject;
  ASSERT_EQ(fake_->RangeProfilerPushRange(&push), CUPTI_SUCCESS);
  fake_->LaunchKernel(ctx, 7, "inside", 1000, 1);
  CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = enable.pRangeProfilerObject;
  EXPECT_EQ(fake_->RangeProfilerStop(&stop), CUPTI_ERROR_INVALID_OPERATION);  // still pushed
  CUpti_RangeProfiler_PopRange_Params pop = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
  pop.pRangeProfilerObject = enable.pRangeProfilerObject;
  ASSERT_EQ(fake_->RangeProfilerPopRange(&pop), CUPTI_SUCCESS);
  EXPECT_EQ(fake_->RangeProfilerPopRange(&pop), CUPTI_ERROR_INVALID_OPERATION);
  ASSERT_EQ(fake_->RangeProfilerStop(&stop), CUPTI_SUCCESS);
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = image.data();
  info.counterDataImageSize = image.size();
  ASSERT_EQ(fake_->RangeProfilerGetCounterDataInfo(&info), CUPTI_SUCCESS);
  EXPECT_EQ(info.numTotalRanges, 1u);  // "inside" only
}

// Whatever kernel replay makes of a graph launch, the eager launches of the context keep
// their metrics and the graph launch's kernels are refused with the reason, counted.
// Fails without per-segment matching (the count or CTA check refused the whole context).
TEST_F(RangeSeamTest, AGraphLaunchWhoseRangesDoNotFitSpoilsOnlyItself) {
  using GR = FakeFaults::GraphRanges;
  for (GR how : {GR::kOnePerLaunch, GR::kNone, GR::kReversed}) {
    SCOPED_TRACE(static_cast<int>(how));
    fake_ = std::make_unique<FakeCupti>(Devices());
    fake_->faults.graph_ranges = how;
    auto c = Make(Metrics());
    ASSERT_TRUE(c->Start().ok());
    CUcontext ctx = fake_->CreateContext(0);
    std::map<std::string, FakeLaunch> launches;
    for (const FakeLaunch& l : {L("warmup_gemm", 64, 128), L("rmsnorm_kernel", 8, 256)}) {
      launches[l.name] = l;
      fake_->Launch(ctx, 7, l, 1);
    }
    fake_->BeginCapture(ctx, 7, 1);
    for (const FakeLaunch& l : {L("graph_attn", 32, 128), L("graph_moe", 16, 64), L("graph_norm", 4, 256)}) {
      fake_->Launch(ctx, 7, l, 1);
    }
    const uint64_t exec = fake_->Instantiate(ctx, fake_->EndCapture(ctx, 7, 1), 1);
    fake_->LaunchGraph(ctx, 7, exec, 1);
    for (const FakeLaunch& l : {L("argmax_kernel", 1, 1024), L("sample_kernel", 2, 32)}) {
      launches[l.name] = l;
      fake_->Launch(ctx, 7, l, 1);
    }
    proto::Trace t = Finish(c.get());
    const proto::CollectorStats& s = t.header().collector();
    ASSERT_TRUE(s.metrics_available()) << s.DebugString();
    EXPECT_EQ(Names(t), (std::map<std::string, int>{{"warmup_gemm", 1}, {"rmsnorm_kernel", 1},
                                                     {"argmax_kernel", 1}, {"sample_kernel", 1}}));
    ExpectOwnCounts(t, launches);
    const uint64_t graph_ranges = how == GR::kOnePerLaunch ? 1 : how == GR::kNone ? 0 : 3;
    EXPECT_EQ(s.cupti_detail().metric_ranges(), 4 + graph_ranges);
    EXPECT_EQ(s.cupti_detail().metric_ranges_refused(), graph_ranges);
    EXPECT_TRUE(HasWarning(t, "graph launch 1 (3 kernel nodes) made")) << s.DebugString();
    EXPECT_TRUE(HasWarning(t, "its kernels are refused, the context's other ranges stay"));
  }
}

// Graph ids and executable-graph ids are separate counters on a real driver (and in the
// fake): the first executable graph is 1, like the first graph. A replay of executable
// graph 1 must expect its own nodes, not those of graph 1. Fails when clones are kept by
// the executable graph's id in the map of graph ids.
TEST_F(RangeSeamTest, AnExecutableGraphWhoseIdIsAGraphIdKeepsItsOwnKernels) {
  auto c = Make(Metrics());
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->BeginCapture(ctx, 7, 1);  // graph 1: three kernels, never instantiated
  for (const char* k : {"a_first", "a_second", "a_third"}) fake_->LaunchKernel(ctx, 7, k, 1000, 1);
  const uint64_t graph_a = fake_->EndCapture(ctx, 7, 1);
  fake_->BeginCapture(ctx, 7, 1);  // graph 2: two kernels
  for (const char* k : {"b_first", "b_second"}) fake_->LaunchKernel(ctx, 7, k, 1000, 1);
  const uint64_t exec = fake_->Instantiate(ctx, fake_->EndCapture(ctx, 7, 1), 1);
  uint32_t exec_id = 0;
  ASSERT_EQ(fake_->GetGraphExecId(reinterpret_cast<CUgraphExec>(exec), &exec_id), CUPTI_SUCCESS);
  ASSERT_EQ(exec_id, graph_a);  // the numbers collide, as the test needs
  for (int r = 0; r < 3; ++r) fake_->LaunchGraph(ctx, 7, exec, 1);
  proto::Trace t = Finish(c.get());
  ASSERT_TRUE(t.header().collector().metrics_available()) << t.header().collector().DebugString();
  EXPECT_EQ(Names(t), (std::map<std::string, int>{{"b_first", 3}, {"b_second", 3}}));
  EXPECT_EQ(t.header().collector().cupti_detail().metric_ranges_refused(), 0u);
}

// Two threads launch one kernel each; CUPTI profiles them in the other order than their
// callbacks came (faults.swap_ranges). With equal grids the CTA count cannot tell:
//  - other blocks: the thread count catches it, and nothing is named (fails without the
//    second identity check: the two swap metrics);
//  - equal blocks too: nothing can tell them apart, both are refused and the kernels
//    around them keep theirs (fails without the neighbour rule: the two swap metrics).
TEST_F(RangeSeamTest, NeighboursWithEqualGridsInSwappedOrderAreRefusedNotSwapped) {
  for (uint32_t second_block : {512u, 128u}) {
    SCOPED_TRACE(second_block);
    fake_ = std::make_unique<FakeCupti>(Devices());
    fake_->faults.swap_ranges = {1};  // range 1 comes after range 2
    auto c = Make(Metrics());
    ASSERT_TRUE(c->Start().ok());
    CUcontext ctx = fake_->CreateContext(0);
    std::map<std::string, FakeLaunch> launches;
    const FakeLaunch first = L("mma_gemm_kernel", 1, 128), second = L("rmsnorm_kernel", 1, second_block);
    launches[first.name] = first;
    launches[second.name] = second;
    launches["head_kernel"] = L("head_kernel", 9, 64);
    launches["tail_kernel"] = L("tail_kernel", 5, 64);
    fake_->Launch(ctx, 7, launches["head_kernel"], 1);
    std::thread([&] { fake_->Launch(ctx, 7, first, 2); }).join();
    std::thread([&] { fake_->Launch(ctx, 7, second, 3); }).join();
    fake_->Launch(ctx, 7, launches["tail_kernel"], 1);
    proto::Trace t = Finish(c.get());
    ExpectOwnCounts(t, launches);  // never another kernel's metrics
    const proto::CollectorStats& s = t.header().collector();
    if (second_block != first.block) {
      EXPECT_EQ(t.activities_size(), 0);
      EXPECT_NE(s.metrics_unavailable_reason().find("threads"), std::string::npos)
          << s.metrics_unavailable_reason();
    } else {
      EXPECT_EQ(Names(t), (std::map<std::string, int>{{"head_kernel", 1}, {"tail_kernel", 1}}));
      EXPECT_TRUE(HasWarning(t, "cannot be told apart")) << s.DebugString();
    }
  }
}

// The counter data image grows with the metrics and the ranges, as libcupti's host
// library computes it (the fake's figures are held to libnvperf_host offline in
// profiler_cupti_real_test); the collector allocates what CUPTI asks for.
TEST_F(RangeSeamTest, CounterDataIsSizedFromTheMetricsAndTheRanges) {
  const std::vector<std::string> one = {"sm__ctas_launched.sum"};
  const std::vector<std::string> two = {"sm__ctas_launched.sum",
                                        "dram__throughput.avg.pct_of_peak_sustained_elapsed"};
  EXPECT_LT(FakeCupti::CounterDataBytes("GH100", one, 16), FakeCupti::CounterDataBytes("GH100", two, 16));
  EXPECT_EQ(FakeCupti::CounterDataBytes("GH100", two, 2048) - FakeCupti::CounterDataBytes("GH100", two, 2047),
            64u + 16u + 32u * 4u);  // dram__throughput needs three raw counters, CTAs one
  CoreOptions options;
  options.mode = CoreOptions::Mode::kMetrics;
  options.max_metric_kernels = 100;
  CollectorCore core(*fake_, options);
  ASSERT_TRUE(core.Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  ASSERT_TRUE(core.Stop().ok());
  const RangeEndStats stats = core.metric_range_stats();
  EXPECT_GT(stats.counter_data_bytes, 100u * (64 + 16 + 32 * 9));  // nine metrics, >= 1 raw each
}

}  // namespace
}  // namespace qprof::profiler::cupti
