// The CUDA backend of the bundled decode runtime (qprof run --backend cuda), made by
// MakeCudaBackend() and chosen in cli/ (cli/decode_backends.h). No CUDA types here.
//
// Same decode loop and kernel sequence as the CPU backend (runtime/decode_step.h), on one
// stream, weights and caches in device memory, every kernel group inside NVTX v3 ranges
// "decode/step N/layer L/<attn|comm|moe>" (plus "embed" and "head"), timed by the CUPTI
// collector (profiler/cupti). Each kernel record then gets the work model of its launch
// in the decode plan (runtime/work_join.h), so a GPU trace reports achieved bandwidth,
// rooflines and format ceilings like a CPU or modelled one. Optional CUDA graph: step 0
// runs eagerly (module load, attribute setup), step 1 is captured and every later step
// replays the graph (range "decode/step N/graph" at launch; after the run every replayed
// record gets the range it was captured in: runtime/cuda/host/graph_paths.h; the ranges are
// pushed while capturing too, so a CUPTI-based profiler of this process, `qprof record`
// included, sees them: profiler/cupti/capture_paths.h).
// Timing: tokens/s counts the steady-state steps only; the warm-up steps (step 0, and step
// 1 with a graph) are recorded per step but left out (RunInfo.warmup_steps).
// Tensor parallel (--tp N > 1): one GPU and host thread per rank, weights split as in
// runtime/tp_partition.h, all-reduces over NCCL (runtime/cuda/tp_ranks.h); tokens are
// rank 0's. FailedPrecondition "--tp N needs N GPUs, found M" on a smaller machine.
#ifndef QPROF_RUNTIME_CUDA_CUDA_BACKEND_H_
#define QPROF_RUNTIME_CUDA_CUDA_BACKEND_H_

#include <memory>
#include <string>

#include "runtime/decode_backend.h"

namespace qprof::runtime::cuda {

// Probe(): kAbsent "no CUDA device: <reason>" without a GPU, kUnusable when GPU 0 cannot
// run this build's kernels (runtime/cuda/device_probe.h). RunBatches: the options are
// validated before the device is looked for; then FailedPrecondition "no CUDA device:
// <reason>" without a GPU, or the architecture mismatch; InvalidArgument when the model's
// shapes do not fit the chosen kernels. --check compares with the CPU backend on the same
// weights (RunResult.check_vs_cpu) and with FP32 experts (RunResult.check).
std::unique_ptr<DecodeBackend> MakeCudaBackend();

// True when the CUDA runtime sees at least one device; otherwise false with the reason
// (e.g. "CUDA driver version is insufficient for CUDA runtime version").
bool CudaDevicePresent(std::string* why);

// "sm_90" style name of device 0's architecture, or "" without a device.
std::string CudaDeviceArch();

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_CUDA_BACKEND_H_
