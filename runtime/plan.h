// The decode plan: the kernel sequence of one decode step (all layers), with shapes and
// work models from the kernel registry, built from a model config without weights (so
// v4-flash plans instantly). The CPU runtime launches the same sequence with the same
// names, range paths and shapes (runtime/decode_step.cc), so a modelled trace built from
// the plan and a measured one line up kernel by kernel.
//
// Range paths: "decode/step N/embed", "decode/step N/layer L/attn",
// "decode/step N/layer L/comm" (tp > 1), "decode/step N/layer L/moe", "decode/step N/head".
// The plan is for step 0.
// Under tensor parallelism tp the shapes are rank 0's, as the CUDA runtime slices them
// (runtime/tp_shape.h): heads / tp, routed experts / tp (each whole), the shared expert's
// columns / tp (or all of them on rank 0), the LM head whole on every rank, the expert-id
// remap, and an FP32 all-reduce after attention and after the MoE under ".../comm".
// tests/runtime/plan_facts_test.cc holds the plan to the runtime's facts.
#ifndef QPROF_RUNTIME_PLAN_H_
#define QPROF_RUNTIME_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/plan.pb.h"
#include "runtime/model_arch.h"
#include "runtime/run.h"

namespace qprof::runtime {

inline constexpr uint32_t kNoLayer = 0xFFFFFFFFu;

// Context length of each sequence at the start of decode: spread evenly from `context`
// (sequence 0) down to context/2 (the last), so sequences differ as in real serving.
std::vector<int> ContextLengths(int context, int batch);

// Everything about RunOptions that is independent of weights: format, backend names,
// batch, steps, context against max_seq_len, layers, tp against the shapes.
absl::Status ValidateRunOptions(const RunOptions& o, const ModelArch& c);

// Resolved kernel variants of a run.
struct KernelChoice {
  std::string moe_backend;   // slot_gemv | w4a16_mma | fp4_mma
  std::string moe_id;        // registry id, e.g. "moe.slot_gemv.mxfp4"
  std::string mla_id;        // "attn.sparse_mla.simt" | "attn.sparse_mla.mma"
};
KernelChoice ChooseKernels(const RunOptions& o);

// Expected distinct experts hit by `slots` uniform independent picks of top-k from E:
// E * (1 - (1 - k/E)^tokens). A modelling assumption, stated in the plan's notes.
double ExpectedUniqueExperts(int experts, int topk, int tokens);

absl::StatusOr<proto::DecodePlan> PlanDecodeForConfig(const RunOptions& o,
                                                      const ModelArch& c);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_PLAN_H_
