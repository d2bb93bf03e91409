// Options and results of the bundled decode runtime: run decode steps of a model for one
// format and return the trace the collector recorded. Backends (runtime/decode_backend.h)
// take RunOptions and return RunResults; cli/run_command.cc drives them.
#ifndef QPROF_RUNTIME_RUN_H_
#define QPROF_RUNTIME_RUN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/trace.pb.h"

namespace qprof::runtime {

struct RunOptions {
  std::string model = "small";       // preset name (tiny, small, v4-flash) or JSON config path
  std::string checkpoint_dir;        // optional: a `qprof quantize` / ModelOpt / gpt-oss folder
  std::string format = "mxfp4";      // "mxfp4" or "nvfp4"
  std::string moe_backend = "auto";  // auto | slot_gemv | w4a16_mma | fp4_mma
  // Sparse-MLA variant: auto | simt | mma. auto: simt when the MoE path is slot_gemv (the
  // all-SIMT deployment of the story), mma otherwise. The CPU runs one kernel for both.
  std::string mla_kernel = "auto";
  std::string backend = "cpu";       // cpu | cuda
  int batch = 16;
  int steps = 8;
  int context = 256;                 // prompt/context length per sequence (varied per sequence)
  int layers = 0;                    // 0 = all layers of the model
  int tp = 1;
  uint64_t seed = 1;
  int threads = 0;                   // CPU threads; 0 = all cores
  bool check = false;                // compare with the dense FP32 reference
  bool cuda_graph = false;
  std::string target_arch;           // for `auto` MoE routing when planning ("sm_120", ...)
  // Called after each decode step (for progress bars). May be empty.
  std::function<void(int step, int steps)> on_step;
  // Called with one line per setup stage ("weights built in 27.1 s"), so a long setup
  // says where the time goes before any step runs. May be empty.
  std::function<void(const std::string& line)> on_progress;
};

struct CheckResult {
  double logits_rel_error = 0;       // ||logits - ref|| / ||ref|| over all steps
  double token_agreement = 0;        // fraction of greedy tokens equal to the reference's
  int tokens_compared = 0;
  int first_disagreement_step = -1;  // first step whose greedy tokens differ (-1: none)
};

struct RunResult {
  proto::Trace trace;                // header.run filled (tokens, wall time), activities timed
  std::vector<std::vector<int32_t>> tokens;  // [step][sequence]
  // --check: against the reference with unquantized FP32 experts (the format's cost).
  std::optional<CheckResult> check;
  // --check on the CUDA backend: against the CPU backend replaying the same inputs on the
  // same quantized weights (the GPU kernels' correctness).
  std::optional<CheckResult> check_vs_cpu;
  std::string moe_backend_used;      // what `auto` resolved to
  std::string backend_note;          // e.g. why `auto` ran on the CPU with a GPU present
};

// The CPU backend (options.backend "cpu" or "auto"): runtime::RunOnBackends with
// MakeCpuBackend() alone. For callers that run on the host only (tests, benches);
// `qprof run` chooses among every backend of its build (cli/decode_backends.h).
absl::StatusOr<RunResult> RunDecode(const RunOptions& options);

// One run per batch size in `batches` (options.batch is ignored) on the same weights:
// built or loaded once and, on the GPU, uploaded once, so a sweep over batch sizes pays
// the weight setup once. Results in the order of `batches`; each trace is what RunDecode
// with that batch would write, with TraceHeader.setup.weights_reused set after the first.
absl::StatusOr<std::vector<RunResult>> RunDecodeBatches(const RunOptions& options,
                                                        const std::vector<int>& batches);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_RUN_H_
