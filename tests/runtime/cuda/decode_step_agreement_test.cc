// One description of the decode step (runtime/decode_step.h), three readers that agree
// launch for launch, on a CPU: the decode plan (runtime/plan.cc), the CUDA decoder's
// launch list made without a GPU (CudaDecoder::LaunchList) and the CPU backend's trace.
// Same registry ids, same range paths, same shapes (the data-dependent keys the CPU
// records with its real values), in the same order; every preset, both kinds of MoE path
// (SIMT slot GEMV and the grouped tensor-core paths) and tensor parallel where the plan
// covers it (rank 0). The CPU trace is compared for tiny and small: one v4-flash layer's
// experts alone are 3.4 GB, too much for a unit test on the host.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/registry/registry.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/decode_step.h"
#include "runtime/plan.h"
#include "runtime/run.h"
#include "runtime/tp_shape.h"

namespace qprof::runtime::cuda {
namespace {

struct Case {
  const char* model;
  const char* format;
  const char* moe;
  int tp;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  return absl::StrCat(info.param.model == std::string("v4-flash") ? "v4flash" : info.param.model,
                      "_", info.param.format, "_", info.param.moe, "_tp", info.param.tp);
}

RunOptions Options(const Case& c) {
  RunOptions o;
  o.model = c.model;
  o.format = c.format;
  o.moe_backend = c.moe;
  o.batch = 3;
  o.steps = 2;
  o.context = 48;
  o.layers = 2;
  o.tp = c.tp;
  o.threads = 2;
  return o;
}

// The CUDA decoder's options for rank 0 of a run with `o` (as the CUDA backend makes them).
CudaDecoderOptions CudaOptionsFor(const RunOptions& o, const ModelArch& arch) {
  CudaDecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = *ChooseKernels(o);
  d.seed = o.seed;
  if (o.tp > 1) {
    d.tp = *MakeTpSlice(arch, o.format == "mxfp4" ? kernels::Fp4Format::kMxfp4
                                                  : kernels::Fp4Format::kNvfp4,
                        o.tp, 0, MoeInterGranule(d.choice.moe_id));
    d.all_reduce = [](float*, size_t, void*, const PollFn&) { return absl::OkStatus(); };
  }
  return d;
}

class DecodeStepAgreementTest : public ::testing::TestWithParam<Case> {};

TEST_P(DecodeStepAgreementTest, PlanAndCudaLaunchListAgreeLaunchForLaunch) {
  const RunOptions o = Options(GetParam());
  const ModelArch arch = *LoadModelArch(o.model);
  auto plan = PlanDecode(o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto list = CudaDecoder::LaunchList(arch, o.format == "mxfp4" ? kernels::Fp4Format::kMxfp4
                                                                : kernels::Fp4Format::kNvfp4,
                                      o.layers, CudaOptionsFor(o, arch), /*step=*/0,
                                      /*sm_count=*/132);
  const kernels::KernelInfo* moe = kernels::KernelRegistry::Global().Find(
      absl::StrCat("moe.", plan->moe_backend(), ".", o.format));
  if (arch.dim % moe->shape_multiples.at("dim") != 0) {
    // tiny's dim 128 does not fit the tensor-core paths' 256 granule: the CUDA decoder says
    // so instead of listing launches it could not make (the CPU runs it: the test below).
    ASSERT_FALSE(list.ok());
    EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(list.status().message()).find("does not fit MoE path"),
              std::string::npos);
    return;
  }
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), static_cast<size_t>(plan->kernels_size()));
  size_t cuda_kernels = 0;
  for (size_t i = 0; i < list->size(); ++i) {
    const StepKernels& c = (*list)[i];
    const proto::PlannedKernel& p = plan->kernels(static_cast<int>(i));
    EXPECT_EQ(c.launch.kernel_id, p.kernel_id()) << i;
    EXPECT_EQ("decode/step 0/" + c.launch.range, p.nvtx_path()) << i;
    EXPECT_EQ(c.launch.shape, kernels::KernelShape(p.shape().begin(), p.shape().end())) << i;
    // Each call's CUDA kernels are the registry's for its variant, named so a trace finds
    // the variant again.
    ASSERT_FALSE(c.kernels.empty()) << c.launch.kernel_id;
    for (const kernels::CudaLaunch* k : c.kernels) {
      const kernels::KernelInfo* back = kernels::KernelRegistry::Global().FindByCudaName(k->name);
      ASSERT_NE(back, nullptr) << k->name;
      EXPECT_EQ(back->id, c.launch.kernel_id) << k->name;
    }
    cuda_kernels += c.kernels.size();
  }
  EXPECT_GT(cuda_kernels, list->size());  // routers, indexers and MoE paths launch several
}

