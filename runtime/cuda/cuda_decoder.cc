#include "runtime/cuda/cuda_decoder.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "kernels/registry/dispatch.h"
#include "runtime/cuda/cuda_decoder_impl.h"
#include "runtime/cuda/step_graph.h"
#include "runtime/prompt_cache.h"

namespace qprof::runtime::cuda {
namespace {

namespace kc = kernels::cuda;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Waits for `s` without blocking in the driver when `poll` is given (NCCL's documented
// pattern: a rank whose peer died must be able to give up), else synchronizes.
absl::Status WaitStream(cudaStream_t s, const PollFn& poll) {
  if (!poll) {
    QPROF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
    return absl::OkStatus();
  }
  for (int spins = 0;; ++spins) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return absl::OkStatus();
    if (e != cudaErrorNotReady) return kc::CudaStatus(e, "cudaStreamQuery");
    RETURN_IF_ERROR(poll());
    // Yield while a step is likely to finish soon; past ~1 ms, sleep so a long wait does
    // not hold a core.
    if (spins < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

}  // namespace

CudaDecoder::Impl::~Impl() {
  if (w == nullptr) return;  // a launch list: nothing on a device
  // Freed on this decoder's device whatever thread destroys it (TpRanks may run the
  // destructor on the main thread); the caller's device is restored.
  int previous = -1;
  const bool restore = cudaGetDevice(&previous) == cudaSuccess;
  cudaSetDevice(o.device);
  if (graph) cudaGraphExecDestroy(graph);
  for (void* p : allocations) cudaFree(p);
  if (stream) cudaStreamDestroy(stream);
  if (restore) cudaSetDevice(previous);
}

template <typename T>
absl::Status CudaDecoder::Impl::Alloc(size_t n, T** out) {
  void* p = nullptr;
  QPROF_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T) + 16));
  allocations.push_back(p);
  bytes += n * sizeof(T);
  *out = static_cast<T*>(p);
  return absl::OkStatus();
}

template <typename T>
absl::Status CudaDecoder::Impl::Upload(const std::vector<T>& v, T** out) {
  RETURN_IF_ERROR(Alloc(v.size(), out));
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(*out, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return absl::OkStatus();
}

absl::Status CudaDecoder::Impl::Configure(const ModelArch& arch, kernels::Fp4Format fmt,
                                          int held_layers, const CudaDecoderOptions& options) {
  c = arch;
  format = fmt;
  layers = held_layers;
  o = options;
  B = static_cast<int>(o.context_lengths.size());
  if (B < 1) return absl::InvalidArgumentError("cuda decoder: empty batch");
  const int max_len = *std::max_element(o.context_lengths.begin(), o.context_lengths.end());
  stride = max_len + std::max(o.max_steps, 1);
  out_topk = std::min(stride, c.index_topk + c.window);
  base_lens.assign(o.context_lengths.begin(), o.context_lengths.end());
  // The registry's choice picks the launchers; an unknown name is an error, never a
  // fallback to another path.
  const kernels::KernelInfo* moe = kernels::KernelRegistry::Global().Find(o.choice.moe_id);
  if (moe == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda decoder: no MoE variant '", o.choice.moe_id, "' in the registry"));
  }
  ASSIGN_OR_RETURN(path, kc::FindMoeCudaPath(kernels::MoePathOf(*moe)));
  if (o.choice.mla_id != "attn.sparse_mla.mma" && o.choice.mla_id != "attn.sparse_mla.simt") {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda decoder: no CUDA launcher for '", o.choice.mla_id, "'"));
  }
  mla_tensor = o.choice.mla_id == "attn.sparse_mla.mma";
  if (o.tp.tp > 1) {
    slice = o.tp;
  } else {
    ASSIGN_OR_RETURN(slice, MakeTpSlice(c, format, 1, 0));
  }
  if (Tp() && !o.all_reduce) {
    return absl::InvalidArgumentError("cuda decoder: tp > 1 without an all-reduce");
  }
  if (Tp() && o.cuda_graph && !o.all_reduce_capturable) {
    return absl::InvalidArgumentError(
        "--cuda-graph needs NCCL for tensor parallel: the host all-reduce cannot be captured");
  }
  return CheckShapes();
}

StepDims CudaDecoder::Impl::Dims() const {
  StepDims d;
  d.batch = B;
  d.layers = layers;
  d.moe_id = o.choice.moe_id;
  d.mla_id = o.choice.mla_id;
  d.slice = slice;
  d.lens.assign(base_lens.begin(), base_lens.end());
  return d;
}

kernels::MoeParams CudaDecoder::Impl::Moe(const DevLayer& L, bool shared) const {
  kernels::MoeParams p;
  p.format = format;
  p.tokens = B;
  p.dim = c.dim;
  p.inter = shared ? slice.shared_inter() : c.moe_inter_dim;
  p.experts = shared ? 1 : slice.experts();
  p.topk = shared ? 1 : c.n_activated_experts;
  p.swiglu_limit = c.swiglu_limit;
  p.x = h;
  p.topk_ids = shared ? shared_ids : Tp() ? local_ids : topk_ids;
  p.topk_weights = shared ? shared_w : topk_w;
  p.w13 = shared ? L.shared_w13 : L.w13;
  p.w2 = shared ? L.shared_w2 : L.w2;
  p.out = x;  // residual add
  return p;
}

kernels::SparseMlaParams CudaDecoder::Impl::Mla(int layer) const {
  kernels::SparseMlaParams mp;
  mp.batch = B;
  mp.heads = slice.heads();
  mp.d_v = c.kv_lora_rank;
  mp.d_qk = c.d_qk();
  mp.topk = out_topk;
  mp.kv_seq_stride = stride;
  mp.softmax_scale = 1.0f / std::sqrt(static_cast<float>(c.d_qk()));
  mp.q = q;
  mp.kv = layer < static_cast<int>(kv.size()) ? kv[layer] : nullptr;
  mp.seq_lens = lens;
  mp.indices = indices;
  mp.out = attn;
  return mp;
}

kernels::IndexerParams CudaDecoder::Impl::Indexer(int layer) const {
  kernels::IndexerParams ip;
  ip.batch = B;
  ip.index_heads = c.index_n_heads;
  ip.index_dim = c.index_head_dim;
  ip.index_topk = c.index_topk;
  ip.window = c.window;
  ip.kv_seq_stride = stride;
  ip.out_topk = out_topk;
  ip.q = iq;
  ip.head_weights = iw;
  ip.keys = layer < static_cast<int>(ikey.size()) ? ikey[layer] : nullptr;
  ip.seq_lens = lens;
  ip.scores = scores;
  ip.indices = indices;
  return ip;
}

bool CudaDecoder::Impl::MlaSplits(int sm_count) const {
  return mla_tensor && kc::SparseMlaMmaSplitsFor(Mla(0), sm_count) > 1;
}

// The MoE path on both expert kinds, before anything is allocated.
absl::Status CudaDecoder::Impl::CheckShapes() const {
  kernels::MoeParams probe;
  probe.format = format;
  probe.tokens = B;
  probe.dim = c.dim;
  probe.experts = slice.experts();
  probe.topk = c.n_activated_experts;
  probe.inter = c.moe_inter_dim;
  static uint8_t dummy[16];
  static float fd[4];
  static int32_t id[4];
  probe.x = fd; probe.out = fd; probe.topk_weights = fd; probe.topk_ids = id;
  probe.w13 = probe.w2 = {dummy, dummy, fd};
  absl::Status s = kc::CheckMoeCuda(probe, *path);
  if (s.ok() && Tp() && HasShared()) {
    probe.experts = 1;  // this rank's columns of the shared expert
    probe.topk = 1;
    probe.inter = slice.shared_inter();
    s = kc::CheckMoeCuda(probe, *path);
  }
  if (s.ok()) return s;
  return absl::InvalidArgumentError(absl::StrCat("model '", c.name, "' does not fit MoE path ",
                                                 path->name, ": ", s.message(),
                                                 " (choose another --moe-backend)"));
}

absl::Status CudaDecoder::Impl::FillCaches(const std::vector<int>& context_lengths,
                                           uint64_t seed) {
  kv.resize(layers);
  ikey.resize(layers);
  std::vector<uint16_t> kvh, ikh;
  for (int l = 0; l < layers; ++l) {
    FillPromptCache(seed, l, context_lengths, stride, c.d_qk(), c.index_head_dim, &kvh, &ikh);
    RETURN_IF_ERROR(Upload(kvh, &kv[l]));
    RETURN_IF_ERROR(Upload(ikh, &ikey[l]));
    cache_bytes += (kvh.size() + ikh.size()) * 2;
  }
  return absl::OkStatus();
}

absl::Status CudaDecoder::Impl::AllocScratch() {
  const int H = slice.heads(), E = c.n_routed_experts, k = c.n_activated_experts;
  const int dqk = c.d_qk(), Di = c.index_head_dim;
  RETURN_IF_ERROR(Alloc(size_t(B) * c.dim, &x));
  RETURN_IF_ERROR(Alloc(size_t(B) * c.dim, &h));
  RETURN_IF_ERROR(Alloc(size_t(B) * c.q_lora_rank, &qa));
  RETURN_IF_ERROR(Alloc(size_t(B) * H * dqk, &q));
  RETURN_IF_ERROR(Alloc(size_t(B) * dqk, &kv_new));
  RETURN_IF_ERROR(Alloc(size_t(B) * c.index_n_heads * Di, &iq));
  RETURN_IF_ERROR(Alloc(size_t(B) * Di, &ik));
  RETURN_IF_ERROR(Alloc(size_t(B) * c.index_n_heads, &iw));
  RETURN_IF_ERROR(Alloc(size_t(B) * H * c.kv_lora_rank, &attn));
  RETURN_IF_ERROR(Alloc(size_t(B) * c.o_lora_rank, &oa));
  RETURN_IF_ERROR(Alloc(size_t(B) * E, &router));
  RETURN_IF_ERROR(Alloc(size_t(B) * stride, &scores));
  RETURN_IF_ERROR(Alloc(size_t(B) * c.vocab_size, &logits));
  RETURN_IF_ERROR(Alloc(size_t(B) * k, &topk_w));
  RETURN_IF_ERROR(Alloc(size_t(B), &shared_w));
  RETURN_IF_ERROR(Alloc(size_t(B), &tokens));
  RETURN_IF_ERROR(Alloc(size_t(B), &positions));
  RETURN_IF_ERROR(Alloc(size_t(B), &lens));
  RETURN_IF_ERROR(Alloc(size_t(B) * out_topk, &indices));
  RETURN_IF_ERROR(Alloc(size_t(B) * k, &topk_ids));
  RETURN_IF_ERROR(Alloc(size_t(B), &shared_ids));
  RETURN_IF_ERROR(Alloc(size_t(B), &next));
  if (Tp()) RETURN_IF_ERROR(Alloc(size_t(B) * k, &local_ids));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemset(shared_ids, 0, sizeof(int32_t) * B));
  const std::vector<float> ones(B, 1.0f);
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(shared_w, ones.data(), sizeof(float) * B, cudaMemcpyHostToDevice));
  const DevLayer none{};
  moe_ws_bytes = kc::MoeCudaWorkspaceBytes(Moe(none, false), *path);
  if (slice.shared_inter() > 0) {
    moe_ws_bytes = std::max(moe_ws_bytes, kc::MoeCudaWorkspaceBytes(Moe(none, true), *path));
  }
  RETURN_IF_ERROR(Alloc(moe_ws_bytes, reinterpret_cast<uint8_t**>(&moe_ws)));
  mla_ws_bytes = mla_tensor ? kc::SparseMlaMmaWorkspaceBytes(Mla(0)) : 0;
  if (mla_ws_bytes > 0) {
    RETURN_IF_ERROR(Alloc(mla_ws_bytes, reinterpret_cast<uint8_t**>(&mla_ws)));
  }
  return absl::OkStatus();
}

