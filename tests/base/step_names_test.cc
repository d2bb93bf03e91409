// The step names serving engines' profiler plugins write, and what qprof reads from them
// (base/step_names.h); names as TraceLens's SGLang and vLLM plugins and ATOM write them.
#include "base/step_names.h"

#include "gtest/gtest.h"

namespace qprof {
namespace {

TEST(StepNames, IterationAnnotationCountsItsDecodingSequences) {
  const DecodeStepName d = ParseDecodeStepName(
      "execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)");
  EXPECT_EQ(d.kind, DecodeStepName::kIteration);
  EXPECT_TRUE(d.tokens_known);
  EXPECT_EQ(d.tokens, 32u);
  EXPECT_EQ(d.prefill_seqs, 0u);
  EXPECT_EQ(d.padded_tokens, 32u);
  // A mixed step: 9 prefill chunks are not counted as tokens; the padded count is the batch.
  const DecodeStepName m = ParseDecodeStepName(
      "execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk30sqsq37sqsk3)");
  EXPECT_EQ(m.tokens, 37u);
  EXPECT_EQ(m.prefill_seqs, 9u);
  EXPECT_EQ(m.padded_tokens, 8192u);
}

TEST(StepNames, StepRangesNameTheBatch) {
  const DecodeStepName d = ParseDecodeStepName("step[DECODE bs=32]");
  EXPECT_EQ(d.kind, DecodeStepName::kStepBatch);
  EXPECT_EQ(d.mode, "DECODE");
  EXPECT_TRUE(d.tokens_known);
  EXPECT_EQ(d.tokens, 32u);
  // The detailed SGLang form, and an EXTEND step whose tokens are not known.
  EXPECT_EQ(ParseDecodeStepName("step[DECODE bs=64 g_sq=64 g_sqsq=64 g_sqsk=131072 g_sk=131072]").tokens,
            64u);
  const DecodeStepName e = ParseDecodeStepName("step[EXTEND bs=15 toks=15360]");
  EXPECT_EQ(e.kind, DecodeStepName::kStepBatch);
  EXPECT_FALSE(e.tokens_known);
  EXPECT_EQ(e.padded_tokens, 15u);
  // ATOM's ranges name the mode themselves.
  EXPECT_EQ(ParseDecodeStepName("decode[bs=32 tok=32 d=32 sqsq=32 sqsk=65536 sk=65536]").tokens, 32u);
  EXPECT_FALSE(ParseDecodeStepName("prefill[bs=2 tok=14721]").tokens_known);
}

TEST(StepNames, OtherNamesAreNotSteps) {
  for (const char* n : {"ProfilerStep#3", "step 3", "step[]", "step[DECODE]", "execute_x",
                        "execute_32_context_0", "capture_32_DECODE", "decode", "", "s"}) {
    EXPECT_EQ(ParseDecodeStepName(n).kind, DecodeStepName::kNone) << n;
  }
  EXPECT_TRUE(PathHasDecodeStep("ProfilerStep#1/step[DECODE bs=8]/forward"));
  EXPECT_FALSE(PathHasDecodeStep("ProfilerStep#1/forward"));
}

}  // namespace
}  // namespace qprof
