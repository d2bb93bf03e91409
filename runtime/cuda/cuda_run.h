// The CUDA backend of the bundled decode runtime (qprof run --backend cuda). No CUDA types
// here: runtime/run.cc calls RunDecodeCudaBatches when the build has CUDA.
//
// Same decode loop and kernel sequence as the CPU backend (runtime/cpu_decoder.h), on one
// stream, weights and caches in device memory, every kernel group inside NVTX v3 ranges
// "decode/step N/layer L/<attn|comm|moe>" (plus "embed" and "head"), timed by the CUPTI
// collector (profiler/cupti). Optional CUDA graph: step 0 runs eagerly (module load,
// attribute setup), step 1 is captured and every later step replays the graph (range
// "decode/step N/graph" at launch; after the run every replayed record gets the range it
// was captured in: runtime/cuda/host/graph_paths.h).
// Timing: tokens/s counts the steady-state steps only; the warm-up steps (step 0, and step
// 1 with a graph) are recorded per step but left out (RunInfo.warmup_steps).
// Tensor parallel (--tp N > 1): one GPU and host thread per rank, weights split as in
// runtime/tp_partition.h, all-reduces over NCCL (runtime/cuda/tp_ranks.h); tokens are
// rank 0's. FailedPrecondition "--tp N needs N GPUs, found M" on a smaller machine.
#ifndef QPROF_RUNTIME_CUDA_CUDA_RUN_H_
#define QPROF_RUNTIME_CUDA_CUDA_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/run.h"

namespace qprof::runtime {

// True when the CUDA runtime sees at least one device; otherwise false with the reason
// (e.g. "CUDA driver version is insufficient for CUDA runtime version").
bool CudaDevicePresent(std::string* why);

// True when GPU 0 is present and can run this build's kernels (runtime/cuda/
// device_probe.h); otherwise false with the reason ("no CUDA device: ..." or the
// architecture mismatch).
bool CudaBackendUsable(std::string* why);

// "sm_90" style name of device 0's architecture, or "" without a device.
std::string CudaDeviceArch();

// RunDecodeBatches with backend "cuda". FailedPrecondition "no CUDA device: <reason>"
// without a GPU, or the architecture mismatch; InvalidArgument when the model's shapes do
// not fit the chosen kernels. --check compares with the CPU backend on the same weights
// (RunResult.check_vs_cpu) and with FP32 experts (RunResult.check).
absl::StatusOr<std::vector<RunResult>> RunDecodeCudaBatches(const RunOptions& options,
                                                            const std::vector<int>& batches);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CUDA_CUDA_RUN_H_
