// The ranks of one CUDA decode run. tp = 1: one CudaDecoder driven from the calling
// thread, no NCCL. tp > 1: one CudaDecoder per rank, each holding its weight slice
// (runtime/tp_partition.h) on its own GPU and driven from its own persistent thread
// (runtime/cuda/host/rank_group.h: polling waits, aborts from the owning thread, a
// step timeout); the hidden state is summed over ranks with NCCL (opened with dlopen only
// now: runtime/cuda/nccl_comms.h) or, for checks on one GPU, through the host
// (runtime/cuda/host_all_reduce.h). Weights are sliced, uploaded and connected once;
// NewBatch() re-creates only the per-batch decoders, so a batch sweep builds the model
// once. No CUDA or NCCL types here.
#ifndef QPROF_RUNTIME_CUDA_TP_RANKS_H_
#define QPROF_RUNTIME_CUDA_TP_RANKS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/host/rank_group.h"
#include "runtime/cuda/host/tp_fault.h"
#include "runtime/model_weights.h"

namespace qprof::runtime::cuda {

// Number of CUDA devices visible to this process (0 on error).
int VisibleCudaDevices();

struct TpOptions {
  int tp = 1;
  TpEnvironment env;  // devices, host all-reduce, step timeout, fault switch
};

class TpRanks {
 public:
  // `full` must outlive the object. Validates tp against the model and the GPUs ("--tp 8
  // needs 8 GPUs, found 1"), slices and uploads the weights (each rank on its own thread),
  // connects the ranks, and creates the decoders of `options` (the first batch size).
  static absl::StatusOr<std::unique_ptr<TpRanks>> Create(const ModelWeights& full,
                                                         const CudaDecoderOptions& options,
                                                         const TpOptions& tp);
  ~TpRanks();

  // Replaces the decoders by ones for another batch (options.context_lengths) on the same
  // uploaded weights and communicators.
  absl::Status NewBatch(const CudaDecoderOptions& options);

  // One decode step on every rank; `next` is rank 0's tokens, `logits` rank 0's logits
  // (null: not copied). After a failure the ranks have aborted their communicators and
  // every later step returns FailedPrecondition naming the first failure.
  absl::Status Step(int step, const std::vector<int32_t>& tokens, std::vector<int32_t>* next,
                    std::vector<float>* logits = nullptr);

  int tp() const { return tp_; }
  const std::vector<int>& devices() const { return devices_; }
  // Steps in which some rank's tokens differed from rank 0's (expected 0: the all-reduce
  // leaves the same hidden state on every rank).
  int token_mismatch_steps() const { return mismatch_steps_; }
  size_t device_bytes() const;  // summed over ranks
  size_t cache_bytes() const;   // summed over ranks (the latent KV cache is replicated)
  int64_t upload_ns() const { return upload_ns_; }   // weights to the GPUs (Create)
  int64_t caches_ns() const { return caches_ns_; }   // caches of the current batch
  std::string all_reduce_name() const;               // "NCCL <version> (<path>)" or "host"
  const CudaDecoder& rank(int r) const { return *decoders_[r]; }

 private:
  struct Comms;
  TpRanks();
  absl::Status CreateDecoders(const CudaDecoderOptions& options);
  CudaDecoderOptions RankOptions(const CudaDecoderOptions& options, int r) const;

  const ModelWeights* full_ = nullptr;
  int tp_ = 1;
  TpOptions options_;
  std::vector<int> devices_;
  std::vector<TpSlice> slice_;
  std::vector<ModelWeights> slices_;  // tp > 1: each rank's weights (decoders reference them)
  std::vector<std::shared_ptr<const DeviceModel>> models_;  // per rank, shared across batches
  std::unique_ptr<Comms> comms_;
  std::unique_ptr<RankGroup> group_;  // tp > 1
  std::vector<std::unique_ptr<CudaDecoder>> decoders_;
  std::atomic<int> current_step_{-1};
  int mismatch_steps_ = 0;
  int64_t upload_ns_ = 0, caches_ns_ = 0;
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_TP_RANKS_H_
