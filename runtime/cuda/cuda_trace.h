// The header and work models of a CUDA backend trace, after the CUPTI collector flushed
// its records: RunInfo (as every backend writes it), the CUDA notes and extras, and the
// decode step's work joined onto the kernel records (runtime/work_join.h). No CUDA calls,
// so tests finish a trace of fabricated CUPTI records exactly as the backend does.
#ifndef QPROF_RUNTIME_CUDA_CUDA_TRACE_H_
#define QPROF_RUNTIME_CUDA_CUDA_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/trace.pb.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/decode_loop.h"
#include "runtime/work_join.h"

namespace qprof::runtime::cuda {

// What the CUDA backend knows about a batch besides the decode loop.
struct CudaRunFacts {
  std::vector<int> devices;          // GPU of each rank
  std::string all_reduce_name;       // tp > 1: "NCCL <version> (<path>)" or "host"
  int token_mismatch_steps = 0;      // tp > 1: steps where a rank's tokens differ
  uint64_t device_bytes = 0;         // summed over ranks
  CudaGraphInfo graph;               // rank 0's (capture and instantiation)
};

// Leading steps left out of tokens/s: step 0 loads modules lazily; with a graph, step 1
// captures and instantiates it. Too few steps: everything is timed (and a note says so).
int CudaWarmupSteps(const RunOptions& options);

// Fills `trace` (records as flushed, graph replays already given their ranges): provenance,
// RunInfo (FillRunInfo with facts.warmup_steps steps left out), `setup`, the CUDA extras and
// notes, and every kernel record's work model from `launches` (each step's expected
// kernels). The join's figures go into a note.
absl::Status FinishCudaTrace(const RunOptions& options, const ModelArch& arch,
                             const ModelWeights& weights, const DecodeLoop& loop,
                             const RunFacts& facts, const CudaRunFacts& cuda,
                             const proto::RunSetup& setup, const StepKernelsFn& launches,
                             proto::Trace* trace);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_CUDA_TRACE_H_
