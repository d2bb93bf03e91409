// Tokens per step, steps and tokens/s of a decode trace that carries no run info (the
// PyTorch profiler traces serving engines write), read from the trace itself. In order of
// trust:
//  1. named steps (decode_steps.h): ranges that name each step's decoded tokens, the
//     iteration annotation "execute_32_context_0(...)_generation_32(...)" preferred over a
//     step range "step[DECODE bs=32]" when a trace has both; only the ranges that launched
//     GPU work count; tokens/s divides by the sum of their kernels' spans on the GPU;
//  2. the graph capture's batch (GraphCaptureUse.batch: "capture_32_DECODE" as the capture
//     was annotated, or a capture file named bs_32_...): each step replays the pieces of
//     one capture annotation once (vLLM's piecewise graphs: one graph per piece; a whole-step
//     graph is one piece), so steps = replays / pieces and tokens per step = the batch, which
//     for a decode graph is its sequences, one token each; tokens/s divides by the GPUs'
//     span. When named steps exist but say no tokens (EXTEND steps), they give the step
//     count and the capture the tokens;
//  3. a capture that names no batch: the M dimension (rows) of the first GEMM the replays ran
//     with work from their capture, the tokens every linear layer of a decode step takes,
//     with the steps as in 2.
// Nothing is derived from kernel counts or times. The source says which, in words.
#ifndef QPROF_ANALYSIS_AGGREGATE_DECODE_TOKENS_H_
#define QPROF_ANALYSIS_AGGREGATE_DECODE_TOKENS_H_

#include <cstdint>
#include <string>

#include "analysis/aggregate/accumulator.h"

namespace qprof::aggregate {

struct DecodeTokens {
  bool known = false;
  double tokens = 0;            // over the trace
  double steps = 0;
  double tokens_per_step = 0;
  double replays_per_step = 0;  // 0: no graph replays, or their count per step is not known
  uint64_t step_time_ns = 0;    // named steps: the sum of their GPU spans; 0: use the span
  uint64_t step_kernel_ns = 0;  // named steps: their kernels' summed durations
  std::string source;           // "32 tokens per step (...), 1 replay per step"
};

DecodeTokens DeriveDecodeTokens(const ProfileState& state);

// The rows of the GEMM op call innermost on stack `stack`: all but the last dimension of its
// first input with two or more (the linear convention's [M, K], addmm's after its bias);
// 0 for batched GEMMs (bmm, baddbmm) and calls without shapes.
double GemmRows(const proto::LaunchContextStats& tables, uint32_t stack);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_DECODE_TOKENS_H_
