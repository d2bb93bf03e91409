// A synthetic tensor-parallel decode over PCIe, the user story's shape: 8 ranks on RTX PRO
// 6000 cards, one PyTorch-profiler (Kineto JSON) trace per rank, every step L layers of a
// GEMM followed by an NCCL all-reduce of the hidden state, the all-reduce overlapping the next
// layer's GEMM by a little. The test writes the traces (deviceProperties, distributedInfo,
// ProfilerStep#N annotations, cudaLaunchKernel events joined by correlation id, NCCL kernels
// with record_param_comms' args) and computes every expected figure from its own constants.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "analysis/devices/device_specs.h"
#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "reports/html/html_report.h"
#include "reports/terminal/terminal_report.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

constexpr int kRanks = 8, kSteps = 4, kLayers = 4;
constexpr int64_t kGemmUs = 200, kAllReduceUs = 60, kLayerUs = 250;  // 10 us of overlap
constexpr int64_t kStepUs = 2000, kStepRangeUs = 1100, kLeadUs = 5;
constexpr int64_t kHidden = 4096, kBatch = 16;  // the all-reduced activations, bf16

std::string RankTrace(int rank) {
  const int cpu = 1000 + rank;
  std::vector<std::string> ev;
  int corr = 1;
  auto launch = [&](int64_t kernel_us, const std::string& name, int stream, const std::string& args) {
    ev.push_back(absl::StrCat(
        R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": )", cpu,
        R"(, "tid": )", cpu, R"(, "ts": )", kernel_us - kLeadUs, R"(, "dur": 4, "args": {"correlation": )",
        corr, "}}"));
    ev.push_back(absl::StrCat(R"({"ph": "X", "cat": "kernel", "name": ")", name, R"(", "pid": )", rank,
                              R"(, "tid": )", stream, R"(, "ts": )", kernel_us, R"(, "dur": )",
                              name[0] == 'n' ? kAllReduceUs : kGemmUs,
                              R"(, "args": {"device": )", rank, R"(, "stream": )", stream,
                              R"(, "correlation": )", corr, R"(, "grid": [8, 1, 1], "block": [512, 1, 1])",
                              args, "}}"));
    ++corr;
  };
  const std::string coll = absl::StrCat(
      R"(, "Collective name": "allreduce", "In msg nelems": )", kHidden * kBatch,
      R"(, "Out msg nelems": )", kHidden * kBatch,
      R"(, "Group size": 8, "dtype": "BFloat16", "Process Group Name": "0", "Process Group Description": "default_pg")");
  for (int s = 0; s < kSteps; ++s) {
    const int64_t t0 = 1000 + s * kStepUs;
    ev.push_back(absl::StrCat(R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)", s,
                              R"(", "pid": )", cpu, R"(, "tid": )", cpu, R"(, "ts": )",
                              t0 - 2 * kLeadUs, R"(, "dur": )", kStepRangeUs, "}"));
    for (int l = 0; l < kLayers; ++l) {
      const int64_t g = t0 + l * kLayerUs;
      launch(g, "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(Params)", 7, "");
      launch(g + kGemmUs, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16(ncclDevComm*, unsigned long, ncclWork*)", 20, coll);
    }
  }
  std::string events;
  for (size_t i = 0; i < ev.size(); ++i) events += (i ? ",\n    " : "    ") + ev[i];
  return absl::StrCat(
      R"({"schemaVersion": 1, "deviceProperties": [{"id": )", rank,
      R"(, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "totalGlobalMem": 102000000000, "computeMajor": 12, "computeMinor": 0, "numSms": 188}],)",
      R"( "distributedInfo": {"backend": "nccl", "rank": )", rank, R"(, "world_size": 8},)",
      "\n  \"traceEvents\": [\n", events, "\n  ]\n}\n");
}

