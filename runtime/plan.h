// The decode plan: the kernel sequence of one decode step (all layers), with shapes and
// work models from the kernel registry, built from a model config without weights (so
// v4-flash plans instantly). The sequence is the step description both decoders run
// (runtime/decode_step.h), so a modelled trace built from the plan and a measured one
// line up kernel by kernel.
//
// Range paths: "decode/step N/embed", "decode/step N/layer L/attn",
// "decode/step N/layer L/comm" (tp > 1), "decode/step N/layer L/moe", "decode/step N/head".
// PlanDecode plans step 0; PlanDecodeStep any step (the context has grown by `step`).
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
#include "runtime/decode_step.h"
#include "runtime/model_arch.h"
#include "runtime/run.h"

namespace qprof::runtime {

// Everything about RunOptions that is independent of weights: format, backend names,
// batch, steps, context against max_seq_len, layers, tp against the shapes.
absl::Status ValidateRunOptions(const RunOptions& o, const ModelArch& c);

// Resolved kernel variants of a run, by the registry (kernels/registry/dispatch.h).
struct KernelChoice {
  std::string moe_backend;     // the MoE path: slot_gemv | w4a16_mma | fp4_mma
  std::string moe_id;          // registry id, e.g. "moe.slot_gemv.mxfp4"
  std::string mla_id;          // "attn.sparse_mla.simt" | "attn.sparse_mla.mma"
  std::string moe_cpu_kernel;  // what runs the MoE path on the host CPU: the path itself
                               // ("moe.slot_gemv.mxfp4") or its stand-in ("moe.grouped.nvfp4")
  bool moe_grouped() const { return moe_cpu_kernel.rfind("moe.grouped.", 0) == 0; }
};
// `auto` resolves for o.target_arch ("" on the host: the portable choice); a named path
// must have code for a known target arch. InvalidArgument naming the registry's choices.
absl::StatusOr<KernelChoice> ChooseKernels(const RunOptions& o);

// The step description's dimensions for rank `rank` of a run with `o` at decode step
// `step` (the cached tokens have grown by `step`).
absl::StatusOr<StepDims> StepDimsFor(const RunOptions& o, const ModelArch& c,
                                     const KernelChoice& choice, int step, int rank);

absl::StatusOr<proto::DecodePlan> PlanDecodeStep(const RunOptions& o, const ModelArch& c,
                                                 int step);
absl::StatusOr<proto::DecodePlan> PlanDecodeForConfig(const RunOptions& o,
                                                      const ModelArch& c);
// PlanDecodeForConfig with the model of options.model (step 0, weight-free).
absl::StatusOr<proto::DecodePlan> PlanDecode(const RunOptions& options);


}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_PLAN_H_