CudaDecoder::CudaDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDecoder::~CudaDecoder() = default;
const std::shared_ptr<const DeviceModel>& CudaDecoder::model() const { return impl_->m; }
const CudaGraphInfo& CudaDecoder::graph_info() const { return impl_->graph_info; }
int CudaDecoder::device() const { return impl_->o.device; }
size_t CudaDecoder::device_bytes() const { return impl_->bytes + impl_->m->bytes(); }
size_t CudaDecoder::cache_bytes() const { return impl_->cache_bytes; }
int64_t CudaDecoder::upload_ns() const { return impl_->upload_ns; }
int64_t CudaDecoder::caches_ns() const { return impl_->caches_ns; }

absl::StatusOr<std::unique_ptr<CudaDecoder>> CudaDecoder::Create(const ModelWeights& weights,
                                                                 const CudaDecoderOptions& options) {
  auto impl = std::make_unique<Impl>();
  Impl& d = *impl;
  if (options.model != nullptr &&
      (&options.model->host() != &weights || options.model->device() != options.device)) {
    return absl::InvalidArgumentError("cuda decoder: shared weights of another model or device");
  }
  // Shapes and kernels are checked before anything is allocated.
  RETURN_IF_ERROR(d.Configure(weights.arch, weights.format, weights.layers, options));
  d.w = &weights;
  QPROF_CUDA_RETURN_IF_ERROR(cudaSetDevice(options.device));
  QPROF_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
  if (options.model != nullptr) {
    d.m = options.model;
  } else {
    const int64_t t0 = NowNs();
    ASSIGN_OR_RETURN(d.m, DeviceModel::Upload(weights, options.device, d.HasShared()));
    d.upload_ns = NowNs() - t0;
  }
  const int64_t t1 = NowNs();
  RETURN_IF_ERROR(d.FillCaches(options.context_lengths, options.seed));
  RETURN_IF_ERROR(d.AllocScratch());
  QPROF_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  d.caches_ns = NowNs() - t1;
  return std::unique_ptr<CudaDecoder>(new CudaDecoder(std::move(impl)));
}

