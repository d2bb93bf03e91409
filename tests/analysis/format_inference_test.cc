// The profile's weight format when the trace does not record it: read from the formats the
// names of its weight-GEMM and MoE kernels tell, by time, a 4/8-bit format over the 16-bit
// layers a quantized model keeps, and labelled inferred. Each kernel below states its role
// and format (what its name rule gives, checked in the name-rule tests); the expected format
// and shares are computed from those and the durations the test writes.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analysis/analyze.h"
#include "gtest/gtest.h"

namespace qprof {
namespace {

struct K {
  const char* name;
  const char* role;
  const char* format;
  int64_t ns;
  int launches;
};

proto::Trace TraceOf(const std::vector<K>& kernels, const std::string& run_format) {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  t.mutable_header()->set_source_path("vllm_gpt_oss.json");
  t.mutable_header()->mutable_run()->set_format(run_format);
  int64_t at = 0;
  for (const K& k : kernels) {
    for (int i = 0; i < k.launches; ++i) {
      proto::Activity* a = t.add_activities();
      a->set_kind(proto::ACTIVITY_KIND_KERNEL);
      a->set_name(k.name);
      a->set_start_ns(at);
      a->set_end_ns(at + k.ns);
      at += k.ns + 10;
    }
  }
  return t;
}

// gpt-oss on vLLM: the MXFP4 MoE through triton_kernels, BF16 dense GEMMs, attention.
const std::vector<K> kGptOss = {
    {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x256x128x1_swiglu", "moe.experts", "mxfp4", 4000, 24},
    {"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x256x128x1", "moe.experts", "mxfp4", 2500, 24},
    {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
     "gemm.dense", "bf16", 1500, 48},
    {"kernel_unified_attention_2d", "attn.dense", "unknown", 2000, 24},
    {"_topk_forward", "moe.router", "unknown", 300, 24},
};

TEST(FormatInference, QuantizedMoeNamesTheRun) {
  auto p = Analyze({TraceOf(kGptOss, "")}, AnalyzeOptions{});
  ASSERT_TRUE(p.ok()) << p.status();
  uint64_t total = 0, weight = 0;
  std::map<std::string, uint64_t> by_format;
  std::map<std::string, int> kernels;
  for (const K& k : kGptOss) {
    const uint64_t t = static_cast<uint64_t>(k.ns) * k.launches;
    total += t;
    const std::string role = k.role;
    if (role != "moe.experts" && role != "gemm.dense") continue;
    weight += t;
    by_format[k.format] += t;
    ++kernels[k.format];
  }
  for (const auto& row : p->kernels()) {
    for (const K& k : kGptOss) {
      if (row.name() == k.name) {
        EXPECT_EQ(row.role(), k.role) << k.name;
        EXPECT_EQ(row.format(), k.format) << k.name;
      }
    }
  }
  EXPECT_EQ(p->run().format(), "");  // never written into the run
  EXPECT_EQ(p->format_inferred(), "mxfp4");
  EXPECT_EQ(p->format_inferred_from(),
            absl::StrFormat("inferred from kernel names (the trace records no format): mxfp4 in "
                            "%d weight-GEMM/MoE kernels, %.1f%% of kernel time (%.1f%% of "
                            "weight-GEMM/MoE time); also bf16 %.1f%%",
                            kernels["mxfp4"], 100.0 * by_format["mxfp4"] / total,
                            100.0 * by_format["mxfp4"] / weight, 100.0 * by_format["bf16"] / total));
}

TEST(FormatInference, SixteenBitOnlyAndRecordedFormats) {
  const std::vector<K> dense = {kGptOss[2], kGptOss[3]};
  auto p = Analyze({TraceOf(dense, "")}, AnalyzeOptions{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->format_inferred(), "bf16");
  // A trace that records its format is not second-guessed.
  auto q = Analyze({TraceOf(kGptOss, "nvfp4")}, AnalyzeOptions{});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->format_inferred(), "");
  EXPECT_EQ(q->run().format(), "nvfp4");
  // Nothing to read: no inference.
  auto r = Analyze({TraceOf({kGptOss[3], kGptOss[4]}, "")}, AnalyzeOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->format_inferred(), "");
}

}  // namespace
}  // namespace qprof
