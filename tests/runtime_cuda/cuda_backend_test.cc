// The CUDA backend through runtime::RunDecode: a clear "no CUDA device" error without a GPU
// (runs everywhere), and with a GPU the same greedy tokens and close logits as the CPU
// backend on the tiny and small presets (label gpu).
#include <string>

#include "gtest/gtest.h"
#include "runtime/cuda/cuda_run.h"
#include "runtime/run.h"

namespace qprof {
namespace {

TEST(CudaBackendTest, WithoutGpuSaysNoCudaDevice) {
  std::string why;
  if (runtime::CudaDevicePresent(&why)) GTEST_SKIP() << "a GPU is present";
  runtime::RunOptions o;
  o.backend = "cuda";
  o.model = "tiny";
  o.steps = 1;
  o.batch = 2;
  auto r = runtime::RunDecode(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(r.status().message()).find("no CUDA device: "), std::string::npos)
      << r.status();
  // auto falls back to the CPU backend.
  o.backend = "auto";
  auto cpu = runtime::RunDecode(o);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->trace.header().run().backend(), "cpu");
}

struct Case {
  const char* model;
  const char* format;
  const char* moe;
  bool graph;
};

class CudaVsCpuTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaVsCpuTest, SameTokensAsCpu) {
  std::string why;
  if (!runtime::CudaDevicePresent(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  const Case c = GetParam();
  runtime::RunOptions o;
  o.model = c.model;
  o.format = c.format;
  o.moe_backend = c.moe;
  o.batch = 3;
  o.steps = 4;
  o.context = 40;
  o.layers = 2;
  o.cuda_graph = c.graph;
  o.backend = "cpu";
  auto cpu = runtime::RunDecode(o);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  o.backend = "cuda";
  auto gpu = runtime::RunDecode(o);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  ASSERT_EQ(gpu->tokens.size(), cpu->tokens.size());
  int agree = 0, total = 0;
  for (size_t s = 0; s < cpu->tokens.size(); ++s) {
    for (size_t b = 0; b < cpu->tokens[s].size(); ++b) {
      agree += cpu->tokens[s][b] == gpu->tokens[s][b];
      ++total;
    }
  }
  // BF16 MMA paths round activations, so an occasional near-tie may flip a greedy token;
  // the first step must agree everywhere.
  EXPECT_EQ(cpu->tokens[0], gpu->tokens[0]);
  EXPECT_GE(agree, total * 3 / 4) << agree << " of " << total;
  EXPECT_EQ(gpu->trace.header().run().backend(), "cuda");
}

INSTANTIATE_TEST_SUITE_P(
    Presets, CudaVsCpuTest,
    ::testing::Values(Case{"tiny", "mxfp4", "slot_gemv", false}, Case{"tiny", "nvfp4", "slot_gemv", true},
                      Case{"small", "mxfp4", "w4a16_mma", false},
                      Case{"small", "nvfp4", "w4a16_mma", true}));

}  // namespace
}  // namespace qprof