TEST(TpDecode, EightRanksOverPcieGiveTheDiagnosis) {
  std::vector<proto::Trace> traces;
  importers::ImportOptions io;
  io.progress = false;
  for (int r = 0; r < kRanks; ++r) {
    const std::string path = importers::testing::WriteTemp(absl::StrCat("tp8_rank", r, ".json"), RankTrace(r));
    auto t = importers::ImportFile(path, io);
    ASSERT_TRUE(t.ok()) << t.status();
    traces.push_back(*std::move(t));
  }
  auto p = Analyze(traces, {});
  ASSERT_TRUE(p.ok()) << p.status();
  // Per step and GPU: L all-reduces of kAllReduceUs; all but the last overlap the next GEMM
  // by kLayerUs - ... = 10 us, so (L - 1) x 50 + 60 us are exposed.
  const double overlap_us = kGemmUs + kAllReduceUs - kLayerUs;
  const double comm_us = kLayers * kAllReduceUs;
  const double exposed_us = (kLayers - 1) * (kAllReduceUs - overlap_us) + kAllReduceUs;
  EXPECT_EQ(p->comm().total_ns(), static_cast<uint64_t>(kRanks * kSteps * comm_us * 1000));
  EXPECT_EQ(p->comm().exposed_ns(), static_cast<uint64_t>(kRanks * kSteps * exposed_us * 1000));
  ASSERT_TRUE(p->has_tp_diagnosis());
  const proto::TpDiagnosis& d = p->tp_diagnosis();
  EXPECT_EQ(d.steps(), static_cast<uint32_t>(kSteps));
  EXPECT_EQ(d.group_size(), 8u);
  EXPECT_EQ(d.collective(), "all_reduce");
  EXPECT_DOUBLE_EQ(d.collective_share(), 1.0);
  EXPECT_DOUBLE_EQ(d.step_span_ns(), kStepRangeUs * 1000.0);
  EXPECT_DOUBLE_EQ(d.comm_calls_per_step(), kLayers);
  EXPECT_DOUBLE_EQ(d.comm_ns_per_step(), comm_us * 1000);
  EXPECT_DOUBLE_EQ(d.exposed_ns_per_step(), exposed_us * 1000);
  EXPECT_NEAR(d.exposed_share(), exposed_us / kStepRangeUs, 1e-12);
  // NCCL's S and bus bandwidth: 2(n-1)/n over the PCIe Gen5 x16 peak of the spec table.
  const double bytes = kHidden * kBatch * 2.0;
  EXPECT_DOUBLE_EQ(d.bytes_per_call(), bytes);
  const double busbw = bytes / (kAllReduceUs * 1000.0) * 2 * (8 - 1) / 8;
  EXPECT_NEAR(d.busbw_gbps(), busbw, 1e-9);
  const devices::DeviceSpec* pro = devices::FindDevice("rtx-pro-6000");
  const devices::DeviceSpec* b200 = devices::FindDevice("b200");  // Blackwell's NVLink 5
  ASSERT_NE(pro, nullptr);
  ASSERT_NE(b200, nullptr);
  EXPECT_EQ(d.link(), "PCIe Gen5 x16");
  EXPECT_NEAR(d.link_fraction(), busbw / pro->interconnect_gbps.value, 1e-9);
  // What the NVLink figure would give: Amdahl on the exposed part, scaled by the link ratio.
  EXPECT_EQ(d.what_if_link_gbps(), b200->interconnect_gbps.value);
  EXPECT_NE(d.what_if_link().find("NVLink 5"), std::string::npos) << d.what_if_link();
  const double r = pro->interconnect_gbps.value / b200->interconnect_gbps.value;
  const double f = exposed_us / kStepRangeUs;
  EXPECT_NEAR(d.what_if_exposed_ns_per_step(), exposed_us * 1000 * r, 1e-6);
  EXPECT_NEAR(d.what_if_speedup(), 1 / (1 - f + f * r), 1e-12);
  EXPECT_NE(d.note().find("modelled"), std::string::npos);
  // Every figure above in the reports: one line per GPU, the diagnosis in words.
  reports::TerminalOptions to;
  to.width = 140;
  const std::string text = reports::ProfileSummaryText(*p, to);
  EXPECT_NE(text.find("Tensor-parallel decode"), std::string::npos) << text;
  EXPECT_NE(text.find("summed over 8 GPU timelines"), std::string::npos) << text;
  for (int r2 = 0; r2 < kRanks; ++r2) {
    EXPECT_NE(text.find(absl::StrCat("GPU ", r2, " (input ", r2 + 1, ")")), std::string::npos) << r2;
  }
  const std::string html = reports::RenderProfileHtml(*p);
  EXPECT_NE(html.find("id=\"tp-diagnosis\""), std::string::npos);
  size_t bands = 0;
  for (size_t pos = 0; (pos = html.find("data-band-ns=", pos)) != std::string::npos; ++pos) ++bands;
  EXPECT_EQ(bands, static_cast<size_t>(kRanks));
  EXPECT_NE(html.find("id=\"per-gpu\""), std::string::npos);
}

// A decode without collectives in every step is not diagnosed as tensor-parallel.
TEST(TpDecode, NoDiagnosisWhenAStepHasNoCollective) {
  std::string json = RankTrace(0);
  // Rename the all-reduce of the last step's layers into a compute kernel: step 3 has none.
  const std::string nccl = "ncclKernel_AllReduce_RING_LL_Sum_bfloat16";
  size_t last = json.rfind(nccl);
  for (int i = 0; i < kLayers && last != std::string::npos; ++i) {
    json.replace(last, nccl.size(), "elementwise_add_kernel_xxxxxxxxxxxxxx");
    last = json.rfind(nccl);
  }
  importers::ImportOptions io;
  io.progress = false;
  auto t = importers::ImportFile(importers::testing::WriteTemp("tp1.json", json), io);
  ASSERT_TRUE(t.ok()) << t.status();
  auto p = Analyze({*t}, {});
  ASSERT_TRUE(p.ok());
  EXPECT_GT(p->comm().total_ns(), 0u);
  EXPECT_FALSE(p->has_tp_diagnosis());
}

}  // namespace
}  // namespace qprof
