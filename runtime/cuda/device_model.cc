#include "runtime/cuda/device_model.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <utility>

#include "base/status_macros.h"
#include "kernels/common/cuda/cuda_status.h"

namespace qprof::runtime::cuda {

absl::Status DeviceModel::Copy(const void* src, size_t bytes, const void** dst) {
  void* p = nullptr;
  // 16 spare bytes: vector loads of the last row may read past its end.
  QPROF_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<size_t>(bytes, 1) + 16));
  allocations_.push_back(p);
  bytes_ += bytes;
  if (bytes > 0) QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice));
  *dst = p;
  return absl::OkStatus();
}

absl::Status DeviceModel::Up(const Bf16Tensor& t, DevBf16* d) {
  d->rows = static_cast<int>(t.rows);
  d->cols = static_cast<int>(t.cols);
  const void* p = nullptr;
  RETURN_IF_ERROR(Copy(t.data.data(), t.data.size() * sizeof(uint16_t), &p));
  d->p = static_cast<const uint16_t*>(p);
  return absl::OkStatus();
}

absl::Status DeviceModel::Up(const Fp4Stack& s, kernels::Fp4Weights* d) {
  const void* p = nullptr;
  RETURN_IF_ERROR(Copy(s.packed.data(), s.packed.size(), &p));
  d->packed = static_cast<const uint8_t*>(p);
  RETURN_IF_ERROR(Copy(s.scales.data(), s.scales.size(), &p));
  d->scales = static_cast<const uint8_t*>(p);
  d->scale2 = nullptr;
  if (!s.scale2.empty()) {
    RETURN_IF_ERROR(Copy(s.scale2.data(), s.scale2.size() * sizeof(float), &p));
    d->scale2 = static_cast<const float*>(p);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const DeviceModel>> DeviceModel::Upload(const ModelWeights& w,
                                                                       int device,
                                                                       bool with_shared) {
  std::shared_ptr<DeviceModel> m(new DeviceModel());
  m->device_ = device;
  m->host_ = &w;
  QPROF_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  RETURN_IF_ERROR(m->Up(w.embed, &m->embed_));
  RETURN_IF_ERROR(m->Up(w.final_norm, &m->final_norm_));
  RETURN_IF_ERROR(m->Up(w.lm_head, &m->lm_head_));
  m->layers_.resize(w.layers);
  for (int l = 0; l < w.layers; ++l) {
    const LayerWeights& h = w.layer[l];
    DevLayer& L = m->layers_[l];
    for (auto [src, dst] : std::vector<std::pair<const Bf16Tensor*, DevBf16*>>{
             {&h.attn_norm, &L.attn_norm}, {&h.wq_a, &L.wq_a}, {&h.q_norm, &L.q_norm},
             {&h.wq_b, &L.wq_b}, {&h.wkv_a, &L.wkv_a}, {&h.kv_norm, &L.kv_norm},
             {&h.wo_a, &L.wo_a}, {&h.wo_b, &L.wo_b}, {&h.wi_q, &L.wi_q}, {&h.wi_k, &L.wi_k},
             {&h.wi_w, &L.wi_w}, {&h.ffn_norm, &L.ffn_norm}, {&h.gate, &L.gate}}) {
      RETURN_IF_ERROR(m->Up(*src, dst));
    }
    RETURN_IF_ERROR(m->Up(h.w13, &L.w13));
    RETURN_IF_ERROR(m->Up(h.w2, &L.w2));
    if (with_shared) {
      RETURN_IF_ERROR(m->Up(h.shared_w13, &L.shared_w13));
      RETURN_IF_ERROR(m->Up(h.shared_w2, &L.shared_w2));
    }
  }
  return std::shared_ptr<const DeviceModel>(std::move(m));
}

DeviceModel::~DeviceModel() {
  // Freed on the device that holds them, whatever thread destroys the model; the
  // caller's current device is restored.
  int previous = -1;
  const bool restore = cudaGetDevice(&previous) == cudaSuccess;
  cudaSetDevice(device_);
  for (void* p : allocations_) cudaFree(p);
  if (restore) cudaSetDevice(previous);
}

}  // namespace qprof::runtime::cuda
