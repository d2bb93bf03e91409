// Work from shapes on the shared real Kineto traces: every kernel row's FLOPs, bytes, launches
// with work and their time equal what the test computes from the raw file (raw_ops.h: its
// own join of kernels to the innermost cpu_op and its own reading of "Input Dims"), and every
// row with work satisfies achieved = work / work time. Traces recorded without shapes give
// no work at all.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <cctype>
#include <map>

#include "analysis/names/kernel_name.h"
#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/work/raw_ops.h"

namespace qprof {
namespace {

std::string TestDataDir() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) return env;
  return std::string(QPROF_SOURCE_DIR) + "/../shared/testdata";
}

struct Expected {
  double flops = 0, bytes = 0, time_ns = 0;
  uint64_t launches = 0;
  bool bytes_known = true;
};

bool Near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({1.0, std::fabs(a), std::fabs(b)});
}

class RealTraceWork : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceWork, RowsEqualTheRawShapesWork) {
  const std::string path = TestDataDir() + "/kineto/" + GetParam();
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "test data not found: " << path << " (set QPROF_TESTDATA)";
  }
  // The oracle: per normalised kernel name, the work of its launches.
  testing_work::RawOps raw = testing_work::ReadRawOps(path);
  std::map<const testing_work::RawOp*, std::vector<const testing_work::RawKernel*>> calls;
  for (const auto& k : raw.kernels) {
    if (k.op != nullptr && !k.graph) calls[k.op].push_back(&k);
  }
  std::map<std::string, Expected> want;
  size_t ops_with_shapes = 0;
  for (const auto& [op, kernels] : calls) {
    ops_with_shapes += op->has_shapes;
    testing_work::OracleWork w = testing_work::OpWorkOracle(*op, kernels.front()->name);
    if (!w.has) continue;
    const bool compute = w.flops > 0;
    // A GEMM, attention or convolution call's work goes to the kernels whose names say they
    // do it (diff_control_a100's addmm also launches splitKreduce_kernel, an epilogue
    // globalKernel or a bias copy next to its GEMM); those get nothing. A memory op's work is
    // split over every kernel it launched.
    std::vector<const testing_work::RawKernel*> doers;
    for (const auto* k : kernels) {
      std::string lower = k->name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      bool does = false;
      for (const char* word : {"gemm", "gemv", "flash", "fmha", "attention", "conv"}) {
        does |= lower.find(word) != std::string::npos;
      }
      if (!compute || does) doers.push_back(k);
    }
    if (compute) {
      ASSERT_EQ(doers.size(), 1u) << op->name << " launched " << kernels.size() << " kernels, "
                                  << doers.size() << " named as doing the work";
    }
    for (const auto* k : kernels) {
      if (std::find(doers.begin(), doers.end(), k) != doers.end()) continue;
      want[names::NormaliseKernelName(k->name)];  // a row with no work from this call
    }
    const double n = static_cast<double>(doers.size());
    for (const auto* k : doers) {
      Expected& e = want[names::NormaliseKernelName(k->name)];
      e.flops += w.flops / n;
      e.bytes += w.bytes / n;
      e.bytes_known &= w.bytes_known;
      e.time_ns += std::round(k->dur_us * 1000);
      e.launches += 1;
    }
  }
  importers::ImportOptions io;
  io.progress = false;
  auto trace = importers::ImportFile(path, io);
  ASSERT_TRUE(trace.ok()) << trace.status();
  auto profile = Analyze({*trace}, {});
  ASSERT_TRUE(profile.ok()) << profile.status();
  std::map<std::string, Expected> got;
  for (const auto& k : profile->kernels()) {
    Expected& g = got[k.name()];
    g.flops += k.flops();
    g.bytes += k.bytes();
    g.launches += k.work_launches();
    g.time_ns += static_cast<double>(k.work_time_ns());
    if (k.work_launches() > 0) {
      ASSERT_GT(k.work_time_ns(), 0u) << k.name();
      const double t = static_cast<double>(k.work_time_ns());
      // achieved = work / work time, over exactly the launches that carry work.
      if (k.flops() > 0) {
        ASSERT_TRUE(k.has_achieved_tflops()) << k.name();
        EXPECT_TRUE(Near(k.achieved_tflops(), k.flops() / t / 1e3, 1e-12)) << k.name();
      }
      if (k.bytes() > 0) {
        ASSERT_TRUE(k.has_achieved_gbps()) << k.name();
        EXPECT_TRUE(Near(k.achieved_gbps(), k.bytes() / t, 1e-12)) << k.name();
      }
      EXPECT_FALSE(k.work_source().empty()) << k.name();
      EXPECT_LE(k.work_launches(), k.calls()) << k.name();
    } else {
      EXPECT_FALSE(k.has_achieved_tflops()) << k.name();
      EXPECT_FALSE(k.has_achieved_gbps()) << k.name();
    }
  }
  for (const auto& [name, g] : got) {
    const Expected e = want.count(name) ? want[name] : Expected{};
    EXPECT_EQ(g.launches, e.launches) << name;
    EXPECT_TRUE(Near(g.flops, e.flops, 1e-9)) << name << ": " << g.flops << " vs " << e.flops;
    EXPECT_TRUE(Near(g.bytes, e.bytes_known ? e.bytes : 0, 1e-9))
        << name << ": " << g.bytes << " vs " << e.bytes;
    // Kineto's microsecond floats round to the nanosecond on both sides.
    EXPECT_NEAR(g.time_ns, e.time_ns, static_cast<double>(e.launches) + 1) << name;
  }
  for (const auto& [name, e] : want) EXPECT_TRUE(got.count(name)) << "no row for " << name;
  if (ops_with_shapes == 0) {
    for (const auto& k : profile->kernels()) EXPECT_EQ(k.work_launches(), 0u) << k.name();
  }
  RecordProperty("rows_with_work", static_cast<int>(want.size()));
}

