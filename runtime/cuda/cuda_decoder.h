// The CUDA decode engine behind the CUDA backend: per-batch caches and scratch on one GPU,
// the weights from a DeviceModel (shared across batch sizes), and one decode step: the
// step description (runtime/decode_step.h) launch by launch, each op by its CUDA kernels,
// as the CPU decoder runs the same description with CPU kernels. LaunchList gives the
// kernels of a step without a GPU. No CUDA types in this header (pimpl; streams travel as
// void*).
#ifndef QPROF_RUNTIME_CUDA_CUDA_DECODER_H_
#define QPROF_RUNTIME_CUDA_CUDA_DECODER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/registry/registry.h"
#include "runtime/cuda/device_model.h"
#include "runtime/cuda/host/graph_paths.h"
#include "runtime/decode_step.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/tp_partition.h"
#include "runtime/work_join.h"

namespace qprof::runtime::cuda {

// Called while a rank waits on the device (between cudaStreamQuery polls): non-OK means
// give up now (RankGroup::Waiter::Poll). Empty: wait without polling.
using PollFn = std::function<absl::Status()>;

// Sums `n` floats of device memory over the tensor-parallel ranks, in place: enqueued on
// `stream` (a cudaStream_t) for NCCL, or done before returning (host all-reduce); `poll`
// while waiting.
using AllReduceFn =
    std::function<absl::Status(float* device_buffer, size_t n, void* stream, const PollFn& poll)>;

struct CudaDecoderOptions {
  std::vector<int> context_lengths;  // prompt length per sequence (batch = size)
  int max_steps = 0;                 // cache rows reserved beyond the prompt
  KernelChoice choice;               // the registry's variants (runtime/plan.h ChooseKernels)
  uint64_t seed = 1;                 // prompt cache contents (as CpuDecoder)
  bool cuda_graph = false;
  // Tensor parallel (runtime/tp_partition.h): the weights are this rank's slice
  // (SliceWeights); after attention and after the MoE the hidden state is summed over
  // ranks with `all_reduce` (required when tp.tp > 1) inside the range "comm".
  TpSlice tp;
  AllReduceFn all_reduce;
  bool all_reduce_capturable = true;  // false: a host all-reduce, no CUDA graph
  int device = 0;  // CUDA device of this decoder (set before every call into it)
  // Weights already on `device` (a batch sweep shares them); null: uploaded by Create.
  std::shared_ptr<const DeviceModel> model;
};

// What a CUDA-graph run spent on the graph, and the range of each captured node.
struct CudaGraphInfo {
  int64_t capture_ns = 0;
  int64_t instantiate_ns = 0;
  int nodes = 0;
  // One entry per node of the captured chain with the range it was captured in; empty
  // when the graph was not a single chain (then replays keep ".../graph").
  std::vector<CapturedNode> chain;
  std::string chain_note;  // why `chain` is empty, if it is
};

class CudaDecoder {
 public:
  // The launches of one decode step (`step`: the cached tokens have grown by it) of a
  // decoder with `options` for a model `arch` of which `layers` are held, on a GPU with
  // `sm_count` SMs, made without a GPU: each call of the step description with the CUDA
  // kernels Step launches for it, in order (the registry's cuda_launches of its variant,
  // with the decoder's conditions resolved: the MLA combine when it splits the token
  // tiles, the all-reduce kernel when it all-reduces over NCCL).
  static absl::StatusOr<std::vector<StepKernels>> LaunchList(const ModelArch& arch,
                                                             kernels::Fp4Format format, int layers,
                                                             const CudaDecoderOptions& options,
                                                             int step, int sm_count);
  // LaunchList of this decoder (its model, options and GPU).
  absl::StatusOr<std::vector<StepKernels>> Launches(int step) const;

  // Uploads weights unless options.model holds them, fills the prompt caches;
  // InvalidArgument when a kernel cannot take the model's shapes (checked before any
  // allocation).
  static absl::StatusOr<std::unique_ptr<CudaDecoder>> Create(const ModelWeights& weights,
                                                             const CudaDecoderOptions& options);
  ~CudaDecoder();

  // One decode step; returns once `next` [B] (and `logits` [B, vocab] when not null) are
  // on the host. Pass `logits` only when something reads them: the copy is B x vocab x 4
  // bytes per step (33 MB for v4-flash at batch 64). `poll`: see PollFn.
  absl::Status Step(int step, const std::vector<int32_t>& tokens, std::vector<float>* logits,
                    std::vector<int32_t>* next, const PollFn& poll = PollFn());

  const std::shared_ptr<const DeviceModel>& model() const;
  const CudaGraphInfo& graph_info() const;
  int device() const;
  size_t device_bytes() const;  // weights + caches + scratch of this decoder
  size_t cache_bytes() const;
  int64_t upload_ns() const;    // weights copied by Create (0 when shared)
  int64_t caches_ns() const;    // prompt caches built and copied by Create

 private:
  struct Impl;
  explicit CudaDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_CUDA_DECODER_H_
