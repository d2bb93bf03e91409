// The per-step sequence lengths that serving engines' profiler annotations state, for the
// work of attention ops whose key lengths live in tensors the trace does not record (paged
// KV caches: block tables, seq_lens, cu_seqlens values).
//
// The forms read here are the ones TraceLens's vLLM and SGLang plugins (and ATOM) write on
// each step's user annotation (TraceLens, TraceLens/TraceUtils/annotation_utils.py):
//
//   vLLM, detailed   execute_32_context_0(sq0sk0sqsq0sqsk0)_generation_32(sq32sk32785sqsq32sqsk32785)
//                    execute_<query tokens>_context_<requests>(sq<Σq>sk<Σk>sqsq<Σq²>sqsk<Σq·k>)
//                    _generation_<requests>(...)
//   vLLM, older      execute_context_1(888_788544)_generation_0(0): context (Σq _ Σq²) and
//                    generation (Σq) only; no key lengths
//   SGLang, detailed step[DECODE bs=64 g_sq=64 g_sqsq=64 g_sqsk=131072 g_sk=131072]
//                    step[EXTEND ...c_sq= c_sk= c_sqsq= c_sqsk=...], step[MIXED ...]
//   SGLang, plain    step[DECODE bs=32], step[EXTEND bs=15 toks=15360]: counts only
//   ATOM, detailed   decode[bs=32 tok=32 d=32 sqsq=32 sqsk=65536 sk=65536],
//                    prefill[bs=2 tok=14721 ... sqsq=... sqsk=... sk=...]
//
// Per part (context = prefill chunks, generation = decode steps): q_i query tokens and k_i
// key tokens (cached + new) of each sequence i, summed: sq = Σ q_i, sk = Σ k_i,
// sqsq = Σ q_i², sqsk = Σ q_i·k_i. The attention rules (op_work.h) take the (query, key)
// pairs of a step from them: context sqsk - sqsq/2 (causal within the chunk, the halving
// convention of dense causal attention), generation sqsk.
#ifndef QPROF_ANALYSIS_WORK_ITERATION_ANNOTATION_H_
#define QPROF_ANALYSIS_WORK_ITERATION_ANNOTATION_H_

#include <optional>
#include <string>
#include <string_view>

namespace qprof::work {

struct SequenceSums {
  double requests = 0;
  double sq = 0, sk = 0, sqsq = 0, sqsk = 0;
};

struct IterationAnnotation {
  std::string text;               // the annotation as written
  std::string format;             // "vLLM", "vLLM (older)", "SGLang", "ATOM"
  SequenceSums context;           // prefill / extend chunks
  SequenceSums generation;        // decode steps
  // The sums include key lengths (sk and sqsk). Without them the step's tokens and
  // requests are known, the attention pairs are not.
  bool has_keys = false;
  // Older vLLM form: its context part states Σq and Σq² only; keys are taken equal to the
  // queries (no prefix cache), which the description says.
  bool keys_assumed = false;
  double QueryTokens() const { return context.sq + generation.sq; }
  double Requests() const { return context.requests + generation.requests; }
};

// The annotation's sums, or nullopt when `name` is not one of the forms above.
std::optional<IterationAnnotation> ParseIterationAnnotation(std::string_view name);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_ITERATION_ANNOTATION_H_
