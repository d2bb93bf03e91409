// Issue 25: the CUDA backend's graph path reports the same roles and the same per-kernel
// metrics with the graph on and off, on the fake GPU behind the CUPTI collector's seam.
// Each run is what the backend does: a trace pass of the decode loop (with the graph, step
// 1 captured with its ranges pushed and every later step replayed under ".../graph"),
// the per-layer attribution of the replays from the capture order (AttributeGraphReplays,
// which also checks the paths CUPTI's graph callbacks gave them), FinishCudaTrace (work
// models by range and launch order); then a metrics pass of the same program joined onto
// it (what `qprof record --metrics` does). The analyses of the two runs must agree for
// every kernel: calls, class, role, evidence, registry id, work source, and the measured
// tensor-pipe, FMA-pipe and DRAM figures.
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analyze.h"
#include "api/inputs.h"
#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/cupti_collector.h"
#include "profiler/cupti/metrics_join.h"
#include "runtime/cuda/cuda_trace.h"
#include "runtime/cuda/host/graph_paths.h"
#include "runtime/model_weights.h"
#include "tests/runtime/cuda/fake_decode.h"

namespace qprof::runtime::cuda {
namespace {

namespace fake = profiler::cupti::fake;
using testing::FakeDecodeOptions;
using testing::FakeDecodeWorkload;
using testing::PlayFakeDecode;

fake::FakeDevice H200() {
  fake::FakeDevice d;
  d.name = "NVIDIA H200";
  return d;
}

proto::Trace Pass(const RunOptions& o, const ModelWeights& w, bool graph, bool metrics,
                  DecodeLoop* loop, std::vector<CapturedNode>* chain) {
  fake::FakeCupti gpu({H200()});
  profiler::cupti::CuptiOptions options;
  if (metrics) options.mode = profiler::cupti::CuptiOptions::Mode::kMetrics;
  auto collector = profiler::cupti::MakeCuptiCollector(options, gpu);
  EXPECT_TRUE(collector.ok()) << collector.status();
  EXPECT_TRUE((*collector)->Start().ok());
  PlayFakeDecode(o, w, gpu, loop, graph, chain);
  proto::Trace trace;
  EXPECT_TRUE((*collector)->Stop().ok());
  EXPECT_TRUE((*collector)->Flush(&trace).ok());
  return trace;
}

// The backend's trace of the run, with the metrics pass joined.
proto::Trace BackendRun(const RunOptions& o, const ModelWeights& w, bool graph) {
  setenv("QPROF_CUPTI_QUIET", "1", 1);
  DecodeLoop loop;
  loop.start_unix_ns = 1'700'000'000'000'000'000;
  std::vector<CapturedNode> chain;
  proto::Trace trace = Pass(o, w, graph, false, &loop, &chain);
  RunOptions on_gpu = o;
  on_gpu.backend = "cuda";
  on_gpu.target_arch = "sm_90";
  on_gpu.cuda_graph = graph;
  if (graph) {
    const GraphAttribution a = AttributeGraphReplays(chain, 0, &trace);
    EXPECT_EQ(a.attributed, o.steps - 1);
    EXPECT_TRUE(a.unmatched.empty());
    EXPECT_EQ(a.path_disagreements, 0);
  }
  RunFacts facts;
  facts.backend = "cuda";
  facts.choice = FakeDecodeOptions(o).choice;
  facts.warmup_steps = CudaWarmupSteps(on_gpu);
  for (int s = facts.warmup_steps; s < o.steps; ++s) facts.wall_time_ns += loop.step_ns[s];
  CudaRunFacts cuda;
  cuda.devices = {0};
  const CudaDecoderOptions dopt = FakeDecodeOptions(o);
  const absl::Status st = FinishCudaTrace(
      on_gpu, w.arch, w, loop, facts, cuda, proto::RunSetup(),
      [&](int step, uint32_t) {
        return CudaDecoder::LaunchList(w.arch, w.format, w.layers, dopt, step, 132);
      },
      &trace);
  EXPECT_TRUE(st.ok()) << st;
  DecodeLoop unused;
  const proto::Trace metrics = Pass(o, w, graph, true, &unused, nullptr);
  EXPECT_TRUE(metrics.header().collector().metrics_available())
      << metrics.header().collector().DebugString();
  const profiler::cupti::JoinStats join = profiler::cupti::JoinKernelMetrics(metrics, &trace);
  EXPECT_EQ(join.unmatched, 0u);
  EXPECT_EQ(join.matched_by_name_mean, 0u);
  return trace;
}

using Row = std::tuple<uint64_t, std::string, std::string, std::string, std::string, std::string,
                       double, double, double>;

std::map<std::string, Row> Rows(const proto::Trace& trace) {
  std::map<std::string, Row> out;
  AnalyzeOptions opt;
  opt.known_kernels = api::RegistryKnownKernels();
  auto profile = Analyze({trace}, opt);
  EXPECT_TRUE(profile.ok()) << profile.status();
  if (!profile.ok()) return out;
  for (const proto::KernelRow& k : profile->kernels()) {
    out[k.name()] = Row{k.calls(), k.class_(), k.role(), k.evidence(), k.kernel_id(),
                        k.work_source(), k.has_tensor_pipe_pct() ? k.tensor_pipe_pct() : -1,
                        k.has_fma_pipe_pct() ? k.fma_pipe_pct() : -1,
                        k.has_dram_throughput_pct() ? k.dram_throughput_pct() : -1};
  }
  return out;
}

TEST(GraphPathFakeTest, GraphOnAndOffGiveTheSameRolesAndMetricsPerKernel) {
  const RunOptions o = FakeDecodeWorkload();
  kernels::ThreadPool pool(2);
  auto weights = MakeSyntheticWeights(*LoadModelArch(o.model), kernels::Fp4Format::kNvfp4, 0,
                                      o.seed, &pool);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const proto::Trace eager = BackendRun(o, *weights, false);
  const proto::Trace graph = BackendRun(o, *weights, true);
  int replayed = 0;
  for (const proto::Activity& a : graph.activities()) {
    if (a.graph_id() == 0) continue;
    ++replayed;
    EXPECT_EQ(a.args().at("nvtx_path_source"), "graph capture order") << a.name();
    EXPECT_FALSE(a.kernel_id().empty()) << a.name();
    EXPECT_TRUE(a.metrics().has_tensor_pipe_pct()) << a.name();
  }
  EXPECT_GT(replayed, 0);
  const std::map<std::string, Row> e = Rows(eager), g = Rows(graph);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e.size(), g.size());
  const char* what[] = {"calls", "class", "role", "evidence", "registry id", "work source",
                        "tensor-pipe %", "FMA-pipe %", "DRAM %"};
  for (const auto& [name, row] : e) {
    auto it = g.find(name);
    ASSERT_NE(it, g.end()) << name << " is not in the graph run";
    const Row& other = it->second;
    EXPECT_EQ(std::get<0>(row), std::get<0>(other)) << name << ": " << what[0];
    EXPECT_EQ(std::get<1>(row), std::get<1>(other)) << name << ": " << what[1];
    EXPECT_EQ(std::get<2>(row), std::get<2>(other)) << name << ": " << what[2];
    EXPECT_EQ(std::get<3>(row), std::get<3>(other)) << name << ": " << what[3];
    EXPECT_EQ(std::get<4>(row), std::get<4>(other)) << name << ": " << what[4];
    EXPECT_EQ(std::get<5>(row), std::get<5>(other)) << name << ": " << what[5];
    EXPECT_GE(std::get<6>(row), 0) << name << ": " << what[6] << " measured";
    EXPECT_DOUBLE_EQ(std::get<6>(row), std::get<6>(other)) << name << ": " << what[6];
    EXPECT_DOUBLE_EQ(std::get<7>(row), std::get<7>(other)) << name << ": " << what[7];
    EXPECT_DOUBLE_EQ(std::get<8>(row), std::get<8>(other)) << name << ": " << what[8];
  }
}

}  // namespace
}  // namespace qprof::runtime::cuda
