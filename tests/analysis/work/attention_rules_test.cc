// Decode and prefill attention ops whose key lengths live in the step (analysis/work/
// op_work.h: kStepAttention; varlen kAttention): shapes as TraceLens's public vLLM and
// SGLang captures record them, sums as their iteration annotations state them, each
// expectation the convention written out by hand.
#include "analysis/work/op_work.h"

#include "gtest/gtest.h"
#include "tests/analysis/work/rules_test_util.h"

namespace qprof::work {
namespace {

IterationAnnotation Step(const std::string& text) {
  auto a = ParseIterationAnnotation(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(IterationAnnotation{});
}

constexpr const char* kUnifiedTypes =
    R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","","","","c10::BFloat16"])";

TEST(StepAttention, VllmUnifiedAttentionDecode) {
  // gpt-oss on MI300X: 64 query heads, 8 KV heads, head dim 64; 32 sequences, 55086 keys.
  const OpCall call = Call("vllm::unified_attention_with_output",
                           "[[32,64,64],[32,8,64],[32,8,64],[32,64,64],[],[],[],[0]]", kUnifiedTypes);
  const IterationAnnotation step =
      Step("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  OpWork w = Work(call, step);
  // 4*H*Σ(q_i*k_i)*d; each sequence's keys and values once (8 heads x 64 x 2), Q and O once.
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 64 * 55086 * 64);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 32 * 64 * (64 + 64) + 2.0 * 55086 * 8 * (64 + 64));
  EXPECT_EQ(w.kind, "attention");
  EXPECT_NE(w.description.find("vLLM iteration annotation"), std::string::npos) << w.description;
  EXPECT_NE(w.description.find("55086 keys"), std::string::npos) << w.description;
  // Without the step's sums: no work, and the reason says where the lengths would come from.
  OpWorkResult none = DeriveOpWork(call);
  EXPECT_EQ(none.outcome, Outcome::kInvalid);
  EXPECT_NE(none.error.find("key lengths are not recorded"), std::string::npos) << none.error;
}

TEST(StepAttention, MixedPrefillAndDecode) {
  // vLLM piecewise: 9 prefill chunks (causal within the chunk) and 37 decode requests in
  // one call of 8192 query rows.
  const OpCall call = Call("vllm::unified_attention_with_output",
                           "[[8192,64,64],[8192,8,64],[8192,8,64],[8192,64,64],[],[],[],[0]]",
                           kUnifiedTypes);
  OpWork w = Work(call, Step("execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
                             "_generation_37(sq37sk34489sqsq37sqsk34489)"));
  const double pairs = (7671310.0 - 7475785.0 / 2) + 34489.0;
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 64 * pairs * (64 + 64));
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 8192 * 64 * 128 + 2.0 * (8430 + 34489) * 8 * 128);
}

TEST(StepAttention, SglangPagedAttentionRaggedTakesTheDecodePart) {
  // SGLang Qwen3-8B: paged_attention_ragged(out, workspace, q [32,32,128], k_cache
  // [pages, 1, 8, 128], v_cache, kv_indptr [33], ...), wrapped per layer by SGLang's profiler.
  const OpCall call = Call(
      "sglang_profiler::attention_paged_attention_ragged_100",
      "[[32,32,128],[10905190400],[32,32,128],[835874,1,8,128],[835874,1,8,128],[33],[20971520],[4096],[],[1],[1],[]]",
      R"(["c10::BFloat16","unsigned char","c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","int","","float","float",""])");
  OpWork w = Work(call, Step("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)"));
  EXPECT_DOUBLE_EQ(w.flops, 4.0 * 32 * 32785 * 128);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 32 * 32 * 256 + 2.0 * 32785 * 8 * 256);
  // A decode kernel with fewer query rows than the step's decode tokens does not fit it.
  const OpCall small = Call("aiter::paged_attention_ragged",
                            "[[16,32,128],[1],[16,32,128],[835874,1,8,128],[835874,1,8,128]]",
                            R"(["c10::BFloat16","unsigned char","c10::BFloat16","c10::BFloat16","c10::BFloat16"])");
  const IterationAnnotation step =
      Step("execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)");
  EXPECT_EQ(DeriveOpWork(small, OpContext{&step}).outcome, Outcome::kInvalid);
}

