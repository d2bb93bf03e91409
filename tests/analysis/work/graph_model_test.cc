// Graph replays without a capture: with --model-shape, each replayed GEMM takes the op call
// the model's linear layers give it in layer order, and each layer's MoE kernels the layer's
// MoE call (importers/common/layer_model.h, analysis/replay_layers.h). On the same synthetic
// capture/replay pair (graph_pair.h) the modelled work must equal the work the capture's
// shapes give, kernel by kernel; both are also checked against the figures computed here
// from the shapes the plan writes (a small dense model and a small MoE model, 2 layers, an
// LM head in the graph, 32 tokens per step). A config whose layers do not fit is refused
// with the reason, and nothing is modelled.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/analysis/work/graph_pair.h"

namespace qprof {
namespace {

using testing::PlanCapture;
using testing::PlanKernel;
using testing::PlanOp;

constexpr int kTokens = 32, kHidden = 2048, kHeads = 16, kKvHeads = 4, kHeadDim = 128;
constexpr int kInter = 6144, kVocab = 32000, kLayers = 2;
constexpr int kExperts = 64, kTopK = 6, kMoeInter = 768;
constexpr int kQkv = (kHeads + 2 * kKvHeads) * kHeadDim;  // 3072

// Kernels the name rules call tensor-core GEMMs, one name per linear layer (as cuBLAS picks
// a tile per shape), a split-K reduction (a helper, not a linear layer), attention and MoE.
std::string Gemm(const std::string& tile) {
  return "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize" + tile + "_warpgroupsize1x1x1";
}
const std::string kQkvK = Gemm("64x64x64"), kOK = Gemm("64x32x64"), kGateUpK = Gemm("128x64x64"),
                  kDownK = Gemm("64x128x64"), kHeadK = Gemm("256x64x64"), kRouterK = Gemm("32x32x64");
constexpr const char* kReduce = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>";
constexpr const char* kAttn = "flash_fwd_splitkv_kernel";
constexpr const char* kRoute = "topkGatingSoftmax";
constexpr const char* kExpert = "fused_moe_kernel";
constexpr const char* kBf16x2 = R"(["c10::BFloat16","c10::BFloat16"])";

std::string DenseConfig(int layers = kLayers) {
  return absl::StrCat(R"({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",)",
                      R"( "hidden_size": )", kHidden, R"(, "num_attention_heads": )", kHeads,
                      R"(, "num_key_value_heads": )", kKvHeads, R"(, "head_dim": )", kHeadDim,
                      R"(, "intermediate_size": )", kInter, R"(, "num_hidden_layers": )", layers,
                      R"(, "vocab_size": )", kVocab, R"(, "torch_dtype": "bfloat16"})");
}

std::string MoeConfig() {
  return absl::StrCat(R"({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",)",
                      R"( "hidden_size": )", kHidden, R"(, "num_attention_heads": )", kHeads,
                      R"(, "num_key_value_heads": )", kKvHeads, R"(, "head_dim": )", kHeadDim,
                      R"(, "moe_intermediate_size": )", kMoeInter, R"(, "num_experts": )", kExperts,
                      R"(, "num_experts_per_tok": )", kTopK, R"(, "num_hidden_layers": )", kLayers,
                      R"(, "vocab_size": )", kVocab, R"(, "torch_dtype": "bfloat16"})");
}

PlanOp Mm(int k, int n, std::vector<PlanKernel> kernels) {
  return {"aten::mm", absl::StrCat("[[", kTokens, ",", k, "],[", k, ",", n, "]]"), kBf16x2, "", kernels};
}

PlanOp Attention() {
  const int b = kTokens, total = 4096 * kTokens;
  return {"flash_attn::_flash_attn_varlen_forward",
          absl::StrCat("[[", b, ",", kHeads, ",", kHeadDim, "],[", total, ",", kKvHeads, ",", kHeadDim,
                       "],[", total, ",", kKvHeads, ",", kHeadDim, "],[", b + 1, "],[", b + 1,
                       "],[],[],[],[],[]]"),
          R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","Scalar","Scalar","Scalar","Scalar","Scalar"])",
          R"(["","","","","","1","4096","0.","0.088","True"])",
          {{kAttn}}};
}

