// Work on every trace: joins the per-kernel work models of the decode step onto the kernel
// records a GPU collector measured (CUPTI), the way per-kernel metrics are joined
// (profiler/cupti/metrics_join.h): by NVTX path and launch order. A measured GPU trace then
// reports achieved bandwidth, rooflines and format ceilings exactly like a CPU run (whose
// records carry their work as they are made) or a modelled one.
//
// The expected launches of a step are the step description's calls, each expanded into the
// CUDA kernels it launches with that kernel's part of the call's work (the registry's
// cuda_launches; the CUDA decoder resolves which optional ones run: CudaDecoder::Launches).
// Records of "decode/step N/<range>" are matched, in launch order, to the expected kernels
// of that range by name; a record whose name is not the next expected kernel is matched to
// a later one of the range (the expected ones skipped are counted missing) or left without
// work (counted unmatched). Shapes the data decides (unique experts, selected tokens) are
// the description's expectations: the trace says so in a note.
#ifndef QPROF_RUNTIME_WORK_JOIN_H_
#define QPROF_RUNTIME_WORK_JOIN_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/registry/registry.h"
#include "proto/trace.pb.h"
#include "runtime/decode_step.h"

namespace qprof::runtime {

// One call of the step description and the CUDA kernels it launches, in order (a subset of
// the registry's cuda_launches of the call's variant: the optional ones that run).
struct StepKernels {
  StepLaunch launch;
  std::vector<const kernels::CudaLaunch*> kernels;
};

// The launches of decode step `step` as the device `device_id` ran them.
using StepKernelsFn =
    std::function<absl::StatusOr<std::vector<StepKernels>>(int step, uint32_t device_id)>;

struct WorkJoinStats {
  uint64_t kernels = 0;    // kernel records under "decode/step N/..."
  uint64_t joined = 0;     // got their launch's work model
  uint64_t unmatched = 0;  // under a step range, but no expected kernel of that name
  uint64_t missing = 0;    // expected kernels no record matched
  uint64_t outside = 0;    // kernel records outside the decode steps
};

// Sets work, kernel_id and (when the record has none) the registry attribution of every
// kernel record it can match. Errors only when `expected` fails.
absl::StatusOr<WorkJoinStats> JoinStepWork(const StepKernelsFn& expected, proto::Trace* trace);

// The step of "decode/step N/..." and the rest of the path ("layer 3/moe"); -1 otherwise.
int DecodeStepOfPath(const std::string& path, std::string* range);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_WORK_JOIN_H_
