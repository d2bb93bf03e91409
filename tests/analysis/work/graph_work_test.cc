// Graph-replayed kernels take the work of the op call that launched them at capture
// (`qprof analyze replay --graph-capture capture`), exactly as eager kernels take their
// op call's: on synthetic CUDA-shaped capture/replay pairs (graph_pair.h) with a GEMM (and
// its split-K reduction), decode attention (flash_attn varlen, with its combine kernel) and
// an MoE call (vllm::moe_forward: a routing kernel and two expert GEMMs), on one stream and
// on two, with two captures of different batch, and with captures that tie by names. Every
// expected FLOP and byte is computed here from the shapes the plan writes into the files.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/analysis/work/graph_pair.h"

namespace qprof {
namespace {

using testing::PlanCapture;
using testing::PlanOp;
using testing::PlanReplay;

constexpr int kHidden = 2048, kInter = 768, kExperts = 64, kTopK = 6;
constexpr const char* kGemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1";
constexpr const char* kReduce = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>";
constexpr const char* kAttn = "flash_fwd_splitkv_kernel";
constexpr const char* kCombine = "flash_fwd_splitkv_combine_kernel";
constexpr const char* kRoute = "topkGatingSoftmax";
constexpr const char* kExpert = "fused_moe_kernel";
constexpr const char* kShared = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x32x64_shared";
constexpr const char* kBf16x2 = R"(["c10::BFloat16","c10::BFloat16"])";

std::string Config() {
  return absl::StrCat(R"({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
    "hidden_size": )", kHidden, R"(, "moe_intermediate_size": )", kInter,
                      R"(, "num_experts": )", kExperts, R"(, "num_experts_per_tok": )", kTopK,
                      R"(, "num_hidden_layers": 2, "torch_dtype": "bfloat16"})");
}

// The work a call's shapes give, by the conventions of op_work.h, as this test counts it.
struct Work {
  double flops = 0, bytes = 0;
};

Work Mm(double m, double k, double n) { return {2 * m * n * k, (m * k + k * n + m * n) * 2}; }

// flash_attn varlen decode: b sequences of one query, total_k keys, h query heads, hkv key
// heads, head dim d: QK^T and PV over every key of its sequence.
Work VarlenDecode(double b, double h, double hkv, double total_k, double d) {
  return {2 * h * total_k * (d + d), (b * h * d + 2 * total_k * hkv * d + b * h * d) * 2};
}

// vllm::moe_forward of t tokens under the config above (moe_work.h), BF16 experts.
Work Moe(double t) {
  const double touched = kExperts * (1 - std::pow(1 - double(kTopK) / kExperts, t));
  return {2 * t * kTopK * 3 * kHidden * kInter,
          touched * 3.0 * kHidden * kInter * 2 + 2 * t * kHidden * 2};
}

PlanOp MmOp(int m, int k, int n, std::vector<testing::PlanKernel> kernels) {
  return {"aten::mm", absl::StrCat("[[", m, ",", k, "],[", k, ",", n, "]]"), kBf16x2, "", kernels};
}

PlanOp AttnOp(int b, int h, int hkv, int total_k, int d) {
  return {"flash_attn::_flash_attn_varlen_forward",
          absl::StrCat("[[", b, ",", h, ",", d, "],[", total_k, ",", hkv, ",", d, "],[", total_k,
                       ",", hkv, ",", d, "],[", b + 1, "],[", b + 1, "],[],[],[],[],[]]"),
          R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","Scalar","Scalar","Scalar","Scalar","Scalar"])",
          R"(["","","","","","1","4096","0.","0.088","True"])",
          {{kAttn}, {kCombine}}};
}

PlanOp MoeOp(int t) {
  return {"vllm::moe_forward", absl::StrCat("[[", t, ",", kHidden, "],[", t, ",", kExperts, "]]"),
          kBf16x2, "", {{kRoute}, {kExpert}, {kExpert}}};
}

// A decode layer at batch b: QKV GEMM (+ split-K reduction), attention, MoE.
PlanCapture Layer(int b) {
  return {static_cast<uint32_t>(b),
          {MmOp(b, kHidden, 3072, {{kGemm}, {kReduce}}), AttnOp(b, 16, 4, 4096 * b, 128), MoeOp(b)}};
}

// Per kernel name: the work of its launches in one replay, from the plan's shapes (the two
// expert kernels share the MoE call's work, half each).
std::map<std::string, Work> LaunchWork(int b) {
  return {{kGemm, Mm(b, kHidden, 3072)},
          {kAttn, VarlenDecode(b, 16, 4, 4096.0 * b, 128)},
          {kExpert, Moe(b)}};
}

using testing::Analysed;

Analysed AnalysePair(const std::vector<PlanCapture>& captures, const std::vector<PlanReplay>& replays,
                     bool rocm = false, bool model = true) {
  const std::string tag = absl::StrCat("work_", rocm ? "rocm" : "cuda", captures.size(), replays.size(),
                                       model ? "m" : "");
  return testing::AnalyseReplay(tag, testing::ReplayTraceJson(captures, replays, rocm),
                                testing::CaptureTraceJson(captures, rocm), model ? Config() : "");
}

// Sums of flops and bytes per kernel name over the profile's rows.
std::map<std::string, Work> RowWork(const proto::Profile& p) {
  std::map<std::string, Work> out;
  for (const auto& k : p.kernels()) {
    if (k.work_launches() == 0) continue;
    out[k.raw_name()].flops += k.flops();
    out[k.raw_name()].bytes += k.bytes();
  }
  return out;
}

void ExpectWork(const std::map<std::string, Work>& got, const std::map<std::string, Work>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name;
    EXPECT_NEAR(it->second.flops, w.flops, 1e-9 * w.flops) << name;
    EXPECT_NEAR(it->second.bytes, w.bytes, 1e-9 * w.bytes) << name;
  }
}

