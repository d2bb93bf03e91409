// What every decode backend does the same way, written once: the seeded first tokens, the
// loop that feeds each step's greedy tokens to the next (with per-step wall times and, for
// --check, the inputs and logits), and the RunInfo block of the trace header.
#ifndef QPROF_RUNTIME_DECODE_LOOP_H_
#define QPROF_RUNTIME_DECODE_LOOP_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/common/thread_pool.h"
#include "proto/trace.pb.h"
#include "runtime/model_arch.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/run.h"

namespace qprof::runtime {

// The weights of a run: loaded from options.checkpoint_dir, else synthetic from the seed;
// the time and source go into *setup and a progress line to options.on_progress.
// FailedPrecondition for --check with a checkpoint (no unquantized experts to compare with).
absl::StatusOr<ModelWeights> BuildRunWeights(const RunOptions& options, const ModelArch& arch,
                                             kernels::ThreadPool* pool, proto::RunSetup* setup);

// The seeded first token of each sequence (every backend decodes the same inputs).
std::vector<int32_t> InitialTokens(uint64_t seed, int batch, int vocab);

// One decode step of a backend: `in` [B] tokens in, `next` [B] out; `logits` [B, vocab]
// is filled when not null (only --check asks for them).
using DecodeStepFn = std::function<absl::Status(int step, const std::vector<int32_t>& in,
                                                std::vector<int32_t>* next,
                                                std::vector<float>* logits)>;

struct DecodeLoop {
  std::vector<std::vector<int32_t>> tokens;  // [step][sequence], greedy tokens out
  std::vector<std::vector<int32_t>> inputs;  // [step][sequence], --check only
  std::vector<std::vector<float>> logits;    // [step][B * vocab], --check only
  std::vector<uint64_t> step_ns;             // host wall time of each finished step
  int64_t start_unix_ns = 0;                 // when the first step began (system clock)
  int64_t wall_ns = 0;                       // steady clock around the whole loop
};

// Runs options.steps steps from InitialTokens(seed, batch, vocab), calling on_step after
// each. Stops at the first failing step and returns its status; what finished is in *loop.
absl::Status RunDecodeLoop(const RunOptions& options, int vocab, const DecodeStepFn& step,
                           DecodeLoop* loop);

// The figures of a finished run that differ between backends.
struct RunFacts {
  std::string backend;        // "cpu", "cuda"
  KernelChoice choice;
  int warmup_steps = 0;       // leading steps left out of tokens/s
  uint64_t wall_time_ns = 0;  // decode wall time of the timed steps
  uint64_t setup_wall_ns = 0;
  uint64_t kv_cache_bytes = 0;
};

// Fills the RunInfo every backend writes alike: what ran (model, format, kernels, batch,
// steps, tp, context lengths, layers), its tokens and step times, where (host, start
// time), and the extras both backends record (weights, seed, kernel ids, byte counts, the
// model's JSON).
void FillRunInfo(const RunOptions& options, const ModelArch& arch, const ModelWeights& weights,
                 const DecodeLoop& loop, const RunFacts& facts, proto::RunInfo* run);

// run.extra["<prefix>logits_rel_error"] and ["<prefix>token_agreement"].
void AddCheckExtras(const std::string& prefix, const CheckResult& check, proto::RunInfo* run);

// The header note every bundled-runtime trace carries about its prompt cache.
inline constexpr char kSyntheticPromptNote[] =
    "the prompt KV cache is synthetic (seeded rows); prefill is not run or timed";

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_DECODE_LOOP_H_
