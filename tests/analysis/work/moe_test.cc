// The MoE work model on a small config: the expected-experts formula against an exhaustive
// enumeration of every routing, and a call's bytes and FLOPs written out by hand.
#include <functional>
#include <set>
#include <vector>

#include "analysis/work/moe_work.h"
#include "gtest/gtest.h"

namespace qprof::work {
namespace {

// Mean number of distinct experts over every way T tokens can each pick k distinct experts
// of E (all equally likely: uniform routing), by enumeration.
double EnumeratedExperts(int e, int k, int t) {
  std::vector<std::vector<int>> picks;  // every k-subset of E
  std::function<void(int, std::vector<int>&)> subsets = [&](int from, std::vector<int>& cur) {
    if (static_cast<int>(cur.size()) == k) {
      picks.push_back(cur);
      return;
    }
    for (int i = from; i < e; ++i) {
      cur.push_back(i);
      subsets(i + 1, cur);
      cur.pop_back();
    }
  };
  std::vector<int> cur;
  subsets(0, cur);
  double total = 0, count = 0;
  std::vector<size_t> idx(static_cast<size_t>(t), 0);
  while (true) {
    std::set<int> seen;
    for (size_t i : idx) seen.insert(picks[i].begin(), picks[i].end());
    total += static_cast<double>(seen.size());
    count += 1;
    size_t d = 0;
    while (d < idx.size() && ++idx[d] == picks.size()) idx[d++] = 0;
    if (d == idx.size()) break;
  }
  return total / count;
}

TEST(MoeWork, ExpectedExpertsMatchesEnumeration) {
  for (auto [e, k, t] : {std::tuple{4, 1, 3}, {4, 2, 2}, {6, 2, 3}, {5, 3, 2}, {8, 2, 4}}) {
    EXPECT_NEAR(ExpectedExpertsTouched(e, k, t), EnumeratedExperts(e, k, t), 1e-9)
        << "E=" << e << " k=" << k << " T=" << t;
  }
  EXPECT_DOUBLE_EQ(ExpectedExpertsTouched(256, 6, 1), 6);  // one token: its k experts
  EXPECT_NEAR(ExpectedExpertsTouched(256, 6, 100000), 256, 1e-9);
  EXPECT_EQ(ExpectedExpertsTouched(256, 6, 0), 0);
}

constexpr const char* kSmallConfig = R"({
  "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
  "hidden_size": 64, "moe_intermediate_size": 32, "n_routed_experts": 8,
  "num_experts_per_tok": 2, "n_shared_experts": 1, "num_hidden_layers": 3,
  "quantization_config": {"quant_method": "mxfp4"}, "torch_dtype": "bfloat16"})";

TEST(MoeWork, HuggingFaceConfigs) {
  EXPECT_TRUE(LooksLikeHfConfig(kSmallConfig));
  EXPECT_FALSE(LooksLikeHfConfig(R"({"active_params": 1e9})"));
  auto m = ParseHfConfig(kSmallConfig, "small.json");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "DeepseekV3ForCausalLM");
  EXPECT_EQ(m->experts, 8);
  EXPECT_EQ(m->top_k, 2);
  EXPECT_EQ(m->moe_inter, 32);
  EXPECT_EQ(m->shared_experts, 1);
  EXPECT_EQ(m->format, "mxfp4");
  EXPECT_DOUBLE_EQ(m->bits_per_weight, 4.25);
  // gpt-oss style keys; NVFP4 from a ModelOpt quantization_config; Qwen2-MoE's shared expert.
  auto oss = ParseHfConfig(R"({"model_type":"gpt_oss","hidden_size":2880,"num_local_experts":32,
      "experts_per_token":4,"intermediate_size":2880,"quantization_config":{"quant_method":"mxfp4"}})",
                           "oss.json");
  ASSERT_TRUE(oss.ok()) << oss.status();
  EXPECT_EQ(oss->experts, 32);
  EXPECT_EQ(oss->moe_inter, 2880);
  auto nv = ParseHfConfig(R"({"model_type":"x","hidden_size":8,"n_routed_experts":4,"num_experts_per_tok":1,
      "moe_intermediate_size":4,"quantization_config":{"quant_method":"modelopt","quant_algo":"NVFP4"}})",
                          "nv.json");
  ASSERT_TRUE(nv.ok()) << nv.status();
  EXPECT_EQ(nv->format, "nvfp4");
  EXPECT_DOUBLE_EQ(nv->bits_per_weight, 4.5);
  auto qwen = ParseHfConfig(R"({"model_type":"qwen2_moe","hidden_size":16,"num_experts":60,"num_experts_per_tok":4,
      "moe_intermediate_size":8,"shared_expert_intermediate_size":32,"torch_dtype":"bfloat16"})",
                            "q.json");
  ASSERT_TRUE(qwen.ok()) << qwen.status();
  EXPECT_EQ(qwen->shared_experts, 1);
  EXPECT_EQ(qwen->shared_inter, 32);
  EXPECT_EQ(qwen->format, "bf16");
  // Errors name the file.
  auto bad = ParseHfConfig(R"({"model_type":"x","hidden_size":8,"num_experts":2,"num_experts_per_tok":3,
      "moe_intermediate_size":4,"torch_dtype":"bfloat16"})", "bad.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.json"), std::string_view::npos);
  EXPECT_FALSE(ParseHfConfig(R"({"model_type":"x","hidden_size":8})", "nofmt.json").ok());
}

TEST(MoeWork, CallWorkByHand) {
  auto m = ParseHfConfig(kSmallConfig, "small.json");
  ASSERT_TRUE(m.ok());
  // T = 3 tokens, BF16 activations, routed experts only.
  auto w = MoeCallWork(*m, "vllm::moe_forward", 3, 2, false);
  ASSERT_TRUE(w.ok()) << w.status();
  const double touched = 8 * (1 - (1 - 2.0 / 8) * (1 - 2.0 / 8) * (1 - 2.0 / 8));
  EXPECT_DOUBLE_EQ(w->weight_bytes, touched * 3 * 64 * 32 * 4.25 / 8);
  EXPECT_DOUBLE_EQ(w->bytes, w->weight_bytes + 2 * 3 * 64 * 2);
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 3 * 2 * 3 * 64 * 32);
  EXPECT_EQ(w->weight_format, "mxfp4");
  EXPECT_NE(w->description.find("uniform routing"), std::string::npos);
  // With the shared expert and tensor parallelism 2 (half of every intermediate dimension).
  work::ModelShape tp2 = *m;
  tp2.tp = 2;
  auto s = MoeCallWork(tp2, "vllm::moe_forward_shared", 3, 2, true);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->flops, 2.0 * 3 * 2 * 3 * 64 * 16 + 2.0 * 3 * 1 * 3 * 64 * 16);
  EXPECT_TRUE(IsMoeOp("vllm::moe_forward"));
  EXPECT_TRUE(IsMoeOp("sglang::fused_moe_impl"));
  EXPECT_FALSE(IsMoeOp("_moe_C::topk_softmax"));
  EXPECT_FALSE(IsMoeOp("_moe_C::moe_align_block_size"));
}

}  // namespace
}  // namespace qprof::work
