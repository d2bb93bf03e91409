// Dispatch by the registry (kernels/registry/dispatch.h) and the facts it rests on: every
// CUDA variant states its architectures and the kernels a call launches, every CPU-capable
// variant its stand-in, and a call's per-kernel parts of the work sum to the call's model.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/registry/dispatch.h"
#include "kernels/registry/registry.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {
namespace {

const KernelInfo& Get(const std::string& id) {
  const KernelInfo* k = KernelRegistry::Global().Find(id);
  EXPECT_NE(k, nullptr) << id;
  return *k;
}

TEST(RegistryDispatchTest, ChoicesComeFromTheEntries) {
  EXPECT_EQ(MoePathNames(), (std::vector<std::string>{"slot_gemv", "w4a16_mma", "fp4_mma"}));
  EXPECT_EQ(MlaVariantNames(), (std::vector<std::string>{"simt", "mma"}));
  EXPECT_EQ(MoeBackendChoices(), "auto, slot_gemv, w4a16_mma, fp4_mma");
  EXPECT_EQ(MlaKernelChoices(), "auto, simt, mma");
}

TEST(RegistryDispatchTest, ArchitecturesAreThoseWithRealKernels) {
  const KernelInfo& fp4 = Get("moe.fp4_mma.nvfp4");
  EXPECT_TRUE(RunsOnArch(fp4, "sm_120"));
  EXPECT_TRUE(RunsOnArch(fp4, "sm_120a"));
  EXPECT_FALSE(RunsOnArch(fp4, "sm_100"));  // no tcgen05 kernel: not claimed
  EXPECT_FALSE(RunsOnArch(fp4, "sm_90"));
  EXPECT_FALSE(RunsOnArch(fp4, ""));  // not portable: never `auto` on an unknown target
  const KernelInfo& w4 = Get("moe.w4a16_mma.mxfp4");
  for (const char* arch : {"sm_80", "sm_90", "sm_100", "sm_120", ""}) {
    EXPECT_TRUE(RunsOnArch(w4, arch)) << arch;
  }
  EXPECT_FALSE(RunsOnArch(w4, "sm_75"));
  EXPECT_FALSE(RunsOnArch(w4, "gfx942"));
  EXPECT_FALSE(RunsOnArch(Get("moe.grouped.mxfp4"), "sm_90"));  // CPU only
}

TEST(RegistryDispatchTest, AutoAndNamedPaths) {
  auto path = [](const char* fmt, const char* requested, const char* arch) {
    auto k = ResolveMoeVariant(fmt, requested, arch);
    return k.ok() ? (*k)->id : std::string(k.status().message());
  };
  EXPECT_EQ(path("mxfp4", "auto", "sm_120"), "moe.slot_gemv.mxfp4");
  EXPECT_EQ(path("nvfp4", "auto", "sm_120"), "moe.fp4_mma.nvfp4");
  EXPECT_EQ(path("nvfp4", "", "sm_100"), "moe.w4a16_mma.nvfp4");
  EXPECT_EQ(path("nvfp4", "auto", ""), "moe.w4a16_mma.nvfp4");
  EXPECT_EQ(path("mxfp4", "fp4_mma", ""), "moe.fp4_mma.mxfp4");  // the CPU stand-in runs it
  EXPECT_EQ(path("mxfp4", "fp4_mma", "sm_100"),
            "MoE backend fp4_mma has no kernel for sm_100 (it runs on sm_120a; choices on "
            "sm_100: auto, slot_gemv, w4a16_mma)");
  auto unknown = ResolveMoeVariant("nvfp4", "grouped", "");  // CPU-only: not a path
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(),
            "unknown MoE backend 'grouped' (choices: auto, slot_gemv, w4a16_mma, fp4_mma)");
  // MLA: auto on the MoE path's pipe; unknown names list the choices.
  EXPECT_EQ((*ResolveMlaVariant("auto", Get("moe.slot_gemv.mxfp4")))->id, "attn.sparse_mla.simt");
  EXPECT_EQ((*ResolveMlaVariant("", Get("moe.w4a16_mma.mxfp4")))->id, "attn.sparse_mla.mma");
  EXPECT_EQ((*ResolveMlaVariant("simt", Get("moe.fp4_mma.nvfp4")))->id, "attn.sparse_mla.simt");
  EXPECT_EQ(ResolveMlaVariant("flash", Get("moe.fp4_mma.nvfp4")).status().message(),
            "unknown MLA kernel 'flash' (choices: auto, simt, mma)");
}