// The capture of one decode step: per layer the linears in execution order around
// attention (and the MoE call), then the LM head.
PlanCapture Step(bool moe) {
  PlanCapture c{kTokens, {}};
  for (int l = 0; l < kLayers; ++l) {
    c.ops.push_back(Mm(kHidden, kQkv, {{kQkvK}, {kReduce}}));
    c.ops.push_back(Attention());
    c.ops.push_back(Mm(kHeads * kHeadDim, kHidden, {{kOK}}));
    if (moe) {
      c.ops.push_back(Mm(kHidden, kExperts, {{kRouterK}}));
      c.ops.push_back({"vllm::moe_forward",
                       absl::StrCat("[[", kTokens, ",", kHidden, "],[", kTokens, ",", kExperts, "]]"),
                       kBf16x2, "", {{kRoute}, {kExpert}, {kExpert}}});
    } else {
      c.ops.push_back(Mm(kHidden, 2 * kInter, {{kGateUpK}}));
      c.ops.push_back(Mm(kInter, kHidden, {{kDownK}}));
    }
  }
  c.ops.push_back(Mm(kHidden, kVocab, {{kHeadK}}));
  return c;
}

struct Work {
  double flops = 0, bytes = 0;
  bool operator==(const Work&) const = default;
};

Work MmWork(double m, double k, double n) { return {2 * m * n * k, (m * k + k * n + m * n) * 2}; }

// Per kernel name: flops and bytes over its launches (the rows of one name summed), and the
// work source of its first row.
std::map<std::string, Work> RowWork(const proto::Profile& p, std::map<std::string, std::string>* sources) {
  std::map<std::string, Work> out;
  for (const auto& k : p.kernels()) {
    if (k.work_launches() == 0) continue;
    out[k.raw_name()].flops += k.flops();
    out[k.raw_name()].bytes += k.bytes();
    if (sources != nullptr) sources->emplace(k.raw_name(), k.work_source());
  }
  return out;
}

void ExpectSame(const std::map<std::string, Work>& modelled, const std::map<std::string, Work>& captured) {
  ASSERT_EQ(modelled.size(), captured.size());
  for (const auto& [name, w] : captured) {
    auto it = modelled.find(name);
    ASSERT_NE(it, modelled.end()) << name;
    EXPECT_NEAR(it->second.flops, w.flops, 1e-9 * w.flops) << name;
    EXPECT_NEAR(it->second.bytes, w.bytes, 1e-9 * w.bytes) << name;
  }
}

constexpr int kReplays = 3;

TEST(GraphModel, DenseReplayModelledFromTheConfigEqualsTheCapturesWork) {
  const std::vector<PlanCapture> captures = {Step(false)};
  const std::vector<testing::PlanReplay> replays(kReplays, {0, true});
  const std::string replay = testing::ReplayTraceJson(captures, replays);
  const testing::Analysed captured =
      testing::AnalyseReplay("dense_cap", replay, testing::CaptureTraceJson(captures), DenseConfig());
  const testing::Analysed modelled = testing::AnalyseReplay("dense_model", replay, "", DenseConfig());
  std::map<std::string, std::string> sources;
  const auto got = RowWork(modelled.profile, &sources);
  std::map<std::string, Work> want_captured = RowWork(captured.profile, nullptr);
  ASSERT_EQ(want_captured.erase(kAttn), 1u);  // attention: no GEMM to model
  ExpectSame(got, want_captured);
  // Each linear's kernel: kLayers x kReplays launches of [tokens, in] x [in, out].
  const double n = kLayers * kReplays;
  const std::map<std::string, Work> want = {
      {kQkvK, MmWork(kTokens, kHidden, kQkv)},
      {kOK, MmWork(kTokens, kHeads * kHeadDim, kHidden)},
      {kGateUpK, MmWork(kTokens, kHidden, 2 * kInter)},
      {kDownK, MmWork(kTokens, kInter, kHidden)},
      {kHeadK, MmWork(kTokens, kHidden, kVocab)}};
  for (const auto& [name, w] : want) {
    const double launches = name == kHeadK ? kReplays : n;
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_NEAR(got.at(name).flops, w.flops * launches, 1e-9 * w.flops * launches) << name;
    EXPECT_NEAR(got.at(name).bytes, w.bytes * launches, 1e-9 * w.bytes * launches) << name;
    EXPECT_EQ(sources[name].rfind("modelled from config and layer order: aten::mm", 0), 0u)
        << sources[name];
  }
  EXPECT_NE(sources[kQkvK].find("self_attn.qkv_proj"), std::string::npos) << sources[kQkvK];
  EXPECT_NE(sources[kHeadK].find("lm_head"), std::string::npos) << sources[kHeadK];
  // Attention has no GEMM to model: the capture gives it work, the model none.
  EXPECT_EQ(got.count(kAttn), 0u);
  EXPECT_EQ(modelled.join.modelled_replays(), static_cast<uint64_t>(kReplays));
  EXPECT_EQ(modelled.join.modelled_kernels(), static_cast<uint64_t>(kReplays * (4 * kLayers + 1)));
  EXPECT_EQ(modelled.profile.launch_summary().graph_work_modelled(), kReplays * (4u * kLayers + 1));
  EXPECT_NE(modelled.join.model_source().find("2 layers x (self_attn.qkv_proj, self_attn.o_proj, "
                                              "mlp.gate_up_proj, mlp.down_proj) + lm_head"),
            std::string::npos)
      << modelled.join.model_source();
}

