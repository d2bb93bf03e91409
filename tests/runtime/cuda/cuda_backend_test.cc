// The CUDA backend through runtime::RunOnBackends (as `qprof run` chooses it). Everywhere: a clear "no CUDA device" error
// without a GPU, and `auto` falling back to the CPU. With a GPU (label gpu):
//  - --check on the CUDA backend replays the run's inputs on the CPU backend with the same
//    weights: the first step agrees everywhere and each later step at most one near-tie
//    token (a wrong step, e.g. a graph replaying stale inputs, flips most of a step);
//  - a CUDA-graph run gives exactly the eager run's tokens (same kernels, same inputs);
//  - steady-state timing: warm-up steps are recorded and left out of tokens/s, the run is
//    labelled a GPU measurement;
//  - graph replays carry per-layer ranges; step 0 of the trace is the plan's kernels on the
//    plan's paths (runtime/plan.cc);
//  - a batch sweep on shared weights decodes what separate runs decode.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <cuda_runtime_api.h>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "kernels/registry/registry.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_decoder.h"
#include "tests/runtime/cuda/backends.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace qprof {
namespace {

#define SKIP_WITHOUT_GPU()                                                       \
  do {                                                                           \
    std::string why_;                                                            \
    if (!runtime::cuda::CudaDevicePresent(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

TEST(CudaBackendTest, WithoutGpuSaysNoCudaDevice) {
  std::string why;
  if (runtime::cuda::CudaDevicePresent(&why)) GTEST_SKIP() << "a GPU is present";
  runtime::RunOptions o;
  o.backend = "cuda";
  o.model = "tiny";
  o.steps = 1;
  o.batch = 2;
  auto r = testing::RunOnBackends(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(r.status().message()).find("no CUDA device: "), std::string::npos)
      << r.status();
  EXPECT_EQ(runtime::cuda::MakeCudaBackend()->Probe(&why),
            runtime::DecodeBackend::Availability::kAbsent);
  EXPECT_EQ(why.rfind("no CUDA device: ", 0), 0u) << why;
  // A bad option is reported as such before any device is looked for, naming the
  // registry's choices.
  o.moe_backend = "nonsense";
  auto bad = testing::RunOnBackends(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "unknown MoE backend 'nonsense' (choices: auto, slot_gemv, w4a16_mma, fp4_mma)");
  o.moe_backend = "auto";
  // auto falls back to the CPU backend, silently (no GPU at all is no news).
  o.backend = "auto";
  auto cpu = testing::RunOnBackends(o);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->trace.header().run().backend(), "cpu");
  EXPECT_TRUE(cpu->backend_note.empty()) << cpu->backend_note;
}

struct Case {
  const char* model;
  const char* format;
  const char* moe;
};

runtime::RunOptions Options(const Case& c) {
  runtime::RunOptions o;
  o.backend = "cuda";
  o.model = c.model;
  o.format = c.format;
  o.moe_backend = c.moe;
  o.batch = 3;
  o.steps = 6;
  o.context = 40;
  o.layers = 2;
  return o;
}

class CudaVsCpuTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaVsCpuTest, CheckAgainstTheCpuBackendOnTheSameWeights) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options(GetParam());
  o.check = true;
  auto gpu = testing::RunOnBackends(o);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ASSERT_TRUE(gpu->check_vs_cpu.has_value());
  ASSERT_TRUE(gpu->check.has_value());
  const runtime::CheckResult& c = *gpu->check_vs_cpu;
  EXPECT_EQ(c.tokens_compared, o.batch * o.steps);
  // Each step is compared on the GPU's own inputs, so one bad step cannot hide behind
  // compounding: step 0 agrees everywhere, later steps lose at most one near-tie token.
  EXPECT_NE(c.first_disagreement_step, 0) << "step 0 differs from the CPU backend";
  EXPECT_GE(c.token_agreement * c.tokens_compared, c.tokens_compared - (o.steps - 1))
      << c.token_agreement;
  // BF16 activations in the MMA paths round differently from the CPU's grouped kernel.
  EXPECT_LT(c.logits_rel_error, 0.05) << "logits vs the CPU backend";
  const auto& run = gpu->trace.header().run();
  EXPECT_EQ(run.backend(), "cuda");
  EXPECT_EQ(gpu->trace.header().provenance(), proto::PROVENANCE_MEASURED_GPU);
  EXPECT_EQ(run.warmup_steps(), 1u);
  EXPECT_EQ(run.step_wall_ns_size(), o.steps);
  EXPECT_EQ(run.tokens_generated(), static_cast<uint64_t>(o.batch) * (o.steps - 1));
  EXPECT_EQ(run.tokens_size(), o.batch * o.steps);
  uint64_t timed = 0;
  for (int s = 1; s < o.steps; ++s) timed += run.step_wall_ns(s);
  EXPECT_EQ(run.wall_time_ns(), timed);
  EXPECT_GT(run.setup_wall_ns(), 0u);
}

TEST_P(CudaVsCpuTest, GraphReplaysGiveTheEagerTokensWithPerLayerRanges) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options(GetParam());
  auto eager = testing::RunOnBackends(o);
  ASSERT_TRUE(eager.ok()) << eager.status();
  o.cuda_graph = true;
  auto graph = testing::RunOnBackends(o);
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->tokens, eager->tokens) << "a CUDA-graph step decoded other tokens";
  const auto& h = graph->trace.header();
  EXPECT_EQ(h.run().warmup_steps(), 2u);
  EXPECT_GT(h.setup().graph_nodes(), 0u);
  EXPECT_GT(h.setup().graph_capture_ns(), 0u);
  int replayed = 0, kernels = 0;
  for (const proto::Activity& a : graph->trace.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    if (a.args().count("graph_replay") == 0) continue;
    ++replayed;
    EXPECT_NE(a.nvtx_path().find("/layer "), std::string::npos) << a.name() << " " << a.nvtx_path();
  }
  if (kernels == 0) GTEST_SKIP() << "no kernel records (CUPTI unavailable): tokens checked only";
  EXPECT_GT(replayed, 0) << "no replayed kernel got its capture-time range";
  for (const std::string& n : h.notes()) EXPECT_EQ(n.find("left under"), std::string::npos) << n;
  // Issue 25: CUPTI's graph callbacks gave every replayed kernel its capture-time path too,
  // and it agrees with the capture order.
  EXPECT_EQ(h.collector().cupti_detail().graph_kernels_unmapped(), 0u);
  EXPECT_GT(h.collector().cupti_detail().graph_kernels_capture_path(), 0u);
  for (const std::string& n : h.notes()) {
    EXPECT_EQ(n.find("another capture path"), std::string::npos) << n;
  }
}

