// The backends `qprof run` has in a CUDA build (cli/decode_backends.h), for tests that run
// RunOptions with backend "cuda" or "auto": the CUDA backend first, then the CPU.
#ifndef QPROF_TESTS_RUNTIME_CUDA_BACKENDS_H_
#define QPROF_TESTS_RUNTIME_CUDA_BACKENDS_H_

#include <memory>
#include <utility>
#include <vector>

#include "runtime/cpu_backend.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/decode_backend.h"

namespace qprof::testing {

inline absl::StatusOr<std::vector<runtime::RunResult>> RunBatchesOnBackends(
    const runtime::RunOptions& o, const std::vector<int>& batches) {
  const std::unique_ptr<runtime::DecodeBackend> gpu = runtime::cuda::MakeCudaBackend();
  const std::unique_ptr<runtime::DecodeBackend> cpu = runtime::MakeCpuBackend();
  return runtime::RunOnBackends({gpu.get(), cpu.get()}, o, batches);
}

inline absl::StatusOr<runtime::RunResult> RunOnBackends(const runtime::RunOptions& o) {
  auto r = RunBatchesOnBackends(o, {o.batch});
  if (!r.ok()) return r.status();
  return std::move((*r)[0]);
}

}  // namespace qprof::testing

#endif  // QPROF_TESTS_RUNTIME_CUDA_BACKENDS_H_