TEST(StepAttention, AiterBatchPrefillIsCausalWithinTheChunk) {
  // SGLang prefill: mha_batch_prefill(q [15360,32,128], k_cache [pages,8,128], v_cache, ...);
  // 15 sequences of 1024 tokens: Σq² = Σq·k = 15 * 1024².
  OpWork w = Work(Call("aiter::mha_batch_prefill", "[[15360,32,128],[835874,8,128],[835874,8,128],[16],[16],[15616]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","int"])"),
                  Step("execute_15360_context_15(sq15360sk15360sqsq15728640sqsk15728640)"
                       "_generation_0(sq0sk0sqsq0sqsk0)"));
  const double pairs = 15728640.0 - 15728640.0 / 2;  // = 15 * 1024² / 2
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 32 * pairs * 256);
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 15360 * 32 * 256 + 2.0 * 15360 * 8 * 256);
}

TEST(StepAttention, FlashMlaReadsTheLatentCacheOnce) {
  // fwd_kvcache_mla(q [4, 1, 128, 576], kv_cache [blocks, 64, 1, 576], head_size_v 512, ...)
  OpWork w = Work(Call("sgl_kernel::fwd_kvcache_mla", "[[4,1,128,576],[1000,64,1,576],[],[4],[4,16]]",
                       R"(["c10::BFloat16","c10::BFloat16","Scalar","int","int"])", R"(["","","512","",""])"),
                  Step("step[DECODE bs=4 g_sq=4 g_sqsq=4 g_sqsk=8000 g_sk=8000]"));
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 128 * 8000 * (576 + 512));
  // Q read and O written; the latent cache (V is its first 512 of 576) read once.
  EXPECT_DOUBLE_EQ(w.bytes, 2.0 * 4 * 128 * (576 + 512) + 2.0 * 8000 * 1 * 576);
}

TEST(StepAttention, OlderVllmFormTakesKeysEqualToQueries) {
  // B200 gpt-oss prefill: execute_context_1(888_788544): one sequence of 888 tokens.
  OpWork w = Work(Call("vllm::unified_attention_with_output", "[[888,8,64],[888,1,64],[888,1,64],[888,8,64],[],[],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","","",""])"),
                  Step("execute_context_1(888_788544)_generation_0(0)"));
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 8 * (788544.0 / 2) * 128);
  EXPECT_NE(w.description.find("keys taken equal to queries"), std::string::npos) << w.description;
}

TEST(StepAttention, VllmPagedAttentionKeepsItsKvHeadsInDimensionOne) {
  // paged_attention_v1(out, query [8,32,128], key_cache [blocks, Hkv=8, d/x=16, block=16, x=8],
  // value_cache [blocks, 8, 128, 16], num_kv_heads, ...); v2 adds exp_sums, max_logits and
  // tmp_out before the query. 8 sequences, 4000 keys.
  const IterationAnnotation step = Step("step[DECODE bs=8 g_sq=8 g_sqsq=8 g_sqsk=4000 g_sk=4000]");
  const double flops = 4.0 * 32 * 4000 * 128;
  const double bytes = 2.0 * 8 * 32 * 256 + 2.0 * 4000 * 8 * 256;
  OpWork v1 = Work(Call("_C::paged_attention_v1", "[[8,32,128],[8,32,128],[512,8,16,16,8],[512,8,128,16],[]]",
                        R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar"])"),
                   step);
  EXPECT_DOUBLE_EQ(v1.flops, flops);
  EXPECT_DOUBLE_EQ(v1.bytes, bytes);
  OpWork v2 = Work(Call("_C::paged_attention_v2",
                        "[[8,32,128],[8,32,4],[8,32,4],[8,32,4,128],[8,32,128],[512,8,16,16,8],[512,8,128,16],[]]",
                        R"(["c10::BFloat16","float","float","c10::BFloat16","c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar"])"),
                   step);
  EXPECT_DOUBLE_EQ(v2.flops, flops);
  EXPECT_DOUBLE_EQ(v2.bytes, bytes);
  // aiter pa_decode_gluon(q, ?, key_cache [blocks, Hkv, ...], ...) with an FP8 cache.
  OpWork g = Work(Call("aiter::pa_decode_gluon", "[[8,32,128],[8,32,128],[512,8,16,16,8],[512,8,128,16]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::Float8_e4m3fnuz","c10::Float8_e4m3fnuz"])"),
                  step);
  EXPECT_DOUBLE_EQ(g.flops, flops);
  EXPECT_DOUBLE_EQ(g.bytes, 2.0 * 8 * 32 * 256 + 1.0 * 4000 * 8 * 256);
  // vLLM's unified_attention (no output argument) reads like unified_attention_with_output.
  OpWork u = Work(Call("vllm::unified_attention", "[[8,32,128],[8,8,128],[8,8,128],[]]",
                       R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16",""])"),
                  step);
  EXPECT_DOUBLE_EQ(u.flops, flops);
}

