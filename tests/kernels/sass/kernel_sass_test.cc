// CI check of static attribution: the machine code of our own kernels must use the pipe
// their registry entry claims. Runs cuobjdump (pip wheel nvidia-cuda-cuobjdump or the
// toolkit) on the built CUDA kernel libraries and parses the dump with the analyzer's
// parser (analysis/sass), the same code `qprof sass` uses on users' binaries:
//  - w4a16_mma kernels: HMMA on every target (sm_90a, sm_100a, sm_120a);
//  - fp4_mma kernels: the block-scaled OMMA on sm_120a;
//  - tensor-core MLA: HMMA on every target;
//  - slot_gemv and the SIMT MLA: no tensor MMA at all, FP32 FFMA present;
//  - the dense projections (registered as tensor-pipe): HMMA.
#include <map>
#include <string>
#include <vector>

#include "analysis/sass/sass_parser.h"
#include "gtest/gtest.h"

namespace qprof {
namespace {

using sass::SassKernelStats;

// kernel name -> arch -> stats
using Index = std::map<std::string, std::map<std::string, SassKernelStats>>;

Index Load(const std::string& path) {
  Index idx;
  auto stats = sass::SassStatsForFile(path);
  EXPECT_TRUE(stats.ok()) << path << ": " << stats.status().ToString();
  if (!stats.ok()) return idx;
  for (const SassKernelStats& k : *stats) idx[k.name][k.arch] = k;
  return idx;
}

// cuobjdump takes seconds per library (8 MB of SASS for three targets): dump each library
// once per test binary.
const Index& Cached(const std::string& path) {
  static auto* cache = new std::map<std::string, Index>();
  auto it = cache->find(path);
  if (it == cache->end()) it = cache->emplace(path, Load(path)).first;
  return it->second;
}

class KernelSassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto found = sass::FindCuobjdump();
    if (!found.ok()) GTEST_SKIP() << "cuobjdump not available: " << found.status().message();
  }
};

const std::vector<std::string> kArchs = {"sm_90a", "sm_100a", "sm_120a"};

bool HasArch(const Index& idx, const std::string& kernel, const std::string& arch) {
  auto it = idx.find(kernel);
  return it != idx.end() && it->second.count(arch) > 0;
}

// Archs for which a kernel was built (the build may restrict CMAKE_CUDA_ARCHITECTURES).
std::vector<std::string> BuiltArchs(const Index& idx, const std::string& kernel) {
  std::vector<std::string> out;
  auto it = idx.find(kernel);
  if (it == idx.end()) return out;
  for (const auto& [arch, stats] : it->second) out.push_back(arch);
  return out;
}

TEST_F(KernelSassTest, W4a16MmaUsesHmmaOnEveryTarget) {
  Index idx = Cached(QPROF_MOE_CUDA_LIB);
  for (const char* k : {"qprof_moe_w4a16_mma_mxfp4_w13", "qprof_moe_w4a16_mma_mxfp4_w2",
                        "qprof_moe_w4a16_mma_nvfp4_w13", "qprof_moe_w4a16_mma_nvfp4_w2"}) {
    const auto archs = BuiltArchs(idx, k);
    ASSERT_FALSE(archs.empty()) << k << " not found in " << QPROF_MOE_CUDA_LIB;
    for (const std::string& arch : archs) {
      const SassKernelStats& s = idx[k][arch];
      EXPECT_EQ(s.pipe_class, "tensor") << k << " " << arch << ": " << s.detail;
      EXPECT_GT(s.mma_opcodes.count("HMMA") ? s.mma_opcodes.at("HMMA") : 0u, 0u)
          << k << " " << arch << ": " << s.detail;
    }
  }
}

