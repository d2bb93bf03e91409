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
#include "kernels/common/cuda/common_cuda.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "runtime/cuda/step_graph.h"
#include "runtime/cuda/tp_ops.h"
#include "runtime/synthetic.h"

namespace qprof::runtime::cuda {
namespace {

namespace kc = kernels::cuda;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

kc::MoeCudaPath PathFor(const std::string& name) {
  if (name == "w4a16_mma") return kc::MoeCudaPath::kW4a16Mma;
  if (name == "fp4_mma") return kc::MoeCudaPath::kFp4Mma;
  return kc::MoeCudaPath::kSlotGemv;
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

struct CudaDecoder::Impl {
  const ModelWeights& w;
  const ModelArch& c;
  CudaDecoderOptions o;
  std::shared_ptr<const DeviceModel> m;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t graph = nullptr;
  CudaGraphInfo graph_info;
  std::vector<void*> allocations;
  size_t bytes = 0, cache_bytes = 0;
  int64_t upload_ns = 0, caches_ns = 0;
  int B = 0, stride = 0, out_topk = 0;
  kc::MoeCudaPath path = kc::MoeCudaPath::kSlotGemv;
  std::vector<uint16_t*> kv, ikey;  // [layer] device caches
  // Device scratch (same roles as CpuDecoder's).
  float *x, *h, *qa, *q, *kv_new, *iq, *ik, *iw, *attn, *oa, *router, *scores, *logits;
  float *topk_w, *shared_w;
  int32_t *tokens, *positions, *lens, *indices, *topk_ids, *shared_ids, *next;
  int32_t* local_ids = nullptr;  // tp > 1: topk_ids of this rank's experts, others -1
  void* moe_ws = nullptr;
  size_t moe_ws_bytes = 0;
  void* mla_ws = nullptr;  // split-K partials of the tensor-core MLA (small batches)
  size_t mla_ws_bytes = 0;
  std::vector<int32_t> base_lens;
  const PollFn* poll = nullptr;  // of the step in progress (all-reduces wait with it)

  Impl(const ModelWeights& weights, CudaDecoderOptions options)
      : w(weights), c(weights.arch), o(std::move(options)) {}

  // Shares of this rank (the whole model when tp == 1; runtime/tp_partition.h).
  bool Tp() const { return o.tp.tp > 1; }
  int Heads() const { return Tp() ? o.tp.heads() : c.n_heads; }
  int LocalExperts() const { return Tp() ? o.tp.experts() : c.n_routed_experts; }
  int SharedInter() const {
    return Tp() ? o.tp.shared_inter() : c.moe_inter_dim * std::max(1, c.n_shared_experts);
  }
  bool HasShared() const { return c.n_shared_experts > 0 && SharedInter() > 0; }

  ~Impl() {
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
  absl::Status Alloc(size_t n, T** out) {
    void* p = nullptr;
    QPROF_CUDA_RETURN_IF_ERROR(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T) + 16));
    allocations.push_back(p);
    bytes += n * sizeof(T);
    *out = static_cast<T*>(p);
    return absl::OkStatus();
  }
  template <typename T>
  absl::Status Upload(const std::vector<T>& v, T** out) {
    RETURN_IF_ERROR(Alloc(v.size(), out));
    QPROF_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(*out, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return absl::OkStatus();
  }

  kernels::MoeParams Moe(const DevLayer& L, bool shared) const {
    kernels::MoeParams p;
    p.format = w.format;
    p.tokens = B;
    p.dim = c.dim;
    p.inter = shared ? SharedInter() : c.moe_inter_dim;
    p.experts = shared ? 1 : LocalExperts();
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

  // which: 0 dense projection, 1 LM head, 2 router gate (kernel names per registry id).
  absl::Status Gemm(const DevBf16& wt, const float* in, float* out, bool acc, int which = 0) {
    kernels::DenseGemmParams p;
    p.m = B;
    p.n = wt.rows;
    p.k = wt.cols;
    p.x = in;
    p.w = wt.p;
    p.y = out;
    p.accumulate = acc;
    return which == 1   ? kc::LaunchLmHead(p, stream)
           : which == 2 ? kc::LaunchRouterGemm(p, stream)
                        : kc::LaunchDenseGemm(p, stream);
  }
  absl::Status Norm(int rows, int cols, int stride_elems, const DevBf16& wt, const float* in,
                    float* out) {
    kernels::RmsNormParams p;
    p.rows = rows;
    p.cols = cols;
    p.x_stride = stride_elems;
    p.out_stride = stride_elems;
    p.eps = c.norm_eps;
    p.x = in;
    p.weight = wt.p;
    p.out = out;
    return kc::LaunchRmsNorm(p, stream);
  }

  absl::Status Attention(int l);
  absl::Status MoeHalf(int l);
  absl::Status AllReduceX() {
    if (!o.all_reduce) return absl::FailedPreconditionError("tp > 1 without an all-reduce");
    const PollFn none;
    return o.all_reduce(x, size_t(B) * c.dim, stream, poll != nullptr ? *poll : none);
  }
  // The device work of one step (everything after the input upload). `ranges`: NVTX
  // ranges (eager) or capture-time marks (graph).
  absl::Status Body(StepRanges* ranges);
  absl::Status AllocScratch();
  absl::Status FillCaches(const std::vector<int>& context_lengths, uint64_t seed);
};

absl::Status CudaDecoder::Impl::Attention(int l) {
  const DevLayer& L = m->layer(l);
  const int H = Heads(), dqk = c.d_qk(), dv = c.kv_lora_rank, R = c.rope_dim;
  RETURN_IF_ERROR(Norm(B, c.dim, c.dim, L.attn_norm, x, h));
  RETURN_IF_ERROR(Gemm(L.wq_a, h, qa, false));
  RETURN_IF_ERROR(Norm(B, c.q_lora_rank, c.q_lora_rank, L.q_norm, qa, qa));
  RETURN_IF_ERROR(Gemm(L.wq_b, qa, q, false));
  RETURN_IF_ERROR(Gemm(L.wkv_a, h, kv_new, false));
  RETURN_IF_ERROR(Norm(B, dv, dqk, L.kv_norm, kv_new, kv_new));
  // Two launches: the query heads, then the one latent key (runtime/plan.cc counts both).
  RETURN_IF_ERROR(kc::LaunchRope({B, H, R, dqk, H * dqk, c.rope_theta, positions, q + dv}, stream));
  RETURN_IF_ERROR(kc::LaunchRope({B, 1, R, dqk, dqk, c.rope_theta, positions, kv_new + dv}, stream));
  RETURN_IF_ERROR(Gemm(L.wi_q, qa, iq, false));
  RETURN_IF_ERROR(Gemm(L.wi_k, h, ik, false));
  RETURN_IF_ERROR(Gemm(L.wi_w, h, iw, false));
  RETURN_IF_ERROR(kc::LaunchKvAppend(kv_new, ik, positions, B, stride, dqk, c.index_head_dim,
                                     kv[l], ikey[l], stream));
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
  ip.keys = ikey[l];
  ip.seq_lens = lens;
  ip.scores = scores;
  ip.indices = indices;
  RETURN_IF_ERROR(kc::LaunchIndexerTopk(ip, stream));
  kernels::SparseMlaParams mp;
  mp.batch = B;
  mp.heads = H;
  mp.d_v = dv;
  mp.d_qk = dqk;
  mp.topk = out_topk;
  mp.kv_seq_stride = stride;
  mp.softmax_scale = 1.0f / std::sqrt(static_cast<float>(dqk));
  mp.q = q;
  mp.kv = kv[l];
  mp.seq_lens = lens;
  mp.indices = indices;
  mp.out = attn;
  RETURN_IF_ERROR(o.mla_tensor ? kc::LaunchSparseMlaMma(mp, mla_ws, mla_ws_bytes, stream)
                               : kc::LaunchSparseMlaSimt(mp, stream));
  RETURN_IF_ERROR(Gemm(L.wo_a, attn, oa, false));
  // tp > 1: rank 0 adds its partial onto the residual, the others write theirs alone, so
  // the all-reduce that follows leaves x + sum of partials on every rank.
  return Gemm(L.wo_b, oa, x, /*acc=*/o.tp.rank == 0);
}

absl::Status CudaDecoder::Impl::MoeHalf(int l) {
  const DevLayer& L = m->layer(l);
  RETURN_IF_ERROR(Norm(B, c.dim, c.dim, L.ffn_norm, x, h));
  RETURN_IF_ERROR(Gemm(L.gate, h, router, false, /*which=*/2));
  kernels::RouterTopkParams r{B, c.n_routed_experts, c.n_activated_experts, c.route_scale,
                              router, nullptr, topk_ids, topk_w};
  RETURN_IF_ERROR(kc::LaunchRouterTopk(r, stream));
  if (Tp()) {
    // Residual on rank 0 only (see Attention); slots of other ranks' experts -> -1.
    if (o.tp.rank != 0) {
      QPROF_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(x, 0, sizeof(float) * B * c.dim, stream));
    }
    QPROF_CUDA_RETURN_IF_ERROR(LaunchLocalExpertIds(topk_ids, B * c.n_activated_experts,
                                                    o.tp.expert_begin, o.tp.expert_end,
                                                    local_ids, stream));
  }
  RETURN_IF_ERROR(kc::LaunchMoeCuda(Moe(L, false), path, moe_ws, moe_ws_bytes, stream));
  if (HasShared()) {
    RETURN_IF_ERROR(kc::LaunchMoeCuda(Moe(L, true), path, moe_ws, moe_ws_bytes, stream));
  }
  return absl::OkStatus();
}

absl::Status CudaDecoder::Impl::Body(StepRanges* ranges) {
  {
    StepRange r(ranges, "embed");
    RETURN_IF_ERROR(kc::LaunchEmbedding({B, c.dim, c.vocab_size, tokens, m->embed().p, x}, stream));
  }
  for (int l = 0; l < w.layers; ++l) {
    StepRange rl(ranges, absl::StrCat("layer ", l));
    {
      StepRange r(ranges, "attn");
      RETURN_IF_ERROR(Attention(l));
    }
    if (Tp()) {
      StepRange r(ranges, "comm");
      RETURN_IF_ERROR(AllReduceX());
    }
    {
      StepRange r(ranges, "moe");
      RETURN_IF_ERROR(MoeHalf(l));
    }
    if (Tp()) {
      StepRange r(ranges, "comm");
      RETURN_IF_ERROR(AllReduceX());
    }
  }
  StepRange r(ranges, "head");
  RETURN_IF_ERROR(Norm(B, c.dim, c.dim, m->final_norm(), x, h));
  RETURN_IF_ERROR(Gemm(m->lm_head(), h, logits, false, /*which=*/1));
  return kc::LaunchArgmax({B, c.vocab_size, logits, next}, stream);
}

absl::Status CudaDecoder::Impl::FillCaches(const std::vector<int>& context_lengths,
                                           uint64_t seed) {
  // Prompt caches: the same seeded rows as CpuDecoder::Init.
  const int dqk = c.d_qk(), Di = c.index_head_dim;
  kv.resize(w.layers);
  ikey.resize(w.layers);
  std::vector<float> row(std::max(dqk, Di));
  for (int l = 0; l < w.layers; ++l) {
    std::vector<uint16_t> kvh(static_cast<size_t>(B) * stride * dqk, 0);
    std::vector<uint16_t> ikh(static_cast<size_t>(B) * stride * Di, 0);
    SynthSpec kvs{seed, absl::StrCat("cache.layers.", l, ".kv"), int64_t{B} * stride, dqk, 1.0f};
    SynthSpec iks{seed, absl::StrCat("cache.layers.", l, ".index_k"), int64_t{B} * stride, Di, 1.0f};
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < context_lengths[b]; ++t) {
        const int64_t r = int64_t{b} * stride + t;
        SynthRows(kvs, r, r + 1, row.data());
        kernels::FloatToBf16N(row.data(), dqk, &kvh[r * dqk]);
        SynthRows(iks, r, r + 1, row.data());
        kernels::FloatToBf16N(row.data(), Di, &ikh[r * Di]);
      }
    }
    RETURN_IF_ERROR(Upload(kvh, &kv[l]));
    RETURN_IF_ERROR(Upload(ikh, &ikey[l]));
    cache_bytes += (kvh.size() + ikh.size()) * 2;
  }
  return absl::OkStatus();
}

absl::Status CudaDecoder::Impl::AllocScratch() {
  const int H = Heads(), E = c.n_routed_experts, k = c.n_activated_experts;
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
  moe_ws_bytes = kc::MoeCudaWorkspaceBytes(Moe(none, false), path);
  if (SharedInter() > 0) {
    moe_ws_bytes = std::max(moe_ws_bytes, kc::MoeCudaWorkspaceBytes(Moe(none, true), path));
  }
  RETURN_IF_ERROR(Alloc(moe_ws_bytes, reinterpret_cast<uint8_t**>(&moe_ws)));
  kernels::SparseMlaParams mp;
  mp.batch = B;
  mp.heads = H;
  mp.d_v = c.kv_lora_rank;
  mp.d_qk = dqk;
  mp.topk = out_topk;
  mla_ws_bytes = o.mla_tensor ? kc::SparseMlaMmaWorkspaceBytes(mp) : 0;
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
  auto impl = std::make_unique<Impl>(weights, options);
  Impl& d = *impl;
  const ModelArch& c = d.c;
  d.B = static_cast<int>(options.context_lengths.size());
  if (d.B < 1) return absl::InvalidArgumentError("cuda decoder: empty batch");
  const int max_len = *std::max_element(options.context_lengths.begin(), options.context_lengths.end());
  d.stride = max_len + std::max(options.max_steps, 1);
  d.out_topk = std::min(d.stride, c.index_topk + c.window);
  d.path = PathFor(options.moe_backend);
  if (d.Tp() && !options.all_reduce) {
    return absl::InvalidArgumentError("cuda decoder: tp > 1 without an all-reduce");
  }
  if (d.Tp() && options.cuda_graph && !options.all_reduce_capturable) {
    return absl::InvalidArgumentError(
        "--cuda-graph needs NCCL for tensor parallel: the host all-reduce cannot be captured");
  }
  if (options.model != nullptr &&
      (&options.model->host() != &weights || options.model->device() != options.device)) {
    return absl::InvalidArgumentError("cuda decoder: shared weights of another model or device");
  }
  // Shape checks before any allocation: the MoE path on both expert kinds.
  {
    kernels::MoeParams probe;
    probe.format = weights.format;
    probe.tokens = d.B;
    probe.dim = c.dim;
    probe.experts = d.LocalExperts();
    probe.topk = c.n_activated_experts;
    probe.inter = c.moe_inter_dim;
    uint8_t dummy[16];
    float fd[4];
    int32_t id[4];
    probe.x = fd; probe.out = fd; probe.topk_weights = fd; probe.topk_ids = id;
    probe.w13 = probe.w2 = {dummy, dummy, fd};
    absl::Status s = kc::CheckMoeCuda(probe, d.path);
    if (s.ok() && d.Tp() && d.HasShared()) {
      probe.experts = 1;  // this rank's columns of the shared expert
      probe.topk = 1;
      probe.inter = d.SharedInter();
      s = kc::CheckMoeCuda(probe, d.path);
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "model '", c.name, "' does not fit MoE path ", options.moe_backend, ": ", s.message(),
          " (choose another --moe-backend)"));
    }
  }
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
  d.base_lens.assign(options.context_lengths.begin(), options.context_lengths.end());
  QPROF_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  d.caches_ns = NowNs() - t1;
  return std::unique_ptr<CudaDecoder>(new CudaDecoder(std::move(impl)));
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