std::map<std::string, Work> Times(std::map<std::string, Work> w, double n) {
  for (auto& [k, v] : w) {
    v.flops *= n;
    v.bytes *= n;
  }
  return w;
}

std::map<std::string, Work> Plus(std::map<std::string, Work> a, const std::map<std::string, Work>& b) {
  for (const auto& [k, v] : b) {
    a[k].flops += v.flops;
    a[k].bytes += v.bytes;
  }
  return a;
}

TEST(GraphWork, ReplayedKernelsTakeTheirCaptureOpCallsWork) {
  const std::vector<PlanCapture> captures = {Layer(32)};
  const Analysed a = AnalysePair(captures, {{0}, {0}, {0}});
  EXPECT_EQ(a.join.matched(), 3u * 7);
  ExpectWork(RowWork(a.profile), Times(LaunchWork(32), 3));
  for (const auto& k : a.profile.kernels()) {
    if (k.raw_name() == kReduce || k.raw_name() == kCombine || k.raw_name() == kRoute) {
      EXPECT_EQ(k.work_launches(), 0u) << k.raw_name() << " is a helper of its call";
      continue;
    }
    EXPECT_EQ(k.work_launches(), k.raw_name() == kExpert ? 6u : 3u) << k.raw_name();
    const std::string want = k.raw_name() == kExpert
                                 ? "modelled from --model-shape (the call at graph capture)"
                                 : "derived from shapes at graph capture: ";
    EXPECT_EQ(k.work_source().rfind(want, 0), 0u) << k.work_source();
    EXPECT_TRUE(k.has_achieved_tflops()) << k.raw_name();
  }
  // How many replayed launches got work, and from what.
  const auto& s = a.profile.launch_summary();
  EXPECT_EQ(s.graph_work_capture(), 3u * 4);
  EXPECT_EQ(s.graph_work_modelled(), 0u);
  EXPECT_EQ(s.graph_work_none(), 3u * 3);
  // Tokens per step from the step ranges that name the batch.
  EXPECT_EQ(a.profile.totals().tokens(), 3u * 32);
  EXPECT_EQ(a.profile.totals().tokens_per_step(), 32);
  EXPECT_EQ(a.profile.totals().replays_per_step(), 1);
  EXPECT_EQ(a.profile.run().batch(), 32u);
  EXPECT_NE(a.profile.totals().tokens_source().find("step[DECODE bs=32]"), std::string::npos)
      << a.profile.totals().tokens_source();
  // Each step's GPU time: its kernels from first start to last end (7 kernels, 10 us apart,
  // 8 us long), so tokens/s = 3 x 32 over 3 x 68 us.
  EXPECT_EQ(a.profile.totals().step_time_ns(), 3u * 68000);
  EXPECT_NEAR(a.profile.totals().tokens_per_s(), 96 / (3 * 68e-6), 1e-6 * 96 / (3 * 68e-6));

  // Without the model the MoE kernels carry none, and say why; the rest still do.
  const Analysed no_model = AnalysePair(captures, {{0}}, false, false);
  std::map<std::string, Work> want = LaunchWork(32);
  want.erase(kExpert);
  ExpectWork(RowWork(no_model.profile), want);
}

TEST(GraphWork, TokensPerStepFromTheCaptureWhenNoStepIsNamed) {
  const Analysed a = AnalysePair({Layer(32)}, {{0, false}, {0, false}});
  EXPECT_EQ(a.profile.totals().tokens(), 64u);
  EXPECT_EQ(a.profile.totals().tokens_per_step(), 32);
  EXPECT_NE(a.profile.totals().tokens_source().find("capture_32_DECODE"), std::string::npos)
      << a.profile.totals().tokens_source();
  EXPECT_NE(a.profile.totals().tokens_source().find("1 graph replay per step"), std::string::npos)
      << a.profile.totals().tokens_source();
}