TEST_F(KernelSassTest, SlotGemvIsSimtOnly) {
  Index idx = Cached(QPROF_MOE_CUDA_LIB);
  for (const char* k : {"qprof_moe_slot_gemv_mxfp4_w13", "qprof_moe_slot_gemv_mxfp4_w2",
                        "qprof_moe_slot_gemv_nvfp4_w13", "qprof_moe_slot_gemv_nvfp4_w2"}) {
    const auto archs = BuiltArchs(idx, k);
    ASSERT_FALSE(archs.empty()) << k;
    for (const std::string& arch : archs) {
      const SassKernelStats& s = idx[k][arch];
      EXPECT_EQ(s.tensor_mma, 0u) << k << " " << arch << ": " << s.detail;
      EXPECT_EQ(s.pipe_class, "simt") << k << " " << arch;
      EXPECT_GT(s.simt_fp32, 0u) << k << " " << arch << ": " << s.detail;
    }
  }
}

TEST_F(KernelSassTest, Fp4MmaUsesBlockScaledOmmaOnSm120a) {
  Index idx = Cached(QPROF_MOE_CUDA_LIB);
  for (const char* k : {"qprof_moe_fp4_mma_mxfp4_w13", "qprof_moe_fp4_mma_mxfp4_w2",
                        "qprof_moe_fp4_mma_nvfp4_w13", "qprof_moe_fp4_mma_nvfp4_w2"}) {
    if (!HasArch(idx, k, "sm_120a")) GTEST_SKIP() << "built without sm_120a";
    const SassKernelStats& s = idx[k]["sm_120a"];
    EXPECT_EQ(s.pipe_class, "tensor") << k << ": " << s.detail;
    EXPECT_GT(s.mma_opcodes.count("OMMA") ? s.mma_opcodes.at("OMMA") : 0u, 0u) << k << ": " << s.detail;
    // Other targets carry a stub (no block-scaled mma.sync there): no MMA at all.
    for (const char* arch : {"sm_90a", "sm_100a"}) {
      if (HasArch(idx, k, arch)) EXPECT_EQ(idx[k][arch].tensor_mma, 0u) << k << " " << arch;
    }
  }
}

TEST_F(KernelSassTest, SparseMlaTensorKernelUsesHmmaAndSimtKernelDoesNot) {
  Index idx = Cached(QPROF_MLA_CUDA_LIB);
  const auto mma_archs = BuiltArchs(idx, "qprof_attn_sparse_mla_mma");
  const auto simt_archs = BuiltArchs(idx, "qprof_attn_sparse_mla_simt");
  ASSERT_FALSE(mma_archs.empty());
  ASSERT_FALSE(simt_archs.empty());
  for (const std::string& arch : mma_archs) {
    const SassKernelStats& s = idx["qprof_attn_sparse_mla_mma"][arch];
    EXPECT_GT(s.mma_opcodes.count("HMMA") ? s.mma_opcodes.at("HMMA") : 0u, 0u) << arch << ": " << s.detail;
  }
  for (const std::string& arch : simt_archs) {
    const SassKernelStats& s = idx["qprof_attn_sparse_mla_simt"][arch];
    EXPECT_EQ(s.tensor_mma, 0u) << arch << ": " << s.detail;
    EXPECT_GT(s.simt_fp32, 0u) << arch;
  }
}

TEST_F(KernelSassTest, DenseProjectionsUseHmma) {
  Index idx = Cached(QPROF_COMMON_CUDA_LIB);
  for (const char* k : {"qprof_gemm_dense", "qprof_gemm_lm_head", "qprof_moe_router_gemm"}) {
    const auto archs = BuiltArchs(idx, k);
    ASSERT_FALSE(archs.empty()) << k;
    for (const std::string& arch : archs) {
      const SassKernelStats& s = idx[k][arch];
      EXPECT_GT(s.mma_opcodes.count("HMMA") ? s.mma_opcodes.at("HMMA") : 0u, 0u) << k << " " << arch;
    }
  }
}

TEST_F(KernelSassTest, EveryConfiguredArchIsPresent) {
  Index idx = Cached(QPROF_MOE_CUDA_LIB);
  std::string archs = QPROF_CUDA_ARCHS;  // e.g. "90a-real,100a-real,120a-real"
  for (const std::string& a : kArchs) {
    const std::string num = a.substr(3);  // "90a"
    if (archs.find(num) == std::string::npos) continue;
    EXPECT_TRUE(HasArch(idx, "qprof_moe_w4a16_mma_nvfp4_w13", a)) << a << " missing";
  }
}

}  // namespace
}  // namespace qprof
