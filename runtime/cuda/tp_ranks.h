// The ranks of one CUDA decode run: one CudaDecoder per GPU, each holding its weight slice
// (runtime/tp_partition.h), with NCCL communicators from ncclCommInitAll (single process,
// GPUs 0..N-1). Step runs every rank on its own host thread (cudaSetDevice(r), its own
// stream) and returns rank 0's tokens. tp = 1 is a plain CudaDecoder: no threads, no NCCL.
// No CUDA or NCCL types here.
#ifndef QPROF_RUNTIME_CUDA_TP_RANKS_H_
#define QPROF_RUNTIME_CUDA_TP_RANKS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/model_weights.h"

namespace qprof::runtime {

// Number of CUDA devices visible to this process (0 on error).
int VisibleCudaDevices();

class TpRanks {
 public:
  // `full` must outlive the object. Validates tp against the model (ValidateTensorParallel)
  // and the visible GPUs ("--tp 8 needs 8 GPUs, found 1"); Unimplemented when the build
  // has no NCCL and tp > 1.
  static absl::StatusOr<std::unique_ptr<TpRanks>> Create(const ModelWeights& full,
                                                         const CudaDecoderOptions& options,
                                                         int tp);
  ~TpRanks();

  // One decode step on every rank; `next` is rank 0's tokens. After a rank fails, the
  // others are unblocked by aborting the communicators (a peer would otherwise wait in
  // the all-reduce forever) and the first failure is returned.
  absl::Status Step(int step, const std::vector<int32_t>& tokens, std::vector<int32_t>* next);

  int tp() const { return static_cast<int>(decoders_.size()); }
  // Steps in which some rank's tokens differed from rank 0's (expected 0: the all-reduce
  // leaves the same hidden state on every rank).
  int token_mismatch_steps() const { return mismatch_steps_; }
  size_t device_bytes() const;  // summed over ranks
  size_t cache_bytes() const;   // summed over ranks (the latent KV cache is replicated)

 private:
  struct Comms;
  TpRanks();
  std::unique_ptr<Comms> comms_;
  std::vector<ModelWeights> slices_;  // tp > 1: each rank's weights (decoders reference them)
  std::vector<std::unique_ptr<CudaDecoder>> decoders_;
  int mismatch_steps_ = 0;
};

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CUDA_TP_RANKS_H_
