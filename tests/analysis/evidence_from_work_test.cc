// Evidence from work, on a synthetic Kineto trace written here (H100 device properties):
// kernels with names no rule knows, each launched by an aten::mm whose shapes the trace
// records. Every expected figure is computed here from those shapes and durations:
//   fast BF16 GEMM   2*M*N*K over its time is above 4 x H100's 67 TFLOP/s FP32 peak: tensor,
//                    by the rate (evidence "work_rate");
//   fast FP32 GEMM   above 1 x 67 TFLOP/s (32-bit work has no 16-bit SIMT rates): tensor;
//   slow BF16 GEMM   under 4 x 67: no evidence of its pipe, class "other", and launched from
//                    vLLM's vocab_parallel_embedding.py yet a GEMM (role gemm.dense, the op's).
// Then what follows from them: the role gemm.dense holds a row without a roof, so it has no
// fraction of roof (and says why); class "other" is above 5% of kernel time, so the headline
// names it in JSON, terminal and HTML.
#include <string>

#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "reports/html/html_report.h"
#include "reports/terminal/terminal_report.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

constexpr double kH100Fp32Tflops = 67;  // NVIDIA H100 SXM datasheet, FP32 (spec table)

struct Gemm {
  const char* kernel;
  int m, n, k;
  const char* dtype;  // Kineto "Input type"
  double dur_us;
  bool under_embedding;
};

// fast: 2*4096^3 = 137.4 GFLOP in 200 us = 687 TFLOP/s > 4 x 67 = 268.
// fp32: 2*2048^3 = 17.2 GFLOP in 200 us = 85.9 TFLOP/s > 67.
// slow: 137.4 GFLOP in 1000 us = 137 TFLOP/s < 268.
constexpr Gemm kGemms[] = {
    {"mystery_fast_kernel", 4096, 4096, 4096, "c10::BFloat16", 200, false},
    {"mystery_fp32_kernel", 2048, 2048, 2048, "float", 200, false},
    {"mystery_slow_kernel", 4096, 4096, 4096, "c10::BFloat16", 1000, true},
};

double Flops(const Gemm& g) { return 2.0 * g.m * g.n * g.k; }

std::string Event(const std::string& cat, const std::string& name, int pid, int tid, double ts,
                  double dur, const std::string& args) {
  return "{\"ph\":\"X\",\"cat\":\"" + cat + "\",\"name\":\"" + name + "\",\"pid\":" +
         std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":" +
         std::to_string(ts) + ",\"dur\":" + std::to_string(dur) +
         (args.empty() ? "" : ",\"args\":" + args) + "}";
}

std::string Trace() {
  std::string events;
  auto add = [&](const std::string& e) { events += (events.empty() ? "" : ",\n") + e; };
  double cpu = 100, gpu = 10000;
  int corr = 0;
  for (const Gemm& g : kGemms) {
    const std::string dims = "[[" + std::to_string(g.m) + "," + std::to_string(g.k) + "],[" +
                             std::to_string(g.k) + "," + std::to_string(g.n) + "]]";
    const std::string args = "{\"Input Dims\":" + dims + ",\"Input type\":[\"" + g.dtype +
                             "\",\"" + g.dtype + "\"],\"Concrete Inputs\":[\"\",\"\"]}";
    if (g.under_embedding) {
      add(Event("python_function", "vllm/model_executor/layers/vocab_parallel_embedding.py(63): apply",
                7, 7, cpu - 2, 30, ""));
    }
    add(Event("cpu_op", "aten::mm", 7, 7, cpu, 20, args));
    ++corr;
    add(Event("cuda_runtime", "cudaLaunchKernel", 7, 7, cpu + 5, 3,
              "{\"correlation\":" + std::to_string(corr) + "}"));
    add(Event("kernel", g.kernel, 0, 7, gpu, g.dur_us,
              "{\"device\":0,\"stream\":7,\"correlation\":" + std::to_string(corr) + "}"));
    cpu += 100;
    gpu += g.dur_us + 10;
  }
  return "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB "
         "HBM3\",\"totalGlobalMem\":85045870592,\"computeMajor\":9,\"computeMinor\":0,"
         "\"numSms\":132,\"warpSize\":32}],\"traceEvents\":[" +
         events + "]}";
}