TEST(GraphModel, MoeReplayModelledFromTheConfigEqualsTheCapturesWork) {
  const std::vector<PlanCapture> captures = {Step(true)};
  const std::vector<testing::PlanReplay> replays(kReplays, {0, true});
  const std::string replay = testing::ReplayTraceJson(captures, replays);
  const testing::Analysed captured =
      testing::AnalyseReplay("moe_cap", replay, testing::CaptureTraceJson(captures), MoeConfig());
  const testing::Analysed modelled = testing::AnalyseReplay("moe_model", replay, "", MoeConfig());
  std::map<std::string, std::string> sources;
  const auto got = RowWork(modelled.profile, &sources);
  std::map<std::string, Work> want_captured = RowWork(captured.profile, nullptr);
  want_captured.erase(kAttn);  // no GEMM: not modelled
  ExpectSame(got, want_captured);
  // The MoE call of T tokens (moe_work.h), BF16 experts, its work over the two expert kernels.
  const double touched = kExperts * (1 - std::pow(1 - double(kTopK) / kExperts, kTokens));
  const Work moe{2.0 * kTokens * kTopK * 3 * kHidden * kMoeInter,
                 touched * 3.0 * kHidden * kMoeInter * 2 + 2.0 * kTokens * kHidden * 2};
  const double calls = kLayers * kReplays;
  ASSERT_TRUE(got.count(kExpert));
  EXPECT_NEAR(got.at(kExpert).flops, moe.flops * calls, 1e-9 * moe.flops * calls);
  EXPECT_NEAR(got.at(kExpert).bytes, moe.bytes * calls, 1e-9 * moe.bytes * calls);
  EXPECT_EQ(sources[kExpert].rfind("modelled from --model-shape", 0), 0u) << sources[kExpert];
  ASSERT_TRUE(got.count(kRouterK));
  EXPECT_EQ(got.at(kRouterK).flops, MmWork(kTokens, kHidden, kExperts).flops * calls);
}

TEST(GraphModel, ALayoutThatDoesNotFitIsRefusedWithTheReason) {
  const std::vector<PlanCapture> captures = {Step(false)};
  const std::string replay = testing::ReplayTraceJson(captures, {{0, true}});
  // Three layers in the config, two in the graph.
  const testing::Analysed a = testing::AnalyseReplay("refused", replay, "", DenseConfig(3));
  EXPECT_EQ(a.join.modelled_replays(), 0u);
  EXPECT_TRUE(RowWork(a.profile, nullptr).empty());
  const std::string notes = absl::StrJoin(a.join.model_notes(), "\n");
  EXPECT_NE(notes.find("1 replay not modelled: the replay's 9 GEMM kernels are not 3 layers of"),
            std::string::npos)
      << notes;
  // Without a step range naming the batch and without --batch, the tokens are not known.
  const std::string unnamed = testing::ReplayTraceJson(captures, {{0, false}});
  const testing::Analysed b = testing::AnalyseReplay("no_batch", unnamed, "", DenseConfig());
  EXPECT_NE(absl::StrJoin(b.join.model_notes(), "\n").find("pass --batch N"), std::string::npos);
  const testing::Analysed c = testing::AnalyseReplay("batch", unnamed, "", DenseConfig(), kTokens);
  EXPECT_EQ(c.join.modelled_replays(), 1u);
  // --tp splits the column-parallel QKV by its output features and the row-parallel O by its
  // input features.
  const testing::Analysed tp2 = testing::AnalyseReplay("tp2", unnamed, "", DenseConfig(), kTokens, 2);
  const auto w = RowWork(tp2.profile, nullptr);
  EXPECT_EQ(w.at(kQkvK).flops, MmWork(kTokens, kHidden, kQkv / 2).flops * kLayers);
  EXPECT_EQ(w.at(kOK).flops, MmWork(kTokens, kHeads * kHeadDim / 2, kHidden).flops * kLayers);
}

}  // namespace
}  // namespace qprof