TEST(DenseAttention, AiterMhaFwdIsBshdAndCausalAtArgumentFive) {
  // aiter mha_fwd(q, k, v [2, 1024, 16, 128], dropout_p, softmax_scale, is_causal, ...)
  OpWorkResult r = DeriveOpWork(Call("aiter::mha_fwd", "[[2,1024,16,128],[2,1024,16,128],[2,1024,16,128],[],[],[]]",
                                     R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar","Scalar"])",
                                     R"(["","","","0.","0.088","True"])"));
  ASSERT_EQ(r.outcome, Outcome::kWork) << r.error;
  EXPECT_DOUBLE_EQ(r.work.flops, 4.0 * 2 * 16 * 1024 * 1024 * 128 / 2);
  EXPECT_DOUBLE_EQ(r.work.bytes, 2.0 * 4 * 2 * 1024 * 16 * 128);
}

TEST(SageAttention, Int8QueryAndKeyFp8ValueBf16Output) {
  // sage_fwd_1 as xDiT's flux capture records it: q, k INT8 and v FP8 [1,24,768,128] (B, H,
  // S, d), scales, ..., O BF16 [1,24,768,128] at argument 16.
  std::string dims = "[[1,24,768,128],[1,24,768,128],[1,24,768,128],[],[1,24,3],[1,24,6],[1,24,128]";
  std::string types = R"(["signed char","signed char","c10::Float8_e4m3fnuz","Scalar","float","float","float")";
  for (int i = 7; i < 16; ++i) {
    dims += ",[]";
    types += R"(,"Scalar")";
  }
  dims += ",[1,24,768,128]]";
  types += R"(,"c10::BFloat16"])";
  OpWorkResult r = DeriveOpWork(Call("sage_fwd_1", dims, types));
  ASSERT_EQ(r.outcome, Outcome::kWork) << r.error;
  EXPECT_DOUBLE_EQ(r.work.flops, 4.0 * 24 * 768 * 768 * 128);
  const double n = 24.0 * 768 * 128;
  EXPECT_DOUBLE_EQ(r.work.bytes, n * (1 + 1 + 1) + 2 * n);  // Q, K, V one byte each; O BF16
  EXPECT_EQ(r.work.precision, "int8");
}

constexpr const char* kVarlenTypes =
    R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","int","int","Scalar","Scalar","Scalar","Scalar","Scalar"])";

TEST(VarlenAttention, PrefillLengthsFromTheStepOrFromUniformMaxima) {
  // flash_attn varlen prefill: 3 sequences of 200, 50 and 50 tokens (300 in all), causal.
  const OpCall ragged = Call("flash_attn::_flash_attn_varlen_forward",
                             "[[300,16,64],[300,4,64],[300,4,64],[4],[4],[],[],[],[],[]]", kVarlenTypes,
                             R"(["","","","","","200","200","0.","0.125","True"])");
  const IterationAnnotation step =
      Step("execute_300_context_3(sq300sk300sqsq45000sqsk45000)_generation_0(sq0sk0sqsq0sqsk0)");
  OpWork w = Work(ragged, step);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 16 * (45000.0 - 45000.0 / 2) * 128);  // Σ q_i² / 2 pairs
  OpWorkResult unknown = DeriveOpWork(ragged);
  EXPECT_EQ(unknown.outcome, Outcome::kInvalid);
  EXPECT_NE(unknown.error.find("per-sequence lengths"), std::string::npos);
  // Every sequence at max_seqlen (3 x 100 = 300): the lengths are known without a step.
  OpWorkResult uniform = DeriveOpWork(Call("flash_attn::_flash_attn_varlen_forward",
                                           "[[300,16,64],[300,4,64],[300,4,64],[4],[4],[],[],[],[],[]]",
                                           kVarlenTypes, R"(["","","","","","100","100","0.","0.125","True"])"));
  ASSERT_EQ(uniform.outcome, Outcome::kWork) << uniform.error;
  EXPECT_DOUBLE_EQ(uniform.work.flops, 2.0 * 16 * 3 * (100.0 * 100 - 100.0 * 100 / 2) * 128);
  // Decode (one query per sequence): every key once.
  OpWorkResult decode = DeriveOpWork(Call("flash_attn::_flash_attn_varlen_forward",
                                          "[[3,16,64],[1000,4,64],[1000,4,64],[4],[4],[],[],[],[],[]]",
                                          kVarlenTypes, R"(["","","","","","1","400","0.","0.125","True"])"));
  ASSERT_EQ(decode.outcome, Outcome::kWork) << decode.error;
  EXPECT_DOUBLE_EQ(decode.work.flops, 2.0 * 16 * 1000 * 128);
}

}  // namespace
}  // namespace qprof::work