TEST(RegistryDispatchTest, EveryVariantSaysWhereItRuns) {
  for (const KernelInfo& k : KernelRegistry::Global().All()) {
    if (k.has_cuda) {
      EXPECT_FALSE(k.cuda_archs.empty()) << k.id;
      EXPECT_FALSE(k.cuda_launches.empty()) << k.id;
      EXPECT_FALSE(k.cuda_kernel_name.empty()) << k.id;
      for (const CudaLaunch& l : k.cuda_launches) {
        EXPECT_TRUE(static_cast<bool>(l.work)) << k.id << " " << l.name;
        // A trace's kernel name finds the variant again (classification of our kernels).
        const KernelInfo* back = KernelRegistry::Global().FindByCudaName(l.name);
        ASSERT_NE(back, nullptr) << l.name;
        EXPECT_EQ(back->id, k.id) << l.name;
      }
      // An optional kernel's work folds into the first one, which must therefore always run
      // (a lone optional kernel, the NCCL all-reduce, has nothing to fold into).
      if (k.cuda_launches.size() > 1) {
        EXPECT_EQ(k.cuda_launches.front().when, CudaLaunch::When::kAlways) << k.id;
      }
    } else {
      EXPECT_TRUE(k.cuda_archs.empty() && k.cuda_launches.empty()) << k.id;
    }
    if (k.has_cpu && !k.cpu_stand_in.empty() && k.cpu_stand_in.find('.') != std::string::npos) {
      const KernelInfo* stand_in = KernelRegistry::Global().Find(k.cpu_stand_in);
      ASSERT_NE(stand_in, nullptr) << k.id << " -> " << k.cpu_stand_in;
      EXPECT_TRUE(stand_in->has_cpu);
      EXPECT_EQ(stand_in->role, k.role);
      EXPECT_EQ(stand_in->format, k.format);
    }
  }
  EXPECT_EQ(Get("moe.w4a16_mma.nvfp4").cpu_stand_in, "moe.grouped.nvfp4");
  EXPECT_EQ(Get("moe.slot_gemv.mxfp4").cpu_stand_in, "");  // its own CPU kernel
}

void ExpectSameWork(const proto::WorkModel& a, const proto::WorkModel& b, const std::string& what) {
  auto near = [](double x, double y) { return std::abs(x - y) <= 1e-9 * std::max(1.0, std::abs(y)); };
  EXPECT_TRUE(near(a.bytes(), b.bytes())) << what << ": " << a.bytes() << " vs " << b.bytes();
  EXPECT_TRUE(near(a.flops(), b.flops())) << what << ": " << a.flops() << " vs " << b.flops();
  EXPECT_TRUE(near(a.weight_bytes(), b.weight_bytes())) << what;
  EXPECT_TRUE(near(a.kv_bytes(), b.kv_bytes())) << what;
  EXPECT_TRUE(near(a.activation_bytes(), b.activation_bytes())) << what;
  EXPECT_TRUE(near(a.comm_bytes(), b.comm_bytes())) << what;
  EXPECT_TRUE(near(a.decode_ops(), b.decode_ops())) << what;
  EXPECT_EQ(a.compute_pipe(), b.compute_pipe()) << what;
}

// Each term of a call's model goes to exactly one of its kernels: the parts sum to it.
TEST(RegistryDispatchTest, KernelPartsSumToTheCallsWork) {
  const std::vector<KernelShape> shapes = {
      {{"tokens", 16}, {"topk", 6}, {"experts", 256}, {"dim", 4096}, {"inter", 2048},
       {"unique_experts", 80}},
      {{"tokens", 3}, {"topk", 6}, {"experts", 32}, {"dim", 4096}, {"inter", 2048},
       {"unique_experts", 2}, {"slots", 2}},
      {{"batch", 5}, {"heads", 16}, {"selected", 300}, {"d_qk", 576}, {"d_v", 512},
       {"context", 900}, {"index_heads", 64}, {"index_dim", 128}},
      {{"m", 7}, {"n", 1024}, {"k", 4096}, {"rows", 7}, {"cols", 4096}, {"dim", 4096},
       {"experts", 256}, {"topk", 6}, {"tokens", 7}, {"heads", 16}, {"rope_dim", 64},
       {"bytes", 4096 * 28}, {"ranks", 8}, {"ids", 42}, {"vocab", 129280}, {"d_qk", 576},
       {"index_dim", 128}, {"batch", 7}}};
  for (const KernelInfo& k : KernelRegistry::Global().All()) {
    for (const KernelShape& s : shapes) {
      std::vector<proto::WorkModel> parts;
      for (const CudaLaunch& l : k.cuda_launches) parts.push_back(l.work(s));
      if (parts.empty()) continue;
      ExpectSameWork(SumWork(parts), k.work(s), k.id);
    }
  }
}

}  // namespace
}  // namespace qprof::kernels
