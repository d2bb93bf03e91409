// The CPU decode engine: one decode step for a batch of B sequences, launch by launch of
// the step description (runtime/decode_step.h), each call timed into the host collector
// under the range path the CUDA backend uses ("decode/step N/layer L/attn" ...), named
// with the registry's would-be CUDA kernel name. Each launch's shape comes from the
// description and is checked against the weights held (a drift is an Internal error);
// the data-dependent keys (indexer context and selection, unique experts) are recorded
// with the values this step really had.
//
// The prompt's KV cache is synthetic (seeded rows, like a prefilled cache); prefill is
// not run. In `dense_fp32_experts` mode (the --check reference) the experts run in FP32
// from the unquantized synthetic weights (regenerated on demand); everything else is
// identical, so the difference to a quantized run is the FP4 error of the experts.
#ifndef QPROF_RUNTIME_CPU_DECODER_H_
#define QPROF_RUNTIME_CPU_DECODER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kernels/common/thread_pool.h"
#include "profiler/host/host_collector.h"
#include "runtime/decode_step.h"
#include "runtime/model_weights.h"

namespace qprof::runtime {

struct DecoderOptions {
  std::vector<int> context_lengths;  // prompt length per sequence (batch = size)
  int max_steps = 0;                 // cache rows reserved beyond the prompt
  std::string moe_kernel_id;         // registry id recorded for routed/shared experts; the
                                     // CPU kernel is its registry stand-in (or itself)
  std::string mla_kernel_id;         // "attn.sparse_mla.simt" or ".mma"
  uint64_t seed = 1;                 // prompt cache contents (and reference experts)
  bool dense_fp32_experts = false;   // reference mode (synthetic weights only)
};

class CpuDecoder {
 public:
  CpuDecoder(const ModelWeights& weights, DecoderOptions options, kernels::ThreadPool* pool);

  // Allocates the caches and fills the prompt rows. Call once before Step.
  absl::Status Init();

  // One decode step: `tokens` [B] in, `logits` [B, vocab] and `next` [B] out. Kernel calls
  // are recorded into `collector` when it is not null.
  absl::Status Step(int step, const std::vector<int32_t>& tokens,
                    profiler::HostCollector* collector, std::vector<float>* logits,
                    std::vector<int32_t>* next);

  int batch() const { return batch_; }
  // Bytes of the KV and index-key caches.
  size_t cache_bytes() const;

 private:
  void Record(profiler::HostCollector* col, const std::string& id,
              const std::map<std::string, int64_t>& shape, int64_t t0, int64_t t1,
              const std::string& cpu_kernel = "");
  template <typename Fn>
  absl::Status Run(profiler::HostCollector* col, const std::string& id,
                   const std::map<std::string, int64_t>& shape, Fn&& fn,
                   const std::string& cpu_kernel = "");
  StepDims Dims() const;
  // One launch of the description (the op's inputs and outputs are the scratch buffers).
  absl::Status Execute(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status Gemm(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status Norm(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status Rope(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status KvAppend(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status Indexer(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status SparseMla(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status Router(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status Experts(const StepLaunch& l, profiler::HostCollector* col);
  absl::Status DenseExperts(int layer, bool shared, const int32_t* ids, const float* wts,
                            int topk);

  const ModelWeights& w_;
  const ModelArch& c_;
  DecoderOptions o_;
  kernels::ThreadPool* pool_;
  int batch_ = 0;
  int stride_ = 0;     // cache rows per sequence
  int out_topk_ = 0;   // width of the indexer's selection
  std::string moe_cpu_kernel_;  // "moe.slot_gemv.<fmt>" or "moe.grouped.<fmt>" (registry)
  bool moe_grouped_ = false;
  std::vector<std::vector<uint16_t>> kv_;     // [layer][B, stride, d_qk]
  std::vector<std::vector<uint16_t>> ikey_;   // [layer][B, stride, index_dim]
  std::vector<int32_t> lens_;                 // cached tokens per sequence (this layer's view)
  std::vector<int32_t> base_lens_;            // cached tokens at the start of the step
  int64_t selected_ = 0;                      // this layer's mean indexer selection
  // The step in progress: its tokens in, logits and greedy tokens out.
  const std::vector<int32_t>* tokens_ = nullptr;
  std::vector<float>* logits_ = nullptr;
  std::vector<int32_t>* next_ = nullptr;
  // Scratch.
  std::vector<float> x_, h_, qa_, q_, kv_new_, iq_, ik_, iw_, attn_, oa_, router_, scores_;
  std::vector<int32_t> positions_, indices_, topk_ids_, shared_ids_;
  std::vector<float> topk_w_, shared_w_, slot_hidden_;
};

// Times fn() and records it (registry metadata, work model of `shape`) into col.
template <typename Fn>
absl::Status CpuDecoder::Run(profiler::HostCollector* col, const std::string& id,
                             const std::map<std::string, int64_t>& shape, Fn&& fn,
                             const std::string& cpu_kernel) {
  const int64_t t0 = profiler::HostNowNs();
  absl::Status s = fn();
  const int64_t t1 = profiler::HostNowNs();
  if (!s.ok()) return s;
  Record(col, id, shape, t0, t1, cpu_kernel);
  return absl::OkStatus();
}

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_CPU_DECODER_H_