TEST(GraphWork, TokensPerStepFromTheFirstGemmWhenTheCaptureNamesNoBatch) {
  PlanCapture c = Layer(32);
  c.names_batch = false;
  const Analysed a = AnalysePair({c}, {{0, false}, {0, false}, {0, false}});
  EXPECT_EQ(a.profile.totals().tokens(), 3u * 32);
  EXPECT_EQ(a.profile.totals().tokens_per_step(), 32);
  EXPECT_NE(a.profile.totals().tokens_source().find(
                "the M dimension of the first GEMM the graph replays ran, aten::mm [32,2048]x[2048,3072]"),
            std::string::npos)
      << a.profile.totals().tokens_source();
}

TEST(GraphWork, TwoStreamsPairPerStreamInLaunchOrder) {
  // A shared expert on a second stream between attention and the routed experts (SGLang's
  // dual-stream MoE); CUDA records no kernel names, so each stream pairs in launch order.
  PlanCapture c = Layer(32);
  c.ops.insert(c.ops.begin() + 2, MmOp(32, kHidden, 1024, {{kShared, 8}}));
  const Analysed a = AnalysePair({c}, {{0}, {0}});
  EXPECT_EQ(a.join.matched(), 2u * 8) << a.join.DebugString();
  std::map<std::string, Work> want = LaunchWork(32);
  want[kShared] = Mm(32, kHidden, 1024);
  ExpectWork(RowWork(a.profile), Times(want, 2));
}

TEST(GraphWork, TwoCapturesOfDifferentBatchChosenByTheStepsBatch) {
  // Same kernels, same counts: only the batch the step names tells the captures apart.
  const std::vector<PlanCapture> captures = {Layer(1), Layer(32)};
  const Analysed a = AnalysePair(captures, {{0}, {1}, {1}, {0}, {1}});
  EXPECT_EQ(a.join.matched(), 5u * 7);
  ExpectWork(RowWork(a.profile), Plus(Times(LaunchWork(1), 2), Times(LaunchWork(32), 3)));
  ASSERT_EQ(a.join.uses_size(), 2);
  for (const auto& u : a.join.uses()) {
    EXPECT_NE(u.chosen_by().find("the batch the replay's step range names"), std::string::npos)
        << u.chosen_by();
    EXPECT_EQ(u.replays(), u.batch() == 1 ? 2u : 3u);
  }
  EXPECT_EQ(a.profile.totals().tokens(), 2u * 1 + 3u * 32);
}

TEST(GraphWork, CapturesThatTieByNamesAreToldApartByLaunchGeometry) {
  // Two pieces launch the same kernels (vLLM piecewise graphs); their GEMMs differ in N and
  // in grid. The launch records name the kernels and give the geometry (as ROCm's do).
  PlanCapture narrow{32, {MmOp(32, kHidden, 1024, {{kGemm, 7, 16}})}};
  PlanCapture wide{32, {MmOp(32, kHidden, 4096, {{kGemm, 7, 64}})}};
  const Analysed a = AnalysePair({narrow, wide}, {{1, false}, {0, false}, {1, false}}, true);
  ExpectWork(RowWork(a.profile),
             {{kGemm, {Mm(32, kHidden, 4096).flops * 2 + Mm(32, kHidden, 1024).flops,
                       Mm(32, kHidden, 4096).bytes * 2 + Mm(32, kHidden, 1024).bytes}}});
  ASSERT_EQ(a.join.uses_size(), 2);
  for (const auto& u : a.join.uses()) {
    EXPECT_NE(u.chosen_by().find("launch geometry"), std::string::npos) << u.chosen_by();
    EXPECT_EQ(u.pieces(), 2u);
  }
  // Pieces alike in names, geometry and shapes: the first is taken, and the choice says the
  // work is the same whichever.
  const Analysed same = AnalysePair({wide, wide}, {{0, false}, {1, false}}, true);
  ASSERT_EQ(same.join.uses_size(), 1);
  EXPECT_NE(same.join.uses(0).chosen_by().find("the first in capture order of 2"), std::string::npos)
      << same.join.uses(0).chosen_by();
  EXPECT_NE(same.join.uses(0).chosen_by().find("changes no context and no work"), std::string::npos);
  ExpectWork(RowWork(same.profile), Times({{kGemm, Mm(32, kHidden, 4096)}}, 2));
  // Two pieces per step: two replays are one step of 32 tokens.
  EXPECT_EQ(same.profile.totals().tokens(), 32u);
  EXPECT_EQ(same.profile.totals().replays_per_step(), 2);
}

}  // namespace
}  // namespace qprof
