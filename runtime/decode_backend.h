// Where `qprof run` executes the bundled decode workload. Shaped like profiler/collector.h:
// the interface is here, implementations are made by factories of their own components
// (runtime/cpu_backend.h MakeCpuBackend; runtime/cuda/cuda_backend.h MakeCudaBackend), and
// cli/ lists the ones its build has (cli/decode_backends.h). So runtime/ never links a
// backend it does not run, and nothing here knows whether the build has CUDA.
//
// Contract: Probe() is cheap, never fails and may be called any number of times; RunBatches
// runs one decode per batch size in `batches` on weights built (and, on a GPU, uploaded)
// once, returning results in the order of `batches`. Errors come back as statuses; a
// backend never ends the process.
#ifndef QPROF_RUNTIME_DECODE_BACKEND_H_
#define QPROF_RUNTIME_DECODE_BACKEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/run.h"

namespace qprof::runtime {

class DecodeBackend {
 public:
  enum class Availability {
    kReady,     // can run here
    kAbsent,    // its hardware is not there at all (no GPU): `auto` moves on silently
    kUnusable,  // present but cannot run this build (e.g. no code for the GPU's arch):
                // `auto` moves on and says why in the run's notes
  };
  virtual ~DecodeBackend() = default;
  // The --backend name: "cpu", "cuda".
  virtual std::string name() const = 0;
  // Where it runs, for notes: "the host CPU", "the GPU".
  virtual std::string where() const = 0;
  // Whether this machine can run the backend; when not, why ("no CUDA device: ...").
  virtual Availability Probe(std::string* why) const = 0;
  virtual absl::StatusOr<std::vector<RunResult>> RunBatches(const RunOptions& options,
                                                            const std::vector<int>& batches) = 0;
};

// Runs `options.backend` among `backends`: one of their names, or "auto" (the first that
// is ready, in the order given; when one was skipped as unusable, each result's
// backend_note and trace notes say why). The options are validated against the model
// first, for every batch size, before any backend is probed: a bad option gets the same
// error on every machine, GPU or not. A name that is not among `backends` is
// Unimplemented naming the ones this build has.
absl::StatusOr<std::vector<RunResult>> RunOnBackends(const std::vector<DecodeBackend*>& backends,
                                                     const RunOptions& options,
                                                     const std::vector<int>& batches);

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_DECODE_BACKEND_H_
