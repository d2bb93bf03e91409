// The op-rule table (analysis/work/op_rules.h) as data: every row sourced and consistent,
// and the lookup's precedence (exact names, then patterns in table order).
#include "analysis/work/op_rules.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "analysis/work/moe_work.h"
#include "analysis/work/op_work.h"
#include "gtest/gtest.h"

namespace qprof::work {
namespace {

// The kind each convention's rows must have.
std::string_view KindOf(Convention c) {
  switch (c) {
    case Convention::kNoWork: return "";
    case Convention::kGemm:
    case Convention::kBatchedGemm:
    case Convention::kMatmul:
    case Convention::kGroupedGemm: return kind::kGemm;
    case Convention::kAttention:
    case Convention::kStepAttention: return kind::kAttention;
    case Convention::kConv:
    case Convention::kConvBackward: return kind::kConv;
    case Convention::kMoeLayer: return kind::kMoe;
    default: return kind::kMemory;
  }
}

TEST(OpRules, EveryRowHasAPatternASourceAndItsConventionsKind) {
  std::set<std::string> exact;
  size_t rows = 0;
  for (std::span<const OpRule> table : {AtenOpRules(), ServingOpRules()}) {
    for (const OpRule& r : table) {
      ++rows;
      const std::string name(r.pattern);
      EXPECT_FALSE(r.pattern.empty());
      EXPECT_GT(r.source.size(), 10u) << name << ": a row says where its convention comes from";
      EXPECT_EQ(r.kind, KindOf(r.convention)) << name;
      if (r.match == Match::kExact) {
        EXPECT_TRUE(exact.insert(name).second) << name << " twice";
      }
      if (r.flags & kNoCase) {
        for (char c : r.pattern) EXPECT_FALSE(c >= 'A' && c <= 'Z') << name << ": lower-case pattern";
      }
    }
  }
  EXPECT_GT(rows, 150u);
}

TEST(OpRules, LookupPrecedence) {
  ASSERT_NE(FindOpRule("aten::mm"), nullptr);
  EXPECT_EQ(FindOpRule("aten::mm")->convention, Convention::kGemm);
  EXPECT_EQ(FindOpRule("aten::view"), nullptr);
  EXPECT_EQ(OpKind("aten::view"), "");
  // Prefixes: TorchInductor kernels and SGLang's per-layer profiler wrappers.
  EXPECT_EQ(FindOpRule("triton_poi_fused_constant_pad_nd_moe_forward_0")->convention, Convention::kTriton);
  EXPECT_EQ(FindOpRule("sglang_profiler::attention_paged_attention_ragged_100")->convention,
            Convention::kStepAttention);
  // Case-insensitive infixes for MoE layers; routing ops claim their names with no work.
  EXPECT_EQ(OpKind("vllm::moe_forward"), "moe");
  EXPECT_EQ(OpKind("SGLang::Fused_MoE_Impl"), "moe");
  EXPECT_EQ(OpKind("aiter::fused_moe"), "moe");
  for (const char* routing : {"_moe_C::topk_softmax", "_moe_C::moe_align_block_size",
                              "aiter::moe_sorting_fwd", "aiter::moe_sum"}) {
    ASSERT_NE(FindOpRule(routing), nullptr) << routing;
    EXPECT_EQ(FindOpRule(routing)->convention, Convention::kNoWork) << routing;
    EXPECT_EQ(OpKind(routing), "") << routing;
    EXPECT_FALSE(IsMoeOp(routing)) << routing;
  }
  bool shared = false;
  EXPECT_TRUE(IsMoeOp("vllm::moe_forward_shared", &shared));
  EXPECT_TRUE(shared);
  EXPECT_TRUE(IsMoeOp("sglang::fused_moe_impl", &shared));
  EXPECT_FALSE(shared);
}

// docs/work.md lists every row: `name`, `prefix*` or `*infix*`.
TEST(OpRules, TheDocsListEveryRow) {
  const std::string path = std::string(QPROF_SOURCE_DIR) + "/docs/work.md";
  std::ifstream f(path);
  ASSERT_TRUE(f.good()) << path;
  const std::string doc((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (std::span<const OpRule> table : {AtenOpRules(), ServingOpRules()}) {
    for (const OpRule& r : table) {
      std::string listed(r.pattern);
      if (r.match == Match::kPrefix) listed += "*";
      if (r.match == Match::kInfix) listed = "*" + listed + "*";
      EXPECT_NE(doc.find("`" + listed + "`"), std::string::npos) << listed << " is not in " << path;
    }
  }
}

}  // namespace
}  // namespace qprof::work