TEST_P(CudaVsCpuTest, StepZeroIsThePlanKernelForKernel) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options(GetParam());
  o.steps = 2;
  auto gpu = testing::RunOnBackends(o);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  o.target_arch = gpu->trace.header().run().extra().at("device_arch");
  o.moe_backend = gpu->moe_backend_used;
  auto plan = runtime::PlanDecode(o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  std::set<std::pair<std::string, std::string>> planned, traced;
  for (const auto& k : plan->kernels()) planned.insert({k.kernel_id(), k.nvtx_path()});
  int kernels = 0;
  for (const proto::Activity& a : gpu->trace.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    if (a.nvtx_path().rfind("decode/step 0/", 0) != 0) continue;
    const kernels::KernelInfo* k = kernels::KernelRegistry::Global().FindByCudaName(a.name());
    ASSERT_NE(k, nullptr) << "unregistered kernel " << a.name();
    traced.insert({k->id, a.nvtx_path()});
  }
  if (kernels == 0) GTEST_SKIP() << "no kernel records (CUPTI unavailable)";
  EXPECT_EQ(traced, planned);
}

// The CUDA kernels of step 0, range by range in launch order, are the decoder's launch
// list made without a GPU (CudaDecoder::LaunchList), and every kernel record of the run
// carries its work model (runtime/work_join.h).
TEST_P(CudaVsCpuTest, StepZeroIsTheLaunchListAndEveryKernelHasWork) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options(GetParam());
  o.steps = 2;
  auto gpu = testing::RunOnBackends(o);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  o.target_arch = gpu->trace.header().run().extra().at("device_arch");
  const runtime::ModelArch arch = *runtime::LoadModelArch(o.model);
  runtime::cuda::CudaDecoderOptions d;
  d.context_lengths = runtime::ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = *runtime::ChooseKernels(o);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 0), cudaSuccess);
  auto list = runtime::cuda::CudaDecoder::LaunchList(
      arch, o.format == "mxfp4" ? kernels::Fp4Format::kMxfp4 : kernels::Fp4Format::kNvfp4,
      o.layers, d, 0, prop.multiProcessorCount);
  ASSERT_TRUE(list.ok()) << list.status();
  std::map<std::string, std::vector<std::string>> listed, traced;
  for (const runtime::StepKernels& c : *list) {
    for (const kernels::CudaLaunch* k : c.kernels) listed[c.launch.range].push_back(k->name);
  }
  std::vector<const proto::Activity*> step0;
  int with_work = 0, kernels = 0;
  for (const proto::Activity& a : gpu->trace.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    with_work += a.work().bytes() > 0;
    if (a.nvtx_path().rfind("decode/step 0/", 0) == 0) step0.push_back(&a);
  }
  if (kernels == 0) GTEST_SKIP() << "no kernel records (CUPTI unavailable)";
  std::sort(step0.begin(), step0.end(), [](const proto::Activity* x, const proto::Activity* y) {
    return x->start_ns() < y->start_ns();
  });
  for (const proto::Activity* a : step0) {
    traced[a->nvtx_path().substr(std::string("decode/step 0/").size())].push_back(a->name());
  }
  EXPECT_EQ(traced, listed);
  EXPECT_EQ(with_work, kernels);
}

INSTANTIATE_TEST_SUITE_P(
    Presets, CudaVsCpuTest,
    ::testing::Values(Case{"tiny", "mxfp4", "slot_gemv"}, Case{"tiny", "nvfp4", "slot_gemv"},
                      Case{"small", "mxfp4", "w4a16_mma"},
                      Case{"small", "nvfp4", "w4a16_mma"}));

TEST(CudaBatchSweepTest, SharedWeightsDecodeWhatSeparateRunsDecode) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options({"tiny", "nvfp4", "slot_gemv"});
  auto sweep = testing::RunBatchesOnBackends(o, {1, 3});
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  ASSERT_EQ(sweep->size(), 2u);
  EXPECT_FALSE((*sweep)[0].trace.header().setup().weights_reused());
  EXPECT_TRUE((*sweep)[1].trace.header().setup().weights_reused());
  EXPECT_GT((*sweep)[0].trace.header().setup().upload_ns(), 0u);
  EXPECT_EQ((*sweep)[1].trace.header().run().batch(), 3u);
  o.batch = 3;
  auto alone = testing::RunOnBackends(o);
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ((*sweep)[1].tokens, alone->tokens);
}

}  // namespace
}  // namespace qprof
