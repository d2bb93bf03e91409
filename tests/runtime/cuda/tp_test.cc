// Tensor parallel on the CUDA backend (qprof run --backend cuda --tp N; runtime/cuda/
// tp_ranks.h). Label gpu. On one GPU: two ranks share it through the host all-reduce
// (QPROF_TP_DEVICES=0,0 QPROF_TP_ALLREDUCE=host), which runs the whole split (head and
// expert slices, the expert-id remap, the shared-expert split, the residual on rank 0)
// against tp 1; the fault switch (QPROF_TP_FAULT) shows a failed rank ending the step
// promptly and a silent hang ending at the timeout, with the run spent afterwards; --tp 4
// fails with one line naming the GPU count. With N >= 2 GPUs: the same over NCCL, NCCL's
// kernels in decode/step S/layer L/comm on every device, and the fault switch over NCCL.
// Without a GPU every case skips with the reason.
#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "runtime/cuda/cuda_backend.h"
#include "tests/runtime/cuda/backends.h"
#include "runtime/cuda/tp_ranks.h"
#include "runtime/run.h"

namespace qprof {
namespace {

#define SKIP_WITHOUT_GPU()                                                       \
  do {                                                                           \
    std::string why_;                                                            \
    if (!runtime::cuda::CudaDevicePresent(&why_)) GTEST_SKIP() << "no CUDA device: " << why_; \
  } while (0)

// Sets environment variables for one scope and restores them.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& vars) {
    for (const auto& [k, v] : vars) {
      const char* old = std::getenv(k.c_str());
      saved_[k] = old == nullptr ? std::string("\x01") : std::string(old);
      setenv(k.c_str(), v.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [k, v] : saved_) {
      if (v == "\x01") {
        unsetenv(k.c_str());
      } else {
        setenv(k.c_str(), v.c_str(), 1);
      }
    }
  }

 private:
  std::map<std::string, std::string> saved_;
};

runtime::RunOptions Options(const char* model, const char* format, const char* moe) {
  runtime::RunOptions o;
  o.backend = "cuda";
  o.model = model;
  o.format = format;
  o.moe_backend = moe;
  o.batch = 3;
  o.steps = 4;
  o.context = 40;
  o.layers = 2;
  return o;
}

// tp N against tp 1: the split changes only the FP32 summation order (tp_partition_test
// proves the algebra on the CPU), so step 0 agrees everywhere and each later step loses at
// most one near-tie token.
void ExpectSameTokens(const runtime::RunResult& one, const runtime::RunResult& many, int steps) {
  ASSERT_EQ(many.tokens.size(), one.tokens.size());
  EXPECT_EQ(one.tokens[0], many.tokens[0]);
  int agree = 0, total = 0;
  for (size_t s = 0; s < one.tokens.size(); ++s) {
    for (size_t b = 0; b < one.tokens[s].size(); ++b) {
      agree += one.tokens[s][b] == many.tokens[s][b];
      ++total;
    }
  }
  EXPECT_GE(agree, total - (steps - 1)) << agree << " of " << total;
  EXPECT_EQ(many.trace.header().run().extra().at("tp_token_mismatch_steps"), "0");
}

TEST(CudaTpTest, TooFewGpusIsOneClearLine) {
  SKIP_WITHOUT_GPU();
  const int n = runtime::cuda::VisibleCudaDevices();
  if (n >= 4) GTEST_SKIP() << n << " GPUs visible: --tp 4 would run";
  runtime::RunOptions o = Options("tiny", "nvfp4", "slot_gemv");
  o.steps = 1;
  o.tp = 4;
  auto r = testing::RunOnBackends(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().message(), "--tp 4 needs 4 GPUs, found " + std::to_string(n));
}

class TwoRanksOneGpuTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TwoRanksOneGpuTest, HostAllReduceMatchesTp1) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options("small", GetParam(), "slot_gemv");
  auto one = testing::RunOnBackends(o);
  ASSERT_TRUE(one.ok()) << one.status();
  ScopedEnv env({{"QPROF_TP_DEVICES", "0,0"}, {"QPROF_TP_ALLREDUCE", "host"}});
  o.tp = 2;
  auto two = testing::RunOnBackends(o);
  ASSERT_TRUE(two.ok()) << two.status();
  ExpectSameTokens(*one, *two, o.steps);
  EXPECT_EQ(two->trace.header().run().extra().at("tp_devices"), "0,0");
  // The remap kernel runs in every layer's moe range.
  int remaps = 0;
  for (const proto::Activity& a : two->trace.activities()) {
    if (a.name() == "qprof_tp_local_expert_ids") {
      ++remaps;
      EXPECT_NE(a.nvtx_path().find("/moe"), std::string::npos) << a.nvtx_path();
    }
  }
  if (two->trace.activities_size() > 0) {
    EXPECT_EQ(remaps, 2 * o.steps * o.layers);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, TwoRanksOneGpuTest, ::testing::Values("mxfp4", "nvfp4"));

