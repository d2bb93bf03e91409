// Device copies of one rank's weights on one GPU, uploaded once and shared (shared_ptr)
// by the decoders of every batch size of a run (qprof run --batch 1,16,64 builds and
// uploads the weights once per format), freed on their own device. No CUDA types here.
#ifndef QPROF_RUNTIME_CUDA_DEVICE_MODEL_H_
#define QPROF_RUNTIME_CUDA_DEVICE_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/moe/params.h"
#include "runtime/model_weights.h"

namespace qprof::runtime::cuda {

struct DevBf16 {
  const uint16_t* p = nullptr;  // device [rows, cols] bf16
  int rows = 0, cols = 0;
};

struct DevLayer {
  DevBf16 attn_norm, wq_a, q_norm, wq_b, wkv_a, kv_norm, wo_a, wo_b, wi_q, wi_k, wi_w,
      ffn_norm, gate;
  kernels::Fp4Weights w13, w2, shared_w13, shared_w2;  // device pointers
};

class DeviceModel {
 public:
  // Copies `w` (this rank's slice) to `device`. `with_shared`: also the shared expert
  // (false when this rank holds no share of it). Blocks until the copies are done.
  static absl::StatusOr<std::shared_ptr<const DeviceModel>> Upload(const ModelWeights& w,
                                                                   int device, bool with_shared);
  ~DeviceModel();
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;

  int device() const { return device_; }
  size_t bytes() const { return bytes_; }
  const ModelWeights& host() const { return *host_; }  // the uploaded weights (must outlive)
  const DevBf16& embed() const { return embed_; }
  const DevBf16& final_norm() const { return final_norm_; }
  const DevBf16& lm_head() const { return lm_head_; }
  const DevLayer& layer(int l) const { return layers_[l]; }

 private:
  DeviceModel() = default;
  absl::Status Copy(const void* src, size_t bytes, const void** dst);
  absl::Status Up(const Bf16Tensor& t, DevBf16* d);
  absl::Status Up(const Fp4Stack& s, kernels::Fp4Weights* d);

  int device_ = 0;
  const ModelWeights* host_ = nullptr;
  size_t bytes_ = 0;
  std::vector<void*> allocations_;
  DevBf16 embed_, final_norm_, lm_head_;
  std::vector<DevLayer> layers_;
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_DEVICE_MODEL_H_