INSTANTIATE_TEST_SUITE_P(Shared, RealTraceWork,
                         ::testing::Values("h100_qwen1.5-0.5b_inference.json.gz",
                                           "a100_alexnet.json.gz", "diff_control_a100.json.gz",
                                           "a100x2_nccl_allreduce.json.gz"));

// The Qwen trace's GEMMs and flash attention get work, rates and a roofline position on the
// H100 (done means of the issue).
TEST(RealTraceWork, QwenGemmsAndFlashAttentionHaveRates) {
  const std::string path = TestDataDir() + "/kineto/h100_qwen1.5-0.5b_inference.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << path;
  importers::ImportOptions io;
  io.progress = false;
  auto trace = importers::ImportFile(path, io);
  ASSERT_TRUE(trace.ok());
  auto p = Analyze({*trace}, {});
  ASSERT_TRUE(p.ok());
  int gemm = 0, flash = 0;
  for (const auto& k : p->kernels()) {
    const bool is_gemm = k.name().rfind("sm90_xmma_gemm", 0) == 0;
    const bool is_flash = k.name().find("flash_fwd_kernel") != std::string::npos;
    if (!is_gemm && !is_flash) continue;
    if (k.work_launches() == 0) continue;
    (is_gemm ? gemm : flash) += 1;
    EXPECT_TRUE(k.has_achieved_tflops());
    EXPECT_TRUE(k.has_achieved_gbps());
    EXPECT_EQ(k.roof_pipe(), "tensor_bf16") << k.name();
    ASSERT_TRUE(k.has_peak_fraction()) << k.name();
    EXPECT_GT(k.peak_fraction(), 0);
    EXPECT_LE(k.peak_fraction(), 1.0) << k.name() << " claims more than the roof";
    EXPECT_FALSE(k.bound().empty());
    EXPECT_NE(k.work_source().find(is_gemm ? "aten::" : "aten::_flash_attention_forward"),
              std::string::npos)
        << k.work_source();
  }
  EXPECT_GE(gemm, 1);
  EXPECT_EQ(flash, 1);
  EXPECT_EQ(p->roofs().device(), "H100 SXM");
}

}  // namespace
}  // namespace qprof
