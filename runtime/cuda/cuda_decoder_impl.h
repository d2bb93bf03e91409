// CudaDecoder's state, shared by its two source files: cuda_decoder.cc (creation, buffers,
// the step, the launch list) and cuda_decoder_ops.cc (each op of the step description as
// CUDA launches). Internal to runtime/cuda.
#ifndef QPROF_RUNTIME_CUDA_CUDA_DECODER_IMPL_H_
#define QPROF_RUNTIME_CUDA_CUDA_DECODER_IMPL_H_

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/common/params.h"
#include "kernels/mla/params.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "kernels/moe/params.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/step_graph.h"

namespace qprof::runtime::cuda {

struct CudaDecoder::Impl {
  // The model: weights on the device (`m`), or none for a launch list (w == nullptr).
  ModelArch c;
  kernels::Fp4Format format = kernels::Fp4Format::kMxfp4;
  int layers = 0;
  const ModelWeights* w = nullptr;
  CudaDecoderOptions o;
  TpSlice slice;  // this rank's share (tp 1: the whole model)
  const kernels::cuda::MoeCudaPath* path = nullptr;
  bool mla_tensor = false;  // the registry's MLA choice: tensor cores (else SIMT)
  std::shared_ptr<const DeviceModel> m;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t graph = nullptr;
  CudaGraphInfo graph_info;
  std::vector<void*> allocations;
  size_t bytes = 0, cache_bytes = 0;
  int64_t upload_ns = 0, caches_ns = 0;
  int B = 0, stride = 0, out_topk = 0;
  std::vector<uint16_t*> kv, ikey;  // [layer] device caches
  // Device scratch (same roles as CpuDecoder's).
  float *x = nullptr, *h = nullptr, *qa = nullptr, *q = nullptr, *kv_new = nullptr,
        *iq = nullptr, *ik = nullptr, *iw = nullptr, *attn = nullptr, *oa = nullptr,
        *router = nullptr, *scores = nullptr, *logits = nullptr, *topk_w = nullptr,
        *shared_w = nullptr;
  int32_t *tokens = nullptr, *positions = nullptr, *lens = nullptr, *indices = nullptr,
          *topk_ids = nullptr, *shared_ids = nullptr, *next = nullptr;
  int32_t* local_ids = nullptr;  // tp > 1: topk_ids of this rank's experts, others -1
  void* moe_ws = nullptr;
  size_t moe_ws_bytes = 0;
  void* mla_ws = nullptr;  // split-K partials of the tensor-core MLA (small batches)
  size_t mla_ws_bytes = 0;
  std::vector<int32_t> base_lens;
  const PollFn* poll = nullptr;  // of the step in progress (all-reduces wait with it)

  // Shapes and kernels without touching a device (Create and LaunchList).
  absl::Status Configure(const ModelArch& arch, kernels::Fp4Format fmt, int held_layers,
                         const CudaDecoderOptions& options);
  ~Impl();

  bool Tp() const { return slice.tp > 1; }
  bool HasShared() const { return c.n_shared_experts > 0 && slice.shared_inter() > 0; }
  StepDims Dims() const;

  // Params of the step's kernels (device pointers; null before AllocScratch).
  kernels::MoeParams Moe(const DevLayer& L, bool shared) const;
  kernels::SparseMlaParams Mla(int layer) const;
  kernels::IndexerParams Indexer(int layer) const;
  // Whether the tensor-core MLA splits its token tiles on a GPU with `sm_count` SMs.
  bool MlaSplits(int sm_count) const;

  // cuda_decoder_ops.cc: one launch of the description as CUDA launches.
  absl::Status Execute(const StepLaunch& l);
  absl::Status Gemm(const StepLaunch& l);
  absl::Status Norm(const StepLaunch& l);
  absl::Status Router(const StepLaunch& l);
  absl::Status LocalExpertIds();
  absl::Status AllReduceX();
  // The device work of one step (everything after the input upload). `ranges`: NVTX
  // ranges (eager) or capture-time marks (graph).
  absl::Status Body(StepRanges* ranges);

  // cuda_decoder.cc: buffers.
  template <typename T>
  absl::Status Alloc(size_t n, T** out);
  template <typename T>
  absl::Status Upload(const std::vector<T>& v, T** out);
  absl::Status CheckShapes() const;
  absl::Status AllocScratch();
  absl::Status FillCaches(const std::vector<int>& context_lengths, uint64_t seed);
};

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_CUDA_DECODER_IMPL_H_
