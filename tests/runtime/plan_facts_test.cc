// The decode plan (runtime/plan.cc) against the facts of the runtime, on the CPU: the
// tensor-parallel shapes are rank 0's slice exactly as runtime/tp_partition.h cuts the
// weights (heads, whole routed experts, shared-expert columns or all of them on rank 0),
// every rank computes the whole LM head, the all-reduces sit under ".../comm" and sum the
// FP32 hidden state, the expert-id remap is counted, and rope is two launches as in the
// CUDA backend (and the CPU backend's trace, which the plan must match kernel for kernel).
// The GPU side of the same agreement (a CUDA trace against the plan) is in
// tests/runtime/cuda/cuda_backend_test.cc.
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/thread_pool.h"
#include "kernels/registry/registry.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/tp_partition.h"

namespace qprof::runtime {
namespace {

std::vector<const proto::PlannedKernel*> Find(const proto::DecodePlan& p, const std::string& id,
                                              const std::string& path_suffix = "") {
  std::vector<const proto::PlannedKernel*> out;
  for (const auto& k : p.kernels()) {
    const std::string& path = k.nvtx_path();
    if (k.kernel_id() == id &&
        (path_suffix.empty() || (path.size() >= path_suffix.size() &&
                                 path.compare(path.size() - path_suffix.size(),
                                              path_suffix.size(), path_suffix) == 0))) {
      out.push_back(&k);
    }
  }
  return out;
}

int64_t Shape(const proto::PlannedKernel* k, const std::string& key) {
  auto it = k->shape().find(key);
  return it == k->shape().end() ? -1 : it->second;
}

struct Case {
  const char* model;
  const char* format;
  const char* moe;
  int tp;
};

class PlanFactsTest : public ::testing::TestWithParam<Case> {};

TEST_P(PlanFactsTest, PlanIsRankZeroOfTheRuntimeSplit) {
  const Case c = GetParam();
  RunOptions o;
  o.model = c.model;
  o.format = c.format;
  o.moe_backend = c.moe;
  o.batch = 5;
  o.context = 64;
  o.tp = c.tp;
  auto plan = PlanDecode(o);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ModelArch cfg = *LoadModelArch(c.model);
  const kernels::Fp4Format fmt =
      std::string(c.format) == "mxfp4" ? kernels::Fp4Format::kMxfp4 : kernels::Fp4Format::kNvfp4;
  auto slice = MakeTpSlice(cfg, fmt, c.tp, 0,
                           MoeInterGranule("moe." + plan->moe_backend() + "." + c.format));
  ASSERT_TRUE(slice.ok());
  const int layers = static_cast<int>(plan->layers());
  // Every planned id is a registered kernel.
  for (const auto& k : plan->kernels()) {
    EXPECT_NE(kernels::KernelRegistry::Global().Find(k.kernel_id()), nullptr) << k.kernel_id();
  }
  // LM head and sampling: every rank computes every logit.
  auto head = Find(*plan, "gemm.lm_head");
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(Shape(head[0], "n"), cfg.vocab_size);
  EXPECT_EQ(Shape(Find(*plan, "sampling.argmax")[0], "cols"), cfg.vocab_size);
  // Rope: two launches per layer, the local query heads then the one latent key.
  auto rope = Find(*plan, "rope");
  ASSERT_EQ(rope.size(), static_cast<size_t>(2 * layers));
  EXPECT_EQ(Shape(rope[0], "heads"), slice->heads());  // tp 1: all heads
  EXPECT_EQ(Shape(rope[1], "heads"), 1);
  // All-reduces: only under .../comm, two per layer, FP32 hidden state.
  EXPECT_EQ(Find(*plan, "comm.allreduce").size(), c.tp > 1 ? static_cast<size_t>(2 * layers) : 0u);
  EXPECT_EQ(Find(*plan, "comm.allreduce", "/comm").size(), Find(*plan, "comm.allreduce").size());
  for (const auto* k : Find(*plan, "comm.allreduce")) {
    EXPECT_EQ(Shape(k, "bytes"), int64_t{5} * cfg.dim * 4);
    EXPECT_EQ(Shape(k, "ranks"), c.tp);
  }
  // The expert-id remap runs on every rank of a tp run, once per layer.
  EXPECT_EQ(Find(*plan, "tp.local_expert_ids", "/moe").size(),
            c.tp > 1 ? static_cast<size_t>(layers) : 0u);
  // Routed experts whole, E/tp of them; the shared expert's local columns (or none).
  auto moe = Find(*plan, std::string("moe.") + plan->moe_backend() + "." + c.format, "/moe");
  const bool shared = cfg.n_shared_experts > 0 && slice->shared_inter() > 0;
  ASSERT_EQ(moe.size(), static_cast<size_t>(layers * (shared ? 2 : 1)));
  EXPECT_EQ(Shape(moe[0], "experts"), slice->experts());
  EXPECT_EQ(Shape(moe[0], "inter"), cfg.moe_inter_dim);
  if (shared) {
    EXPECT_EQ(Shape(moe[1], "inter"), slice->shared_inter());
  }
  // Attention projections of the local heads.
  auto gemms = Find(*plan, "gemm.dense", "layer 0/attn");
  ASSERT_GE(gemms.size(), 8u);
  EXPECT_EQ(Shape(gemms[1], "n"), int64_t{slice->heads()} * cfg.d_qk());  // wq_b
  EXPECT_EQ(Shape(gemms[6], "k"), int64_t{slice->heads()} * cfg.kv_lora_rank);  // wo_a
}

INSTANTIATE_TEST_SUITE_P(
    Models, PlanFactsTest,
    ::testing::Values(Case{"tiny", "mxfp4", "slot_gemv", 1}, Case{"tiny", "nvfp4", "slot_gemv", 2},
                      Case{"small", "mxfp4", "w4a16_mma", 2},
                      Case{"small", "nvfp4", "w4a16_mma", 4},
                      Case{"v4-flash", "mxfp4", "slot_gemv", 8},
                      Case{"v4-flash", "nvfp4", "w4a16_mma", 8}));

// The plan's shapes are those of the weights SliceWeights gives rank 0 (tiny, built here).
TEST(PlanFactsWeightsTest, ShapesMatchTheSlicedWeights) {
  const ModelArch cfg = *LoadModelArch("tiny");
  kernels::ThreadPool pool(2);
  for (const char* format : {"mxfp4", "nvfp4"}) {
    const kernels::Fp4Format fmt =
        std::string(format) == "mxfp4" ? kernels::Fp4Format::kMxfp4 : kernels::Fp4Format::kNvfp4;
    auto full = MakeSyntheticWeights(cfg, fmt, 1, 3, &pool);
    ASSERT_TRUE(full.ok()) << full.status();
    for (int tp : {2, 4}) {
      RunOptions o;
      o.model = "tiny";
      o.format = format;
      o.moe_backend = "slot_gemv";
      o.batch = 3;
      o.layers = 1;
      o.tp = tp;
      auto plan = PlanDecode(o);
      ASSERT_TRUE(plan.ok()) << plan.status();
      auto slice = MakeTpSlice(cfg, fmt, tp, 0,
                               MoeInterGranule(std::string("moe.slot_gemv.") + format));
      ASSERT_TRUE(slice.ok());
      auto w = SliceWeights(*full, *slice);
      ASSERT_TRUE(w.ok());
      const LayerWeights& l = w->layer[0];
      auto gemms = Find(*plan, "gemm.dense", "layer 0/attn");
      EXPECT_EQ(Shape(gemms[1], "n"), l.wq_b.rows) << format << " tp " << tp;
      EXPECT_EQ(Shape(gemms[6], "k"), l.wo_a.cols) << format << " tp " << tp;
      EXPECT_EQ(Shape(Find(*plan, "gemm.lm_head")[0], "n"), w->lm_head.rows);
      auto moe = Find(*plan, std::string("moe.slot_gemv.") + format);
      ASSERT_GE(moe.size(), 1u);
      EXPECT_EQ(Shape(moe[0], "experts"), l.w13.count);
      EXPECT_EQ(Shape(moe[0], "inter") * 2, l.w13.rows);
      if (moe.size() == 2) {
        EXPECT_EQ(Shape(moe[1], "inter"), l.shared_w2.cols);
      }
    }
  }
}

}  // namespace
}  // namespace qprof::runtime