absl::StatusOr<std::vector<StepKernels>> CudaDecoder::LaunchList(
    const ModelArch& arch, kernels::Fp4Format format, int layers,
    const CudaDecoderOptions& options, int step, int sm_count) {
  Impl d;  // no weights, no device: shapes and kernels only
  RETURN_IF_ERROR(d.Configure(arch, format, layers, options));
  for (int32_t& len : d.base_lens) len += step;
  const bool splits = d.MlaSplits(sm_count);
  // A host all-reduce (tensor parallel on one GPU) is copies, not a kernel; it is the one
  // the decoder cannot capture into a graph.
  const bool device_collective = options.all_reduce_capturable;
  std::vector<StepKernels> out;
  for (StepLaunch& l : DescribeDecodeStep(d.c, d.Dims())) {
    const kernels::KernelInfo* info = kernels::KernelRegistry::Global().Find(l.kernel_id);
    if (info == nullptr || !info->has_cuda) {
      return absl::InternalError(absl::StrCat("no CUDA kernel for '", l.kernel_id, "'"));
    }
    StepKernels cl{std::move(l), {}};
    for (const kernels::CudaLaunch& k : info->cuda_launches) {
      using When = kernels::CudaLaunch::When;
      if ((k.when == When::kSplitK && !splits) ||
          (k.when == When::kDeviceCollective && !device_collective)) {
        continue;
      }
      cl.kernels.push_back(&k);
    }
    out.push_back(std::move(cl));
  }
  return out;
}

