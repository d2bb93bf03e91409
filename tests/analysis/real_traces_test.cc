// Analyze() on the real GPU traces in ../shared/testdata (or $QPROF_TESTDATA): the kernel
// time the Profile reports equals the sum the test computes from the imported trace, the
// class shares add up, and the traps of FACTS.md come out right on real names.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/fixture_util.h"

namespace qprof {
namespace {

std::string TestDataDir() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) return env;
  return std::string(QPROF_SOURCE_DIR) + "/../shared/testdata";
}

struct Loaded {
  proto::Trace trace;
  proto::Profile profile;
};

bool Load(const std::string& rel, Loaded* out) {
  std::string path = TestDataDir() + "/" + rel;
  if (!std::filesystem::exists(path)) return false;
  importers::ImportOptions io;
  io.progress = false;
  auto t = importers::ImportFile(path, io);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return false;
  out->trace = *std::move(t);
  auto p = Analyze({out->trace}, {});
  EXPECT_TRUE(p.ok()) << p.status();
  if (!p.ok()) return false;
  out->profile = *std::move(p);
  return true;
}

#define LOAD_OR_SKIP(rel, var)                                                      \
  Loaded var;                                                                       \
  if (!Load(rel, &var)) GTEST_SKIP() << "test data not found: " << TestDataDir() << "/" << rel \
                                     << " (set QPROF_TESTDATA)";

std::string ClassOf(const proto::Profile& p, const std::string& prefix) {
  for (const auto& k : p.kernels()) {
    if (k.name().rfind(prefix, 0) == 0) return k.class_();
  }
  return "(absent)";
}

class EveryFile : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryFile, TotalsAgreeWithTheTraceAndSharesAddUp) {
  LOAD_OR_SKIP(GetParam(), d);
  uint64_t sum = 0, n = 0;
  for (const auto& a : d.trace.activities()) {
    if (a.kind() == proto::ACTIVITY_KIND_KERNEL && a.end_ns() >= a.start_ns()) {
      sum += a.end_ns() - a.start_ns();
      ++n;
    }
  }
  EXPECT_EQ(d.profile.totals().kernel_time_ns(), sum);
  EXPECT_EQ(d.profile.totals().kernel_count(), n);
  EXPECT_LE(d.profile.totals().busy_time_ns(), sum);
  if (n == 0 || sum == 0) return;  // no kernel time (a counter-only trace): no shares
  double share = 0;
  uint64_t class_time = 0;
  for (const auto& c : d.profile.classes()) {
    share += c.share();
    class_time += c.time_ns();
  }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(class_time, sum);
  // Every unknown kernel is listed and counted as class "other".
  for (const auto& k : d.profile.kernels()) {
    if (k.evidence() == "unknown") {
      EXPECT_EQ(k.class_(), "other") << k.name();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    RealTraces, EveryFile,
    ::testing::Values("kineto/a100_alexnet.json.gz", "kineto/a100_cupti_counters.json.gz",
                      "kineto/a100_triton_example.json.gz", "kineto/a100x2_nccl_allreduce.json.gz",
                      "kineto/diff_control_a100.json.gz", "kineto/diff_test_v100.json.gz",
                      "kineto/h100_qwen1.5-0.5b_inference.json.gz",
                      "nsys/a100_saxpy_mpi_nvtx.sqlite", "nsys/h100x2_train_after.sqlite",
                      "nsys/h100x2_train_before.sqlite", "nsys/rtx3080_mock.sqlite"));

TEST(RealTraces, H100QwenTensorGemmsSimtElementwise) {
  LOAD_OR_SKIP("kineto/h100_qwen1.5-0.5b_inference.json.gz", d);
  EXPECT_EQ(ClassOf(d.profile, "sm90_xmma_gemm_bf16bf16"), "tensor");
  EXPECT_EQ(ClassOf(d.profile, "at::native::elementwise_kernel"), "simt");
  EXPECT_EQ(ClassOf(d.profile, "pytorch_flash::flash_fwd_kernel"), "tensor");
}

TEST(RealTraces, NcclIsCommunication) {
  LOAD_OR_SKIP("kineto/a100x2_nccl_allreduce.json.gz", d);
  EXPECT_EQ(ClassOf(d.profile, "ncclKernel_AllReduce"), "comm");
  LOAD_OR_SKIP("nsys/h100x2_train_before.sqlite", n);
  EXPECT_EQ(ClassOf(n.profile, "ncclDevKernel_SendRecv"), "comm");
  EXPECT_EQ(ClassOf(n.profile, "nvjet_tst"), "tensor");
}

TEST(RealTraces, A100AlexnetSgemmIsSimtAndXmmaConvIsTensor) {
  LOAD_OR_SKIP("kineto/a100_alexnet.json.gz", d);
  EXPECT_EQ(ClassOf(d.profile, "ampere_sgemm"), "simt");
  EXPECT_EQ(ClassOf(d.profile, "sm80_xmma_fprop_implicit_gemm"), "tensor");
}

TEST(NcuJoin, MeasuredTensorPipeDecidesTheClass) {
  // A hand-written ncu details CSV for the known-answer fixture: Kernel2 (unknown by name)
  // shows 42% tensor pipe, the slot GEMV 0%.
  proto::Trace t = testing::LoadTextTrace("golden/decode_known_answer.textproto");
  importers::NcuJoinStats st;
  importers::ImportOptions io;
  io.progress = false;
  ASSERT_TRUE(importers::JoinNcuMetrics(&t, testing::TestDataPath("ncu/decode_known_answer.ncu.csv"),
                                        &st, io).ok());
  EXPECT_EQ(st.matched, 4);
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(ClassOf(*p, "Kernel2"), "tensor");
  EXPECT_EQ(ClassOf(*p, "_mxfp4_slot_gemv_kernel"), "simt");
  EXPECT_EQ(p->unknown_kernels_size(), 0);
  for (const auto& k : p->kernels()) {
    if (k.name() == "Kernel2") {
      EXPECT_EQ(k.evidence(), "measured");
      EXPECT_NEAR(k.tensor_pipe_pct(), 42.0, 1e-9);  // time-weighted mean of 42.5 and 41.5
    }
  }
}

}  // namespace
}  // namespace qprof