const proto::KernelRow* Row(const proto::Profile& p, const std::string& name) {
  for (const auto& k : p.kernels()) {
    if (k.name() == name) return &k;
  }
  return nullptr;
}

proto::Profile Analysed() {
  importers::ImportOptions io;
  io.progress = false;
  auto trace = importers::ImportFile(importers::testing::WriteTemp("work_rate.json", Trace()), io);
  EXPECT_TRUE(trace.ok()) << trace.status();
  auto p = Analyze({*trace}, {});
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

TEST(EvidenceFromWork, RateAboveTheCudaCoreRoofMeansTensorCores) {
  const proto::Profile p = Analysed();
  for (const Gemm& g : kGemms) {
    const proto::KernelRow* k = Row(p, g.kernel);
    ASSERT_NE(k, nullptr) << g.kernel;
    ASSERT_EQ(k->work_launches(), 1u) << g.kernel << ": " << k->work_note();
    EXPECT_DOUBLE_EQ(k->flops(), Flops(g)) << g.kernel;
    const double rate = Flops(g) / (g.dur_us * 1e3) / 1e3;  // TFLOP/s
    EXPECT_NEAR(k->achieved_tflops(), rate, rate * 1e-9) << g.kernel;
    const bool narrow = std::string(g.dtype) != "float";
    const double roof = narrow ? 4 * kH100Fp32Tflops : kH100Fp32Tflops;
    if (rate > roof) {
      EXPECT_EQ(k->class_(), "tensor") << g.kernel;
      EXPECT_EQ(k->evidence(), "work_rate") << g.kernel;
      EXPECT_NE(k->evidence_detail().find("rate above the CUDA-core roof"), std::string::npos);
    } else {
      EXPECT_EQ(k->class_(), "other") << g.kernel;
      EXPECT_NE(k->evidence(), "work_rate") << g.kernel;
    }
    // The op is a GEMM with shapes: its role is a GEMM's wherever it was called from.
    EXPECT_EQ(k->role(), "gemm.dense") << g.kernel << ": " << k->evidence_detail();
  }
}

TEST(EvidenceFromWork, ARoleWithARowWithoutARoofHasNoFractionOfRoof) {
  const proto::Profile p = Analysed();
  const proto::KernelRow* slow = Row(p, "mystery_slow_kernel");
  ASSERT_NE(slow, nullptr);
  EXPECT_FALSE(slow->has_peak_fraction());
  EXPECT_NE(slow->work_note().find("no roofline position"), std::string::npos) << slow->work_note();
  const proto::KernelRow* fast = Row(p, "mystery_fast_kernel");
  ASSERT_NE(fast, nullptr);
  EXPECT_TRUE(fast->has_peak_fraction());
  for (const auto& r : p.roles()) {
    if (r.role() != "gemm.dense") continue;
    // Its rate is over all three rows; one has no roof, so the role has no fraction.
    double flops = 0, time_ns = 0;
    for (const Gemm& g : kGemms) {
      flops += Flops(g);
      time_ns += g.dur_us * 1e3;
    }
    EXPECT_NEAR(r.achieved_tflops(), flops / time_ns / 1e3, 1e-6);
    EXPECT_FALSE(r.has_peak_fraction());
    EXPECT_TRUE(r.bound().empty());
    EXPECT_NE(r.roof_note().find("mystery_slow_kernel"), std::string::npos) << r.roof_note();
    return;
  }
  FAIL() << "no gemm.dense role";
}

TEST(EvidenceFromWork, HeadlineNamesClassOtherAboveFivePercent) {
  const proto::Profile p = Analysed();
  double total = 0;
  for (const Gemm& g : kGemms) total += g.dur_us;
  const double other = 1000 / total;  // the slow GEMM only
  ASSERT_TRUE(p.has_other_class());
  EXPECT_NEAR(p.other_class().share(), other, 1e-9);
  ASSERT_EQ(p.other_class().top_size(), 1);
  EXPECT_EQ(p.other_class().top(0).name(), "mystery_slow_kernel");
  const std::string text = reports::ProfileSummaryText(p, {});
  EXPECT_NE(text.find("is class \"other\""), std::string::npos) << text;
  EXPECT_NE(text.find("mystery_slow_kernel"), std::string::npos);
  const std::string html = reports::RenderProfileHtml(p, {});
  EXPECT_NE(html.find("id=\"other-share\""), std::string::npos);
}

}  // namespace
}  // namespace qprof
