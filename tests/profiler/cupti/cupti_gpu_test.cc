// The CUPTI collector on a real GPU (label: gpu). Skips with a reason without a device.
// Kernels come from bench/cupti_overhead_kernels (tiny and weight-streaming kernels).
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include "bench/cupti_overhead_kernels.h"
#include "gtest/gtest.h"
#include "profiler/cupti/cupti_collector.h"

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
  EXPECT_TRUE(trace.activities(0).metrics().has_sm_throughput_pct());
  EXPECT_TRUE(trace.activities(0).metrics().has_tensor_pipe_pct());
  EXPECT_LT(trace.activities(0).metrics().tensor_pipe_pct(), 1.0);  // no MMA in TinyKernel
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
