// The work of one kernel launch, from the operator call that launched it (its launch
// context, proto LaunchContext): resolved once per distinct (stack, kernel lists, kernel
// name) of a trace by the aggregation, never per launch.
//
// Which op:
//  - an MoE layer op (moe_work.h: IsMoeOp) anywhere among the stack's cpu_op frames, when
//    it is the innermost or the outermost of them: its work needs the model's shape, so
//    the launch carries the call's token count (needs_model) and ApplyModelShape fills
//    flops and bytes at analysis time (`--model-shape`); never on nsys traces, which do not
//    say which kernels one call launched;
//  - else the innermost cpu_op frame (Kineto, record_shapes=True), or the innermost NVTX
//    frame named the emit_nvtx way ("aten::mm, seq = 3, sizes = [[...]]"; dtypes from the
//    kernel name), when its op has a rule (op_work.h).
//  Kernels run from a CUDA graph carry work only when paired with their capture-time
//  launch (LaunchContext.graph_capture: the stack and the per-call kernel lists are the
//  capture's op calls, importers/common/graph_capture.h), exactly as an eager kernel with
//  that context would; the work says so (from_capture). Unpaired replay kernels have the
//  graph launch's context (the replay loop) and carry none, unless the layer order gave
//  them a modelled op call (LaunchContext.modelled_stack: a "model_layer" frame naming the
//  layer and the op call the model gives it, importers/common/layer_model.h): its work,
//  labelled modelled.
// The step: attention ops whose key lengths are not in their shapes (op_work.h:
// kStepAttention, varlen prefill) take the step's sums from the innermost iteration
// annotation on the stack (iteration_annotation.h: a user annotation such as vLLM's
// "execute_32_context_0(...)_generation_32(...)"), or from `step` when the caller knows the
// step another way (a graph replay's step annotation); `step` wins.
// Which kernel: "the work goes to the kernel that does it". Helper kernels (memsets,
// fills, split-K reductions, layout conversions, epilogues, combines, routing, activation
// and quantisation kernels: IsHelperKernel) of a GEMM, convolution, attention or MoE call
// get none; the call's work is split evenly over the other kernels it launched, counted
// from the per-call kernel list the importer recorded (LaunchContext.op_kernels /
// outer_op_kernels; an MoE call's workers are its non-helper kernels whose own innermost op
// has no rule: a shared expert's aten::mm inside the call keeps its own work). Every kernel
// of a memory-bound op is a worker. Without a kernel list
// (nsys), a worker kernel gets the whole call's work: one worker per call is assumed, and
// the description says so.
#ifndef QPROF_ANALYSIS_WORK_LAUNCH_WORK_H_
#define QPROF_ANALYSIS_WORK_LAUNCH_WORK_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/work/iteration_annotation.h"
#include "analysis/work/model_shape.h"
#include "analysis/work/op_work.h"
#include "proto/trace.pb.h"

namespace qprof::work {

// Where a launch's work came from (KernelRow.work_source begins with it).
// The kind of the frame that names a modelled op call's layer (LaunchContext.modelled_stack).
inline constexpr char kModelLayerFrame[] = "model_layer";

namespace work_source {
inline constexpr char kShapes[] = "derived from shapes";
inline constexpr char kCaptureShapes[] = "derived from shapes at graph capture";
inline constexpr char kModelledLayers[] = "modelled from config and layer order";
inline constexpr char kModel[] = "modelled from --model-shape";
inline constexpr char kRegistry[] = "registry work model";
}  // namespace work_source

// One launch's share of its call's work.
struct LaunchWork {
  OpWork work;                // already scaled by `share` (flops, bytes, weight_bytes)
  double share = 1;           // of the call's work
  bool from_capture = false;  // a graph-replayed kernel: the op call is its capture's
  // A graph-replayed kernel with no capture: the linear layer of --model-shape it was
  // mapped to by the layer order ("self_attn.qkv_proj", layer_model.h); "" otherwise.
  std::string modelled;
  uint32_t workers = 0;       // worker launches of the call; 0 = not recorded (assumed 1)
  // MoE calls: filled by ApplyModelShape.
  bool needs_model = false;
  double moe_tokens = 0;
  double moe_hidden = 0;      // the call's hidden size, checked against the model's
  double activation_bytes = 0;
  bool moe_shared = false;
  std::string moe_op;
  // A key equal for equal work: what groups launches of one kernel row.
  std::string Key() const;
  // "aten::addmm [8944,1024]x[1024,1024]+[1024] bf16" plus the share when below 1.
  std::string Describe() const;
};

enum class LaunchOutcome { kNone, kWork, kInvalid };

struct LaunchWorkResult {
  LaunchOutcome outcome = LaunchOutcome::kNone;
  LaunchWork work;
  std::string error;          // kInvalid
};

LaunchWorkResult ResolveLaunchWork(const proto::LaunchContextStats& tables,
                                   const proto::LaunchContext& ctx, std::string_view kernel,
                                   const IterationAnnotation* step = nullptr);

// Fills an MoE launch's flops and bytes from the model; an error when the shape does not
// fit the call (its hidden size differs, the model has no experts).
absl::Status ApplyModelShape(const ModelShape& m, LaunchWork* w);

bool IsHelperKernel(std::string_view kernel);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_LAUNCH_WORK_H_
