// The modelled run: one decode step of a DecodePlan projected onto a device of the spec
// table, returned as a Trace with provenance MODELLED so that every report, the diff and
// the ceilings read it like a measured one.
//
// Contract:
//  - Input: a DecodePlan (made by runtime/ from a preset or config; kernels are per
//    tensor-parallel rank, each entry's WorkModel is per launch and stands for `launches`
//    launches) and a DeviceSpec. No weights.
//  - Per launch: time = max(bytes / (BW * eff_mem), SIMT work / (FP32 * eff_simt),
//    padded tensor FLOPs / (pipe rate * eff_pipe), all-reduce time) + launch overhead
//    (formulas.h). SIMT work = FLOPs on the SIMT pipe + decode_ops (FP4 elements decoded)
//    * the path's decode cost: simt_decode_flops_per_element on SIMT kernels,
//    mma_decode_flops_per_element on W4A16 MMA kernels (overlapped with the MMA), none on
//    native FP4 MMA.
//  - Kernels run back to back on one stream of rank 0 from t = 0 (no overlap, no
//    communication/compute overlap); every rank is assumed to run the same schedule, so
//    the step time of rank 0 is the step time and tokens/s = batch / step time.
//  - The Trace carries: header.provenance = MODELLED, source_kind "model", run info from
//    the plan (backend "model", steps 1, tokens = batch, wall time = step time), one
//    DeviceInfo of kind "modelled", every assumption in header.notes, per activity the
//    plan's work model, attribution with evidence "modelled", and the terms of the time
//    in args ("model.bound", "model.memory_ns", ...), and NVTX ranges built from the
//    kernels' paths.
//  - Errors: FailedPrecondition naming the target when a kernel needs a pipe the device
//    lacks (fp4_mma on an H200), or when tp > 1 and the device has no interconnect figure;
//    InvalidArgument for an empty plan or a non-positive batch.
#ifndef QPROF_ANALYSIS_MODEL_DECODE_MODEL_H_
#define QPROF_ANALYSIS_MODEL_DECODE_MODEL_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/devices/device_specs.h"
#include "analysis/model/calibration_data.h"
#include "analysis/model/formulas.h"
#include "analysis/model/parameters.h"
#include "proto/plan.pb.h"
#include "proto/trace.pb.h"

namespace qprof::model {

// The model's view of one plan entry (per launch) and why it takes that long.
struct KernelEstimate {
  int plan_index = 0;
  std::string kernel_id;
  std::string name;
  std::string role;
  std::string pipe_class;
  std::string compute_pipe;
  uint32_t launches = 1;
  double simt_work_flops = 0;     // FLOPs on SIMT + decode FLOP-equivalents, per launch
  double tensor_work_flops = 0;   // padded tensor FLOPs, per launch
  double tensor_padding = 1;      // padded / useful tensor FLOPs
  double tensor_peak_ns = 0;      // padded tensor FLOPs at the pipe's datasheet peak
  // Latency and issue terms (when the plan states the launch shape):
  uint64_t blocks = 0;            // working blocks (after any split)
  uint32_t threads_per_block = 0;
  int registers = 0;              // from the build's kernel facts, 0 when unknown
  int active_blocks_per_sm = 0;   // occupancy rules on the target
  double bytes_in_flight = 0;     // device-wide
  double mlp_gbps = 0;            // bytes in flight / latency (0 = no bound)
  double issue_slots_per_fma = 0; // static SASS, 0 when unknown
  std::string launch_note;        // what the latency / issue terms used
  KernelTime time;                // per launch
};

struct ModelResult {
  proto::Trace trace;
  std::vector<KernelEstimate> kernels;
  double step_ns = 0;             // one decode step on one rank
  double tokens_per_s = 0;        // batch / step time (all ranks together)
};

// Defaults for a target: DefaultModelParameters(), the device's launch overhead when the
// spec table has one, then any fitted values stored for the device (calibration_data.h).
ModelParameters ParametersForTarget(const devices::DeviceSpec& target);

// Replaces parameters by stored fits; each source then cites the device, the date and the
// measured trace. A fit naming an unknown parameter or out of range is skipped.
void ApplyFittedParameters(ModelParameters& params, const std::vector<FittedParameter>& fits);

absl::StatusOr<ModelResult> ModelDecodeStep(const proto::DecodePlan& plan,
                                            const devices::DeviceSpec& target,
                                            const ModelParameters& params);

// The per-launch estimate of one planned kernel (exposed for tests and calibration).
absl::StatusOr<KernelEstimate> EstimateKernel(const proto::PlannedKernel& kernel,
                                              int tp, const devices::DeviceSpec& target,
                                              const ModelParameters& params);

}  // namespace qprof::model

#endif  // QPROF_ANALYSIS_MODEL_DECODE_MODEL_H_