TEST(TpFaultTest, FailedRankEndsTheStepPromptlyAndTheRunIsSpent) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options("tiny", "nvfp4", "slot_gemv");
  o.tp = 2;
  ScopedEnv env({{"QPROF_TP_DEVICES", "0,0"}, {"QPROF_TP_ALLREDUCE", "host"},
                 {"QPROF_TP_TIMEOUT_S", "30"}, {"QPROF_TP_FAULT", "1:1:fail"}});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = testing::RunOnBackends(o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("tp rank 1: step 1: injected fault"),
            std::string::npos)
      << r.status();
  EXPECT_LT(secs, 25.0) << "rank 0 waited for the timeout instead of giving up";
}

TEST(TpFaultTest, SilentHangEndsAtTheTimeout) {
  SKIP_WITHOUT_GPU();
  runtime::RunOptions o = Options("tiny", "nvfp4", "slot_gemv");
  o.tp = 2;
  ScopedEnv env({{"QPROF_TP_DEVICES", "0,0"}, {"QPROF_TP_ALLREDUCE", "host"},
                 {"QPROF_TP_TIMEOUT_S", "3"}, {"QPROF_TP_FAULT", "1:2:hang"}});
  const auto t0 = std::chrono::steady_clock::now();
  auto r = testing::RunOnBackends(o);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded) << r.status();
  EXPECT_NE(std::string(r.status().message()).find("step 2"), std::string::npos) << r.status();
  EXPECT_GE(secs, 3.0);
}

struct Case {
  const char* model;
  const char* format;
  const char* moe;
  int tp;
};

class CudaTpVsTp1Test : public ::testing::TestWithParam<Case> {};

TEST_P(CudaTpVsTp1Test, NcclRanksGiveTheOneGpuTokens) {
  SKIP_WITHOUT_GPU();
  const Case c = GetParam();
  const int n = runtime::cuda::VisibleCudaDevices();
  if (n < c.tp) GTEST_SKIP() << "--tp " << c.tp << " needs " << c.tp << " GPUs, found " << n;
  runtime::RunOptions o = Options(c.model, c.format, c.moe);
  auto one = testing::RunOnBackends(o);
  ASSERT_TRUE(one.ok()) << one.status();
  o.tp = c.tp;
  auto many = testing::RunOnBackends(o);
  ASSERT_TRUE(many.ok()) << many.status();
  ExpectSameTokens(*one, *many, o.steps);
  EXPECT_EQ(many->trace.header().run().tp(), static_cast<uint32_t>(c.tp));
  // NCCL kernels inside ".../layer L/comm" on every rank's device (when CUPTI recorded).
  std::set<uint32_t> comm_devices;
  int kernels = 0;
  for (const proto::Activity& a : many->trace.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    const std::string& p = a.nvtx_path();
    if (p.size() >= 5 && p.compare(p.size() - 5, 5, "/comm") == 0) {
      EXPECT_NE(a.name().find("nccl"), std::string::npos) << a.name() << " in " << p;
      EXPECT_EQ(p.rfind("decode/step ", 0), 0u) << p;
      comm_devices.insert(a.device_id());
    }
  }
  if (kernels == 0) GTEST_SKIP() << "no kernel records (CUPTI unavailable): tokens checked only";
  EXPECT_EQ(comm_devices.size(), static_cast<size_t>(c.tp));
}

INSTANTIATE_TEST_SUITE_P(
    Presets, CudaTpVsTp1Test,
    ::testing::Values(Case{"tiny", "mxfp4", "slot_gemv", 2}, Case{"tiny", "nvfp4", "slot_gemv", 4},
                      Case{"small", "mxfp4", "w4a16_mma", 2},
                      Case{"small", "nvfp4", "w4a16_mma", 8}));

TEST(TpFaultTest, NcclFailedRankAbortsEveryCommunicator) {
  SKIP_WITHOUT_GPU();
  if (runtime::cuda::VisibleCudaDevices() < 2) GTEST_SKIP() << "NCCL faults need 2 GPUs";
  runtime::RunOptions o = Options("tiny", "nvfp4", "slot_gemv");
  o.tp = 2;
  ScopedEnv env({{"QPROF_TP_TIMEOUT_S", "30"}, {"QPROF_TP_FAULT", "1:1:fail"}});
  auto r = testing::RunOnBackends(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("communicators aborted on every rank"),
            std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace qprof
