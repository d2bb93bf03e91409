// runtime/work_join.h on records made here: each kernel record of a step gets its part of
// its call's work by NVTX range and launch order; the parts of a call sum to the call's
// work model; an optional kernel that did not run gives its part to the call's first one;
// foreign and missing kernels are counted, not guessed.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/registry/registry.h"
#include "runtime/decode_step.h"
#include "runtime/plan.h"
#include "runtime/work_join.h"

namespace qprof::runtime {
namespace {

// The step's calls with every kernel the registry lists, except kinds in `skip`.
std::vector<StepKernels> Expected(const RunOptions& o, int step,
                                  kernels::CudaLaunch::When skip = kernels::CudaLaunch::When::kAlways) {
  const ModelArch arch = *LoadModelArch(o.model);
  const KernelChoice choice = *ChooseKernels(o);
  std::vector<StepKernels> out;
  for (StepLaunch& l : DescribeDecodeStep(arch, *StepDimsFor(o, arch, choice, step, 0))) {
    const kernels::KernelInfo* info = kernels::KernelRegistry::Global().Find(l.kernel_id);
    StepKernels c{std::move(l), {}};
    for (const kernels::CudaLaunch& k : info->cuda_launches) {
      if (k.when == kernels::CudaLaunch::When::kAlways || k.when != skip) c.kernels.push_back(&k);
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Kernel records of `steps` steps in launch order, as a GPU collector hands them over.
proto::Trace Records(const RunOptions& o, int steps, kernels::CudaLaunch::When skip) {
  proto::Trace t;
  int64_t ns = 1000;
  for (int s = 0; s < steps; ++s) {
    for (const StepKernels& c : Expected(o, s, skip)) {
      for (const kernels::CudaLaunch* k : c.kernels) {
        proto::Activity* a = t.add_activities();
        a->set_kind(proto::ACTIVITY_KIND_KERNEL);
        a->set_name(k->name_is_prefix ? k->name + "_Sum_f32_RING_LL" : k->name);
        a->set_nvtx_path(absl::StrCat("decode/step ", s, "/", c.launch.range));
        a->set_start_ns(ns);
        a->set_end_ns(ns + 500);
        ns += 1000;
      }
    }
  }
  return t;
}

RunOptions Small(const char* moe, int tp = 1) {
  RunOptions o;
  o.model = "small";
  o.format = "nvfp4";
  o.moe_backend = moe;
  o.mla_kernel = "mma";
  o.batch = 2;
  o.context = 600;
  o.layers = 2;
  o.tp = tp;
  return o;
}

TEST(WorkJoinTest, EveryKernelGetsItsPartAndCallsSumToThePlan) {
  for (const char* moe : {"slot_gemv", "w4a16_mma", "fp4_mma"}) {
    const RunOptions o = Small(moe, /*tp=*/2);
    proto::Trace t = Records(o, 3, kernels::CudaLaunch::When::kAlways);
    auto stats = JoinStepWork([&](int step, uint32_t) { return Expected(o, step); }, &t);
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->joined, stats->kernels) << moe;
    EXPECT_EQ(stats->kernels, static_cast<uint64_t>(t.activities_size()));
    EXPECT_EQ(stats->unmatched + stats->missing + stats->outside, 0u);
    // Per call (id and range of step 1): the records' bytes and FLOPs are the call's model.
    auto plan = PlanDecodeStep(o, *LoadModelArch(o.model), 1);
    ASSERT_TRUE(plan.ok());
    std::map<std::string, double> planned_bytes, joined_bytes, planned_flops, joined_flops;
    for (const proto::PlannedKernel& k : plan->kernels()) {
      planned_bytes[k.kernel_id() + " " + k.nvtx_path()] += k.work().bytes();
      planned_flops[k.kernel_id() + " " + k.nvtx_path()] += k.work().flops();
    }
    for (const proto::Activity& a : t.activities()) {
      EXPECT_FALSE(a.kernel_id().empty()) << a.name();
      EXPECT_EQ(a.attribution().evidence(), "registry") << a.name();
      if (a.nvtx_path().rfind("decode/step 1/", 0) != 0) continue;
      joined_bytes[a.kernel_id() + " " + a.nvtx_path()] += a.work().bytes();
      joined_flops[a.kernel_id() + " " + a.nvtx_path()] += a.work().flops();
    }
    ASSERT_EQ(joined_bytes.size(), planned_bytes.size());
    for (const auto& [key, bytes] : planned_bytes) {
      EXPECT_NEAR(joined_bytes[key], bytes, 1e-9 * bytes) << moe << " " << key;
      EXPECT_NEAR(joined_flops[key], planned_flops[key], 1e-9 * planned_flops[key] + 1e-9) << key;
    }
  }
}

TEST(WorkJoinTest, AnOptionalKernelThatDidNotRunGivesItsPartToTheFirst) {
  const RunOptions o = Small("w4a16_mma");
  // Recorded without the MLA's split-K combine; expected with and without it.
  proto::Trace t = Records(o, 1, kernels::CudaLaunch::When::kSplitK);
  const std::vector<StepKernels> unsplit = Expected(o, 0, kernels::CudaLaunch::When::kSplitK);
  auto stats = JoinStepWork([&](int, uint32_t) { return unsplit; }, &t);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->joined, stats->kernels);
  const kernels::KernelInfo* mla = kernels::KernelRegistry::Global().Find("attn.sparse_mla.mma");
  for (const proto::Activity& a : t.activities()) {
    if (a.name() != "qprof_attn_sparse_mla_mma") continue;
    // The main kernel writes the output itself: the whole call's work.
    for (const StepKernels& c : unsplit) {
      if (c.launch.kernel_id == mla->id && "decode/step 0/" + c.launch.range == a.nvtx_path()) {
        EXPECT_DOUBLE_EQ(a.work().bytes(), mla->work(c.launch.shape).bytes());
      }
    }
  }
  // The same records against a list that expects the combine: each layer misses one.
  proto::Trace t2 = Records(o, 1, kernels::CudaLaunch::When::kSplitK);
  auto split = JoinStepWork([&](int step, uint32_t) { return Expected(o, step); }, &t2);
  ASSERT_TRUE(split.ok());
  EXPECT_EQ(split->missing, static_cast<uint64_t>(o.layers));
  EXPECT_EQ(split->joined, split->kernels);
}

TEST(WorkJoinTest, ForeignKernelsAndPathsAreCountedNotGuessed) {
  const RunOptions o = Small("slot_gemv");
  proto::Trace t = Records(o, 1, kernels::CudaLaunch::When::kAlways);
  proto::Activity* foreign = t.add_activities();  // e.g. a library kernel inside a range
  foreign->set_kind(proto::ACTIVITY_KIND_KERNEL);
  foreign->set_name("cutlass_80_tensorop_gemm");
  foreign->set_nvtx_path("decode/step 0/layer 0/moe");
  foreign->set_start_ns(1);
  proto::Activity* outside = t.add_activities();
  outside->set_kind(proto::ACTIVITY_KIND_KERNEL);
  outside->set_name("qprof_rope");
  outside->set_nvtx_path("warmup");
  auto stats = JoinStepWork([&](int step, uint32_t) { return Expected(o, step); }, &t);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->unmatched, 1u);
  EXPECT_EQ(stats->outside, 1u);
  EXPECT_EQ(stats->joined, stats->kernels - 1);
  EXPECT_FALSE(foreign->has_work());
  EXPECT_FALSE(outside->has_work());
}

TEST(WorkJoinTest, StepOfPath) {
  std::string range;
  EXPECT_EQ(DecodeStepOfPath("decode/step 12/layer 3/moe", &range), 12);
  EXPECT_EQ(range, "layer 3/moe");
  EXPECT_EQ(DecodeStepOfPath("decode/step 0/head", &range), 0);
  EXPECT_EQ(range, "head");
  EXPECT_EQ(DecodeStepOfPath("decode/step x/head", &range), -1);
  EXPECT_EQ(DecodeStepOfPath("decode", &range), -1);
  EXPECT_EQ(DecodeStepOfPath("prefill/step 1/head", &range), -1);
}

}  // namespace
}  // namespace qprof::runtime
