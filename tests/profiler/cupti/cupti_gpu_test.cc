// The CUPTI collector on a real GPU (label: gpu). Skips with a reason without a device.
// Kernels come from bench/cupti_overhead_kernels (tiny and weight-streaming kernels).
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "bench/cupti_overhead_kernels.h"
#include "gtest/gtest.h"
#include "profiler/cupti/cupti_collector.h"
#include "proto/trace.pb.h"

namespace qprof::profiler::cupti {
namespace {

class CuptiGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RouteNvtxToCupti();
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaMalloc(&out_, sizeof(float)), cudaSuccess);
  }
  void TearDown() override {
    if (out_ != nullptr) cudaFree(out_);
  }
  float* out_ = nullptr;
};

TEST_F(CuptiGpuTest, KernelsNvtxPathsAndGraphKernels) {
  auto collector = MakeCuptiCollector(CuptiOptions{});
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());
  nvtxRangePushA("gpu_test");
  nvtxRangePushA("launch");
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(BenchLaunchTinyKernel(out_), 0);
  nvtxRangePop();
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(BenchLaunchTinyKernelOn(out_, stream), 0);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  nvtxRangePushA("graph");
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  nvtxRangePop();
  nvtxRangePop();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  int plain = 0, graph_kernels = 0;
  for (const proto::Activity& a : trace.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    EXPECT_GT(a.end_ns(), a.start_ns());
    if (a.graph_id() != 0) {
      ++graph_kernels;
      EXPECT_EQ(a.nvtx_path(), "gpu_test/graph");
    } else {
      ++plain;
      EXPECT_EQ(a.nvtx_path(), "gpu_test/launch");
    }
  }
  EXPECT_EQ(plain, 1000);
  EXPECT_EQ(graph_kernels, 6);
  EXPECT_EQ(trace.header().collector().records_dropped(), 0u);
  EXPECT_FALSE(trace.header().devices().empty());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(CuptiGpuTest, MetricsPassMeasuresOrSaysWhyNot) {
  CuptiOptions options;
  options.mode = CuptiOptions::Mode::kMetrics;
  auto collector = MakeCuptiCollector(options);
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(BenchLaunchTinyKernel(out_), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_TRUE(s.metrics_requested());
  if (!s.metrics_available()) {
    EXPECT_FALSE(s.metrics_unavailable_reason().empty());
    GTEST_SKIP() << "metrics unavailable: " << s.metrics_unavailable_reason();
  }
  ASSERT_EQ(trace.activities_size(), 3);
  EXPECT_TRUE(trace.activities(0).metrics().has_dram_throughput_pct());
  EXPECT_TRUE(trace.activities(0).metrics().has_fma_pipe_pct());
  EXPECT_TRUE(trace.activities(0).metrics().has_tensor_pipe_pct());
  EXPECT_LT(trace.activities(0).metrics().tensor_pipe_pct(), 1.0);  // no MMA in TinyKernel
}

// ---- Issue 25: what CUPTI does not document, measured ----------------------------------

constexpr int kA = 0, kB = 1;  // GridKernelA, GridKernelB

bool IsKernel(const proto::Activity& a, int which) {
  return a.name().find(which == kA ? "GridKernelA" : "GridKernelB") != std::string::npos;
}

// Ends the test when counters are not allowed here (the reason is the metrics pass's).
#define QPROF_SKIP_WITHOUT_COUNTERS(trace)                                                \
  do {                                                                                     \
    const proto::CollectorStats& s_ = (trace).header().collector();                       \
    if (!s_.metrics_available() &&                                                         \
        s_.metrics_unavailable_reason().find("admin") != std::string::npos) {             \
      GTEST_SKIP() << s_.metrics_unavailable_reason();                                     \
    }                                                                                      \
  } while (0)

// A graph-captured workload under the metrics collector. The collector assumes (see
// profiler/cupti/graph_tracker.h) that launches made during capture make no range, and
// that kernel replay profiles a replayed graph kernel by kernel in node creation order
// without launch callbacks. Every range is checked by its CTA count: if an assumption is
// wrong the ranges are refused with the reason, which this test prints. Also prints the
// default set's pass count (must be at most three).
TEST_F(CuptiGpuTest, GraphCapturedKernelsUnderMetricsKeepTheirNames) {
  CuptiOptions options;
  options.mode = CuptiOptions::Mode::kMetrics;
  auto collector = MakeCuptiCollector(options);
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(BenchLaunchGridKernel(kA, out_, 3, stream), 0);
  ASSERT_EQ(BenchLaunchGridKernel(kB, out_, 5, stream), 0);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(BenchLaunchGridKernel(kA, out_, 7, stream), 0);
  ASSERT_EQ(BenchLaunchGridKernel(kB, out_, 11, stream), 0);
  ASSERT_EQ(BenchLaunchGridKernel(kA, out_, 13, stream), 0);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(BenchLaunchGridKernel(kB, out_, 17, stream), 0);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  QPROF_SKIP_WITHOUT_COUNTERS(trace);
  const proto::CollectorStats& s = trace.header().collector();
  std::printf("metrics: %s set, %u counter passes per kernel, %llu ranges, %llu refused\n",
              s.cupti_detail().metric_set().c_str(), s.cupti_detail().metric_passes(),
              static_cast<unsigned long long>(s.cupti_detail().metric_ranges()),
              static_cast<unsigned long long>(s.cupti_detail().metric_ranges_refused()));
  RecordProperty("metric_passes", static_cast<int>(s.cupti_detail().metric_passes()));
  EXPECT_LE(s.cupti_detail().metric_passes(), 3u);
  ASSERT_TRUE(s.metrics_available()) << s.metrics_unavailable_reason();
  const int which[] = {kA, kB, kA, kB, kA, kA, kB, kA, kB};
  const int ctas[] = {3, 5, 7, 11, 13, 7, 11, 13, 17};
  ASSERT_EQ(trace.activities_size(), 9) << s.DebugString();
  for (int i = 0; i < 9; ++i) {
    const proto::Activity& a = trace.activities(i);
    EXPECT_TRUE(IsKernel(a, which[i])) << i << ": " << a.name();
    EXPECT_DOUBLE_EQ(a.metrics().raw().at("sm__ctas_launched.sum"), ctas[i]) << i;
    EXPECT_EQ(a.graph_node_id() != 0, i >= 2 && i < 8) << i;
  }
  EXPECT_EQ(s.cupti_detail().launches_captured(), 3u);
}

// Two threads launching at once under the metrics collector. Whether CUPTI's launch
// callbacks are serialised with its auto ranges is not documented: the ranges are either
// all tied to their kernels, or refused with the reason (printed). Never mixed up.
TEST_F(CuptiGpuTest, LaunchesFromTwoThreadsUnderMetrics) {
  CuptiOptions options;
  options.mode = CuptiOptions::Mode::kMetrics;
  auto collector = MakeCuptiCollector(options);
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([this, w] {
      cudaStream_t stream;
      if (cudaStreamCreate(&stream) != cudaSuccess) return;
      for (int i = 0; i < 200; ++i) BenchLaunchGridKernel(w, out_, w == kA ? 3 : 5, stream);
      cudaStreamSynchronize(stream);
      cudaStreamDestroy(stream);
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  QPROF_SKIP_WITHOUT_COUNTERS(trace);
  const proto::CollectorStats& s = trace.header().collector();
  std::printf("two threads: %s\n", s.metrics_available() ? "every range tied to its kernel"
                                                         : s.metrics_unavailable_reason().c_str());
  for (const proto::Activity& a : trace.activities()) {
    EXPECT_DOUBLE_EQ(a.metrics().raw().at("sm__ctas_launched.sum"), IsKernel(a, kA) ? 3 : 5);
  }
}

// A second context on the device while the first holds its range profiler session:
// CUPTI documents that a session "may fail if any profiling session is active on the
// context or its device". The collector does not try: the second context waits for the
// device and is said; the first context's kernels keep their metrics.
TEST_F(CuptiGpuTest, SecondContextOnOneDeviceUnderMetrics) {
  using CtxCreate = CUresult (*)(CUcontext*, CUctxCreateParams*, unsigned int, CUdevice);
  using CtxPop = CUresult (*)(CUcontext*);
  using CtxDestroy = CUresult (*)(CUcontext);
  void* create = nullptr;
  void* pop = nullptr;
  void* destroy = nullptr;
  cudaDriverEntryPointQueryResult q;
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxCreate", &create, 13000, cudaEnableDefault, &q),
            cudaSuccess);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxPopCurrent", &pop, 13000, cudaEnableDefault, &q),
            cudaSuccess);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxDestroy", &destroy, 13000, cudaEnableDefault,
                                             &q), cudaSuccess);
  CuptiOptions options;
  options.mode = CuptiOptions::Mode::kMetrics;
  auto collector = MakeCuptiCollector(options);
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());  // the primary context (SetUp made it) is profiled
  ASSERT_EQ(BenchLaunchGridKernel(kA, out_, 3, nullptr), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CUcontext second = nullptr;
  ASSERT_EQ(reinterpret_cast<CtxCreate>(create)(&second, nullptr, 0, 0), CUDA_SUCCESS);
  ASSERT_EQ(BenchLaunchGridKernel(kB, nullptr, 5, nullptr), 0);  // in the second context
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  CUcontext popped = nullptr;
  ASSERT_EQ(reinterpret_cast<CtxPop>(pop)(&popped), CUDA_SUCCESS);
  ASSERT_EQ(reinterpret_cast<CtxDestroy>(destroy)(second), CUDA_SUCCESS);
  ASSERT_EQ(BenchLaunchGridKernel(kA, out_, 7, nullptr), 0);  // the primary again
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  QPROF_SKIP_WITHOUT_COUNTERS(trace);
  const proto::CollectorStats& s = trace.header().collector();
  ASSERT_TRUE(s.metrics_available()) << s.metrics_unavailable_reason();
  for (const std::string& c : s.cupti_detail().contexts_not_profiled()) {
    std::printf("not profiled: %s\n", c.c_str());
  }
  EXPECT_EQ(s.cupti_detail().contexts_not_profiled_size(), 1);
  int a = 0;
  for (const proto::Activity& k : trace.activities()) a += IsKernel(k, kA);
  EXPECT_EQ(a, 2);
}