absl::StatusOr<std::vector<StepKernels>> CudaDecoder::Launches(int step) const {
  const Impl& d = *impl_;
  int sms = 0;
  QPROF_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d.o.device));
  return LaunchList(d.c, d.format, d.layers, d.o, step, sms);  // o: the prompt lengths
}

absl::Status CudaDecoder::Step(int step, const std::vector<int32_t>& tokens,
                               std::vector<float>* logits, std::vector<int32_t>* next,
                               const PollFn& poll) {
  Impl& d = *impl_;
  const int B = d.B;
  QPROF_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.o.device));  // each rank runs on its own thread
  if (static_cast<int>(tokens.size()) != B) {
    return absl::InvalidArgumentError(absl::StrCat("cuda decoder: ", tokens.size(), " tokens for batch ", B));
  }
  std::vector<int32_t> pos(B), lens(B);
  for (int b = 0; b < B; ++b) {
    if (d.base_lens[b] >= d.stride) {
      return absl::FailedPreconditionError("cuda decoder: KV cache full (more steps than reserved)");
    }
    pos[b] = d.base_lens[b];
    lens[b] = pos[b] + 1;  // the new token is appended before attention reads the cache
  }
  d.poll = &poll;
  struct ClearPoll {
    Impl* d;
    ~ClearPoll() { d->poll = nullptr; }
  } clear_poll{&d};
  nvtxRangePushA(absl::StrCat("step ", step).c_str());
  struct PopRange {
    ~PopRange() { nvtxRangePop(); }
  } pop_step;
  // Pageable sources: cudaMemcpyAsync returns once `pos`/`lens` are staged, so the locals
  // may go out of scope before the stream runs.
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.tokens, tokens.data(), 4 * B, cudaMemcpyHostToDevice, d.stream));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.positions, pos.data(), 4 * B, cudaMemcpyHostToDevice, d.stream));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.lens, lens.data(), 4 * B, cudaMemcpyHostToDevice, d.stream));
  if (!d.o.cuda_graph || step == 0) {
    // Eager (step 0 always: lazy module loading and attribute setup stay out of the graph).
    StepRanges ranges(/*capture=*/false, d.stream);
    RETURN_IF_ERROR(d.Body(&ranges));
  } else {
    if (d.graph == nullptr) {
      RETURN_IF_ERROR(CaptureStep(
          d.stream, [&d](StepRanges* r) { return d.Body(r); }, &d.graph, &d.graph_info));
    }
    nvtxRangePushA("graph");
    const cudaError_t launched = cudaGraphLaunch(d.graph, d.stream);
    nvtxRangePop();
    QPROF_CUDA_RETURN_IF_ERROR(launched);
  }
  next->resize(B);
  if (logits != nullptr) {
    logits->resize(size_t(B) * d.c.vocab_size);
    QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(logits->data(), d.logits, logits->size() * 4,
                                               cudaMemcpyDeviceToHost, d.stream));
  }
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(next->data(), d.next, 4 * B, cudaMemcpyDeviceToHost, d.stream));
  RETURN_IF_ERROR(WaitStream(d.stream, poll));
  for (int b = 0; b < B; ++b) ++d.base_lens[b];
  return absl::OkStatus();
}

}  // namespace qprof::runtime::cuda
