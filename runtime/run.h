// Entry point of the bundled decode runtime: run decode steps of a model for one format
// and return the trace the collector recorded. cli/run_command.cc drives it.
#ifndef QPROF_RUNTIME_RUN_H_
#define QPROF_RUNTIME_RUN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/plan.pb.h"
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
};

struct CheckResult {
  double logits_rel_error = 0;       // ||logits - ref|| / ||ref|| over all steps
  double token_agreement = 0;        // fraction of greedy tokens equal to the reference's
  int tokens_compared = 0;
};

struct RunResult {
  proto::Trace trace;                // header.run filled (tokens, wall time), activities timed
  std::vector<std::vector<int32_t>> tokens;  // [step][sequence]
  std::optional<CheckResult> check;
  std::string moe_backend_used;      // what `auto` resolved to
};

absl::StatusOr<RunResult> RunDecode(const RunOptions& options);

// The kernel sequence of one decode step with shapes and work models, without weights.
absl::StatusOr<proto::DecodePlan> PlanDecode(const RunOptions& options);

// The MoE path `auto` picks for a format on an arch (the rule of the user's story):
// mxfp4 -> slot_gemv; nvfp4 -> fp4_mma where native FP4 MMA exists (sm_100a, sm_120a),
// else w4a16_mma.
std::string ResolveMoeBackend(const std::string& format, const std::string& requested,
                              const std::string& arch);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_RUN_H_
