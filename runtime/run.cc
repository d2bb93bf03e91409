// RunDecode: the bundled decode workload on the CPU backend. `qprof run` chooses among
// every backend its build has (cli/decode_backends.h); this entry point is for callers
// that need the host CPU only (tests, benches).
#include "runtime/run.h"

#include <memory>
#include <utility>
#include <vector>

#include "base/status_macros.h"
#include "runtime/cpu_backend.h"
#include "runtime/decode_backend.h"

namespace qprof::runtime {

absl::StatusOr<std::vector<RunResult>> RunDecodeBatches(const RunOptions& options,
                                                        const std::vector<int>& batches) {
  const std::unique_ptr<DecodeBackend> cpu = MakeCpuBackend();
  return RunOnBackends({cpu.get()}, options, batches);
}

absl::StatusOr<RunResult> RunDecode(const RunOptions& options) {
  ASSIGN_OR_RETURN(std::vector<RunResult> r, RunDecodeBatches(options, {options.batch}));
  return std::move(r[0]);
}

}  // namespace qprof::runtime
