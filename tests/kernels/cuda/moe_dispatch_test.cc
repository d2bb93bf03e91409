// The MoE CUDA paths are found by their registry names and agree with their registry
// entries (no GPU needed: lookups and argument checks only). A path the registry offers
// has a launcher; a name neither knows is an error naming the paths, never a fallback.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "kernels/registry/dispatch.h"
#include "kernels/registry/registry.h"

namespace qprof::kernels::cuda {
namespace {

TEST(MoeDispatchTest, EveryRegistryPathHasALauncherAndTheSameLimits) {
  std::vector<std::string> names;
  for (const MoeCudaPath* p : MoeCudaPaths()) names.push_back(p->name);
  EXPECT_EQ(names, MoePathNames());
  for (const std::string& name : MoePathNames()) {
    for (const char* fmt : {"mxfp4", "nvfp4"}) {
      const KernelInfo* info = KernelRegistry::Global().Find("moe." + name + "." + fmt);
      ASSERT_NE(info, nullptr) << name;
      auto path = FindMoeCudaPath(name);
      ASSERT_TRUE(path.ok()) << path.status();
      EXPECT_EQ((*path)->multiple, info->shape_multiples.at("inter")) << name;
      EXPECT_EQ((*path)->multiple, info->shape_multiples.at("dim")) << name;
      // An exact-arch entry is a path the launcher refuses elsewhere, and vice versa.
      const bool exact = info->cuda_archs.size() == 1 && info->cuda_archs[0].back() == 'a';
      EXPECT_EQ((*path)->only_sm != 0, exact) << name;
      if (exact) {
        EXPECT_EQ("sm_" + std::to_string((*path)->only_sm) + "a", info->cuda_archs[0]);
      }
    }
  }
}

TEST(MoeDispatchTest, UnknownPathIsAnErrorNamingThePaths) {
  auto path = FindMoeCudaPath("nonsense");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(path.status().message(),
            "unknown MoE CUDA path 'nonsense' (paths: slot_gemv, w4a16_mma, fp4_mma)");
}

// The registry's multiples are the ones CheckMoeCuda enforces: the multiple passes, half
// of it does not.
TEST(MoeDispatchTest, CheckMoeCudaEnforcesTheRegistryMultiples) {
  static uint8_t bytes[16];
  static float floats[4];
  static int32_t ids[4];
  for (const MoeCudaPath* path : MoeCudaPaths()) {
    const KernelInfo* info = KernelRegistry::Global().Find(std::string("moe.") + path->name + ".nvfp4");
    ASSERT_NE(info, nullptr);
    const int m = info->shape_multiples.at("inter");
    MoeParams p;
    p.format = Fp4Format::kNvfp4;
    p.tokens = 2;
    p.topk = 2;
    p.experts = 4;
    p.dim = 2 * m;
    p.inter = m;
    p.x = floats; p.out = floats; p.topk_weights = floats; p.topk_ids = ids;
    p.w13 = p.w2 = {bytes, bytes, floats};
    EXPECT_TRUE(CheckMoeCuda(p, *path).ok()) << path->name;
    p.inter = m / 2;
    EXPECT_EQ(CheckMoeCuda(p, *path).code(), absl::StatusCode::kInvalidArgument) << path->name;
  }
}

}  // namespace
}  // namespace qprof::kernels::cuda
