// Names serving engines (and the profiler plugins written for them) give their decode
// steps, and what they say: how many tokens a step decodes and how large its batch is.
//  - "step[DECODE bs=32]": SGLang's forward-mode step range as TraceLens's SGLang plugin
//    writes it ("bs=N" after a mode word); a DECODE step of batch N decodes N tokens; other
//    modes (EXTEND, MIXED, ...) name the batch but their tokens are not known (a prefill
//    chunk may not finish its prompt); ATOM's "decode[bs=32 ...]" and "prefill[bs=2 ...]"
//    alike, the mode in the name;
//  - "execute_<tokens>_context_<C>(...)_generation_<G>(...)": the iteration annotation of
//    TraceLens's vLLM and SGLang plugins: the step's (padded) token count, C sequences in
//    prefill and G decoding, one token each; the C prefill sequences are not counted.
// Read by the importers (the batch a graph replay's step names, to choose its capture) and
// by the aggregation (tokens per step).
#ifndef QPROF_BASE_STEP_NAMES_H_
#define QPROF_BASE_STEP_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace qprof {

struct DecodeStepName {
  enum Kind : uint8_t { kNone = 0, kStepBatch = 1, kIteration = 2 };
  Kind kind = kNone;
  bool tokens_known = false;
  uint32_t tokens = 0;          // decoded tokens (one per decoding sequence)
  uint32_t prefill_seqs = 0;    // iteration annotation: sequences in prefill (not counted)
  uint32_t padded_tokens = 0;   // the batch: "bs=N", or the iteration's token count (execute_N)
  std::string mode;             // step range: "DECODE", "EXTEND", ...
};

// What a range name says (kind kNone when it is not a decode-step name).
DecodeStepName ParseDecodeStepName(std::string_view name);

// Whether any '/'-separated component of a path is a decode-step name.
bool PathHasDecodeStep(std::string_view path);

}  // namespace qprof

#endif  // QPROF_BASE_STEP_NAMES_H_
