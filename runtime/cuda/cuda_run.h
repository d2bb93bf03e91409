// The CUDA backend of the bundled decode runtime (qprof run --backend cuda). No CUDA types
// here: runtime/run.cc calls RunDecodeCuda when the build has CUDA.
//
// Same decode loop and kernel sequence as the CPU backend (runtime/cpu_decoder.h), on one
// stream, weights and caches in device memory, every kernel group inside NVTX v3 ranges
// "decode/step N/layer L/<attn|moe>" (plus "embed" and "head"), timed by the CUPTI
// collector (profiler/cupti). Optional CUDA graph: step 0 runs eagerly (module load,
// attribute setup), step 1 is captured and every later step replays the graph (one range
// "decode/step N/graph" per replay, since NVTX does not replay).
// Tensor parallel (--tp N > 1): one GPU and host thread per rank, weights split as in
// runtime/tp_partition.h, NCCL all-reduces (runtime/cuda/tp_ranks.h); tokens are rank 0's.
// FailedPrecondition "--tp N needs N GPUs, found M" on a smaller machine.
#ifndef QPROF_RUNTIME_CUDA_CUDA_RUN_H_
#define QPROF_RUNTIME_CUDA_CUDA_RUN_H_

#include <string>

#include "absl/status/statusor.h"
#include "runtime/run.h"

namespace qprof::runtime {

// True when the CUDA runtime sees at least one device; otherwise false with the reason
// (e.g. "CUDA driver version is insufficient for CUDA runtime version").
bool CudaDevicePresent(std::string* why);

// "sm_90" style name of device 0's architecture, or "" without a device.
std::string CudaDeviceArch();

// RunDecode with backend "cuda". FailedPrecondition "no CUDA device: <reason>" without a
// GPU; InvalidArgument when the model's shapes do not fit the chosen kernels.
absl::StatusOr<RunResult> RunDecodeCuda(const RunOptions& options);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CUDA_CUDA_RUN_H_