TEST_P(DecodeStepAgreementTest, CpuTraceRunsThePlanLaunchForLaunch) {
  const Case c = GetParam();
  if (c.tp > 1) GTEST_SKIP() << "the CPU backend runs tp 1 only";
  if (std::string(c.model) == "v4-flash") GTEST_SKIP() << "v4-flash weights are too large here";
  RunOptions o = Options(c);
  o.backend = "cpu";
  auto run = RunDecode(o);
  ASSERT_TRUE(run.ok()) << run.status();
  auto plan = PlanDecode(o);
  ASSERT_TRUE(plan.ok());
  std::vector<const proto::Activity*> step0;
  for (const proto::Activity& a : run->trace.activities()) {
    if (a.nvtx_path().rfind("decode/step 0/", 0) == 0) step0.push_back(&a);
  }
  ASSERT_EQ(step0.size(), static_cast<size_t>(plan->kernels_size()));
  for (size_t i = 0; i < step0.size(); ++i) {
    const proto::PlannedKernel& p = plan->kernels(static_cast<int>(i));
    EXPECT_EQ(step0[i]->kernel_id(), p.kernel_id()) << i;
    EXPECT_EQ(step0[i]->nvtx_path(), p.nvtx_path()) << i;
    for (const auto& [key, value] : p.shape()) {
      ASSERT_TRUE(step0[i]->args().count(key)) << p.kernel_id() << " " << key;
      if (!IsDataDependentKey(p.kernel_id(), key)) {
        EXPECT_EQ(step0[i]->args().at(key), absl::StrCat(value)) << p.kernel_id() << " " << key;
      }
    }
  }
}

// The MLA's split-K combine is listed exactly when the launcher would split: small
// batches on a large GPU.
TEST(DecodeStepAgreementTest, TensorCoreMlaListsItsCombineWhenItSplits) {
  RunOptions o = Options({"small", "nvfp4", "w4a16_mma", 1});
  o.context = 1000;  // attention over the whole top-k: several token tiles to split
  const ModelArch arch = *LoadModelArch(o.model);
  auto count_combines = [&](int batch, int sms) {
    o.batch = batch;
    auto list = CudaDecoder::LaunchList(arch, kernels::Fp4Format::kNvfp4, o.layers,
                                        CudaOptionsFor(o, arch), 0, sms);
    EXPECT_TRUE(list.ok()) << list.status();
    int n = 0;
    for (const StepKernels& c : *list) {
      for (const kernels::CudaLaunch* k : c.kernels) n += k->name == "qprof_attn_sparse_mla_mma_combine";
    }
    return n;
  };
  EXPECT_EQ(count_combines(1, 132), o.layers);
  EXPECT_EQ(count_combines(64, 1), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Presets, DecodeStepAgreementTest,
    ::testing::Values(Case{"tiny", "mxfp4", "slot_gemv", 1}, Case{"tiny", "nvfp4", "w4a16_mma", 1},
                      Case{"tiny", "nvfp4", "slot_gemv", 2},
                      Case{"small", "mxfp4", "slot_gemv", 1},
                      Case{"small", "nvfp4", "w4a16_mma", 1},
                      Case{"small", "mxfp4", "w4a16_mma", 4},
                      Case{"v4-flash", "mxfp4", "slot_gemv", 1},
                      Case{"v4-flash", "nvfp4", "w4a16_mma", 1},
                      Case{"v4-flash", "mxfp4", "slot_gemv", 8},
                      Case{"v4-flash", "nvfp4", "w4a16_mma", 8}),
    Name);

}  // namespace
}  // namespace qprof::runtime::cuda