// Trace mode: replayed kernels take the NVTX path open when their node was captured,
// below the path open at the graph launch. Relies on the undocumented ids (clones at
// instantiation, their ids in kernel records: graph_tracker.h); unmapped replays are
// counted and fail this test.
TEST_F(CuptiGpuTest, ReplayedKernelsTakeTheirCaptureNvtxPath) {
  auto collector = MakeCuptiCollector(CuptiOptions{});
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  nvtxRangePushA("outer");
  nvtxRangePushA("capture");
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  nvtxRangePushA("layer 0");
  ASSERT_EQ(BenchLaunchGridKernel(kA, out_, 3, stream), 0);
  nvtxRangePop();
  nvtxRangePushA("layer 1");
  ASSERT_EQ(BenchLaunchGridKernel(kB, out_, 5, stream), 0);
  nvtxRangePop();
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  nvtxRangePop();
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  nvtxRangePushA("replay");
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  nvtxRangePop();
  nvtxRangePop();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  int replayed = 0;
  for (const proto::Activity& a : trace.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL || a.graph_id() == 0) continue;
    ++replayed;
    EXPECT_EQ(a.nvtx_path(), IsKernel(a, kA) ? "outer/replay/layer 0" : "outer/replay/layer 1")
        << a.name();
  }
  EXPECT_EQ(replayed, 2);
  EXPECT_EQ(trace.header().collector().cupti_detail().graph_kernels_unmapped(), 0u);
}

// Last on purpose: resets the device. The teardown hook (what the injection library uses
// to write its trace) runs inside cudaDeviceReset, after the forced flush, so the kernels
// launched before the reset are in the trace.
TEST_F(CuptiGpuTest, DeviceResetFlushesAndCallsTheTeardownHook) {
  bool hook_called = false;
  CuptiOptions options;
  options.on_context_teardown = [&hook_called] { hook_called = true; };
  auto collector = MakeCuptiCollector(options);
  ASSERT_TRUE(collector.ok());
  ASSERT_TRUE((*collector)->Start().ok());
  for (int i = 0; i < 10; ++i) ASSERT_EQ(BenchLaunchTinyKernel(out_), 0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  out_ = nullptr;  // freed by the reset
  EXPECT_TRUE(hook_called);
  ASSERT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  ASSERT_TRUE((*collector)->Flush(&trace).ok());
  int kernels = 0;
  for (const proto::Activity& a : trace.activities()) kernels += a.kind() == proto::ACTIVITY_KIND_KERNEL;
  EXPECT_EQ(kernels, 10);
}

}  // namespace
}  // namespace qprof::profiler::cupti
