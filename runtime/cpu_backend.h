// The CPU backend of the bundled decode runtime (qprof run --backend cpu): weights built
// once per batch sweep, the CPU decoder (runtime/cpu_decoder.h) timed kernel by kernel
// into the host collector, and the --check replay against FP32 experts.
#ifndef QPROF_RUNTIME_CPU_BACKEND_H_
#define QPROF_RUNTIME_CPU_BACKEND_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/decode_backend.h"
#include "runtime/model_weights.h"
#include "runtime/run.h"

namespace qprof::runtime {

// Always ready; runs tp 1 only (InvalidArgument otherwise).
std::unique_ptr<DecodeBackend> MakeCpuBackend();

// Replays `inputs[s]` (the tokens fed at step s of a run with `options`) through the CPU
// decoder on `weights` and compares its logits and greedy tokens with `logits[s]` and
// `tokens[s]`. `fp32_experts`: experts in FP32 from the unquantized synthetic weights (the
// --check reference); else the CPU backend's own quantized kernels (what a GPU run must
// reproduce).
absl::StatusOr<CheckResult> ReplayOnCpu(const ModelWeights& weights, const RunOptions& options,
                                        bool fp32_experts,
                                        const std::vector<std::vector<int32_t>>& inputs,
                                        const std::vector<std::vector<float>>& logits,
                                        const std::vector<std::vector<int32_t>>& tokens);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CPU_BACKEND_H_
