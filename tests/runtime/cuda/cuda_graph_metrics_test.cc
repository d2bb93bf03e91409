// Our CUDA decoder under the CUPTI metrics collector, eager and with a CUDA graph (GPU;
// label gpu; run by the device check). Issue 25: the graph path must give the same
// kernels with the same per-kernel metrics as the eager path. The metrics pass sees the
// kernels in the order it profiles them: the same sequence both ways (step 1's capture
// makes no range, its replays one per node), each range tied to its kernel by CTA count
// (or refused: the test then fails with the reason). Hardware counters vary a little
// from run to run, so the figures are compared per kernel name as means, within 10
// points of utilisation.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/cupti_collector.h"
#include "proto/trace.pb.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/model_arch.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace qprof::runtime::cuda {
namespace {

constexpr int kSteps = 4;

struct Pass {
  std::vector<std::string> names;               // in profiling order
  std::map<std::string, std::pair<double, int>> tensor;  // name -> (sum, count)
  proto::CollectorStats stats;
};

Pass MetricsPassOfDecode(const ModelWeights& weights, const RunOptions& o, bool graph) {
  Pass pass;
  CudaDecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = *ChooseKernels(o);
  d.seed = o.seed;
  d.cuda_graph = graph;
  auto decoder = CudaDecoder::Create(weights, d);
  EXPECT_TRUE(decoder.ok()) << decoder.status();
  if (!decoder.ok()) return pass;
  profiler::cupti::CuptiOptions options;
  options.mode = profiler::cupti::CuptiOptions::Mode::kMetrics;
  options.max_metric_kernels = 8192;
  auto collector = profiler::cupti::MakeCuptiCollector(options);
  EXPECT_TRUE(collector.ok());
  EXPECT_TRUE((*collector)->Start().ok());
  std::vector<int32_t> tokens(o.batch, 1), next;
  for (int s = 0; s < kSteps; ++s) {
    const absl::Status st = (*decoder)->Step(s, tokens, nullptr, &next);
    EXPECT_TRUE(st.ok()) << st;
    tokens = next;
  }
  EXPECT_TRUE((*collector)->Stop().ok());
  proto::Trace trace;
  EXPECT_TRUE((*collector)->Flush(&trace).ok());
  pass.stats = trace.header().collector();
  for (const proto::Activity& a : trace.activities()) {
    pass.names.push_back(a.name());
    if (a.metrics().has_tensor_pipe_pct()) {
      pass.tensor[a.name()].first += a.metrics().tensor_pipe_pct();
      pass.tensor[a.name()].second += 1;
    }
  }
  return pass;
}

TEST(CudaGraphMetricsTest, GraphAndEagerDecodeGiveTheSameKernelsAndMetrics) {
  std::string why;
  if (!CudaDevicePresent(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  RunOptions o;
  o.model = "tiny";
  o.format = "nvfp4";
  o.batch = 4;
  o.steps = kSteps;
  o.context = 64;
  kernels::ThreadPool pool(4);
  auto arch = LoadModelArch(o.model);
  ASSERT_TRUE(arch.ok());
  auto weights = MakeSyntheticWeights(*arch, kernels::Fp4Format::kNvfp4, 0, o.seed, &pool);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const Pass eager = MetricsPassOfDecode(*weights, o, false);
  if (!eager.stats.metrics_available() &&
      eager.stats.metrics_unavailable_reason().find("admin") != std::string::npos) {
    GTEST_SKIP() << eager.stats.metrics_unavailable_reason();
  }
  const Pass graph = MetricsPassOfDecode(*weights, o, true);
  ASSERT_TRUE(eager.stats.metrics_available()) << eager.stats.metrics_unavailable_reason();
  ASSERT_TRUE(graph.stats.metrics_available()) << graph.stats.metrics_unavailable_reason();
  std::printf("eager: %zu kernels, graph: %zu kernels, %u counter passes, %llu graph "
              "launches, %llu captured launches\n",
              eager.names.size(), graph.names.size(), graph.stats.cupti_detail().metric_passes(),
              static_cast<unsigned long long>(graph.stats.cupti_detail().graph_launches()),
              static_cast<unsigned long long>(graph.stats.cupti_detail().launches_captured()));
  EXPECT_EQ(graph.names, eager.names);
  EXPECT_EQ(graph.stats.cupti_detail().metric_ranges_refused(), 0u);
  for (const auto& [name, sum] : eager.tensor) {
    auto it = graph.tensor.find(name);
    ASSERT_NE(it, graph.tensor.end()) << name;
    const double e = sum.first / sum.second, g = it->second.first / it->second.second;
    EXPECT_NEAR(e, g, 10.0) << name << ": tensor-pipe % eager vs graph";
  }
}

}  // namespace
}  // namespace qprof::runtime::cuda
