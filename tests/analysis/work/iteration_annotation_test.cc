// The step annotations serving engines' profiler plugins write (analysis/work/
// iteration_annotation.h), on the forms TraceLens's public vLLM and SGLang traces carry and
// the forms TraceLens's annotation_utils.py documents.
#include "analysis/work/iteration_annotation.h"

#include "gtest/gtest.h"

namespace qprof::work {
namespace {

TEST(IterationAnnotation, VllmDetailedDecode) {
  // TraceLens's vllm_decode_full trace: 32 decode requests, 55086 keys in all.
  auto a = ParseIterationAnnotation(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk55086sqsq32sqsk55086)");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->format, "vLLM");
  EXPECT_TRUE(a->has_keys);
  EXPECT_FALSE(a->keys_assumed);
  EXPECT_EQ(a->context.requests, 0);
  EXPECT_EQ(a->generation.requests, 32);
  EXPECT_EQ(a->generation.sq, 32);
  EXPECT_EQ(a->generation.sk, 55086);
  EXPECT_EQ(a->generation.sqsq, 32);
  EXPECT_EQ(a->generation.sqsk, 55086);
  EXPECT_EQ(a->QueryTokens(), 32);
  EXPECT_EQ(a->Requests(), 32);
}

TEST(IterationAnnotation, VllmDetailedMixed) {
  // TraceLens's vllm_prefilldecode_piecewise trace: 9 prefill chunks and 37 decode requests.
  auto a = ParseIterationAnnotation(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)"
      "_generation_37(sq37sk34489sqsq37sqsk34489)");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->context.requests, 9);
  EXPECT_EQ(a->context.sq, 8155);
  EXPECT_EQ(a->context.sk, 8430);
  EXPECT_EQ(a->context.sqsq, 7475785);
  EXPECT_EQ(a->context.sqsk, 7671310);
  EXPECT_EQ(a->generation.sk, 34489);
  EXPECT_EQ(a->QueryTokens(), 8155 + 37);
}

TEST(IterationAnnotation, VllmOlderFormHasKeysOnlyForPrefillWithoutDecode) {
  // TraceLens's B200 vLLM trace: one 888-token prefill (888^2 = 788544).
  auto a = ParseIterationAnnotation("execute_context_1(888_788544)_generation_0(0)");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->format, "vLLM (older)");
  EXPECT_TRUE(a->has_keys);
  EXPECT_TRUE(a->keys_assumed);
  EXPECT_EQ(a->context.sk, 888);
  EXPECT_EQ(a->context.sqsk, 788544);
  // Decode requests' keys are not stated: counts only.
  auto d = ParseIterationAnnotation("execute_context_0(0)_generation_64(64)");
  ASSERT_TRUE(d.has_value());
  EXPECT_FALSE(d->has_keys);
  EXPECT_EQ(d->generation.sq, 64);
}

TEST(IterationAnnotation, SglangForms) {
  auto plain = ParseIterationAnnotation("step[DECODE bs=32]");
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->format, "SGLang");
  EXPECT_FALSE(plain->has_keys);
  EXPECT_EQ(plain->generation.requests, 32);
  EXPECT_EQ(plain->generation.sq, 32);
  auto extend = ParseIterationAnnotation("step[EXTEND bs=15 toks=15360]");
  ASSERT_TRUE(extend.has_value());
  EXPECT_EQ(extend->context.sq, 15360);
  // Detailed, with MTP (two queries per request).
  auto mtp = ParseIterationAnnotation("step[DECODE bs=64 g_sq=128 g_sqsq=256 g_sqsk=262144 g_sk=131072]");
  ASSERT_TRUE(mtp.has_value());
  EXPECT_TRUE(mtp->has_keys);
  EXPECT_EQ(mtp->generation.requests, 64);
  EXPECT_EQ(mtp->generation.sq, 128);
  EXPECT_EQ(mtp->generation.sqsk, 262144);
  auto mixed = ParseIterationAnnotation(
      "step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]");
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(mixed->context.requests, 1);
  EXPECT_EQ(mixed->context.sqsk, 40);
  EXPECT_EQ(mixed->generation.sk, 12);
}

TEST(IterationAnnotation, AtomForms) {
  auto d = ParseIterationAnnotation("decode[bs=117/128 tok=117 d=117 sqsq=117 sqsk=65536 sk=65536]");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->format, "ATOM");
  EXPECT_TRUE(d->has_keys);
  EXPECT_EQ(d->generation.requests, 117);  // the real batch, not the graph's padded 128
  EXPECT_EQ(d->generation.sqsk, 65536);
  auto p = ParseIterationAnnotation(
      "prefill[bs=2 tok=14721 ctx=[7803, 6918] sqsq=108745533 sqsk=108745533 sk=14721]");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->context.sq, 14721);
  EXPECT_EQ(p->context.sqsq, 108745533);
  EXPECT_FALSE(ParseIterationAnnotation("decode[bs=64 tok=64 d=64]")->has_keys);
}

TEST(IterationAnnotation, OtherNamesAreNotSteps) {
  for (const char* name : {"capture_32_DECODE", "ProfilerStep#3", "execute_32_context_0(sq0sk0",
                           "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_x", "step[FOO bs=1]",
                           "", "decode", "## Call CompiledFxGraph f ##",
                           "execute_99999999999999999999_context_0(sq0sk0sqsq0sqsk0)_generation_0("
                           "sq0sk0sqsq0sqsk0)"}) {
    EXPECT_FALSE(ParseIterationAnnotation(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace qprof::work
