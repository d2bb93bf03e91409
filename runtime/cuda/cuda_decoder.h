// The CUDA decode engine behind RunDecodeCuda: device copies of the weights and caches, and
// one decode step as the same kernel sequence as CpuDecoder (runtime/cpu_decoder.h). No
// CUDA types in this header (pimpl).
#ifndef QPROF_RUNTIME_CUDA_CUDA_DECODER_H_
#define QPROF_RUNTIME_CUDA_CUDA_DECODER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/model_weights.h"
#include "runtime/tp_partition.h"

namespace qprof::runtime {

struct CudaDecoderOptions {
  std::vector<int> context_lengths;  // prompt length per sequence (batch = size)
  int max_steps = 0;                 // cache rows reserved beyond the prompt
  std::string moe_backend;           // slot_gemv | w4a16_mma | fp4_mma
  bool mla_tensor = true;            // sparse MLA on tensor cores (else SIMT)
  uint64_t seed = 1;                 // prompt cache contents (as CpuDecoder)
  bool cuda_graph = false;
  // Tensor parallel (runtime/tp_partition.h): the weights given to Create are this rank's
  // slice (SliceWeights); after attention and after the MoE the hidden state is summed
  // over ranks with `nccl_comm` (an ncclComm_t; required when tp.tp > 1, owned by the
  // caller) inside the NVTX range "comm". tp.tp == 1: the whole model, no NCCL.
  TpSlice tp;
  void* nccl_comm = nullptr;
  int device = 0;  // CUDA device of this decoder (set before every call into it)
};

class CudaDecoder {
 public:
  // Uploads weights, fills the prompt caches; InvalidArgument when a kernel cannot take
  // the model's shapes (checked before any allocation).
  static absl::StatusOr<std::unique_ptr<CudaDecoder>> Create(const ModelWeights& weights,
                                                             const CudaDecoderOptions& options);
  ~CudaDecoder();

  // One decode step; blocks until `logits` [B, vocab] and `next` [B] are on the host.
  // `logits` may be null (not copied: tensor-parallel ranks other than 0).
  absl::Status Step(int step, const std::vector<int32_t>& tokens, std::vector<float>* logits,
                    std::vector<int32_t>* next);

  size_t device_bytes() const;
  size_t cache_bytes() const;

 private:
  struct Impl;
  explicit CudaDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CUDA_CUDA_DECODER_H_
