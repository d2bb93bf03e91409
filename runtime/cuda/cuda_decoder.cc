#include "runtime/cuda/cuda_decoder.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/common_cpu.h"
#include "kernels/common/cuda/common_cuda.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/moe/cuda/moe_cuda.h"
#include "runtime/synthetic.h"
#if QPROF_HAVE_NCCL
#include "runtime/cuda/tp_ops.h"
#endif

namespace qprof::runtime {
namespace {

namespace kc = kernels::cuda;

// NVTX range for the scope (pushed and popped on the launching thread; CUPTI assembles
// the nested names into "decode/step N/layer L/moe").
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
};

struct DevBf16 {
  const uint16_t* p = nullptr;
  int rows = 0, cols = 0;
};
struct DevFp4 {
  kernels::Fp4Weights w;
};
struct DevLayer {
  DevBf16 attn_norm, wq_a, q_norm, wq_b, wkv_a, kv_norm, wo_a, wo_b, wi_q, wi_k, wi_w,
      ffn_norm, gate;
  DevFp4 w13, w2, shared_w13, shared_w2;
};

kc::MoeCudaPath PathFor(const std::string& name) {
  if (name == "w4a16_mma") return kc::MoeCudaPath::kW4a16Mma;
  if (name == "fp4_mma") return kc::MoeCudaPath::kFp4Mma;
  return kc::MoeCudaPath::kSlotGemv;
}

}  // namespace

struct CudaDecoder::Impl {
  const ModelWeights& w;
  const ModelConfig& c;
  CudaDecoderOptions o;
  cudaStream_t stream = nullptr;
  cudaGraphExec_t graph = nullptr;
  std::vector<void*> allocations;
  size_t bytes = 0, cache_bytes = 0;
  int B = 0, stride = 0, out_topk = 0;
  kc::MoeCudaPath path = kc::MoeCudaPath::kSlotGemv;
  DevBf16 embed, final_norm, lm_head;
  std::vector<DevLayer> layers;
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

  Impl(const ModelWeights& weights, CudaDecoderOptions options)
      : w(weights), c(weights.config), o(std::move(options)) {}

  // Shares of this rank (the whole model when tp == 1; runtime/tp_partition.h).
  bool Tp() const { return o.tp.tp > 1; }
  int Heads() const { return Tp() ? o.tp.heads() : c.n_heads; }
  int LocalExperts() const { return Tp() ? o.tp.experts() : c.n_routed_experts; }
  int SharedInter() const {
    return Tp() ? o.tp.shared_inter() : c.moe_inter_dim * std::max(1, c.n_shared_experts);
  }

  // Sum of the hidden state x over ranks (after attention and after the MoE).
  absl::Status AllReduceX() {
#if QPROF_HAVE_NCCL
    return AllReduceSum(static_cast<ncclComm_t>(o.nccl_comm), x, size_t(B) * c.dim, stream);
#else
    return absl::UnimplementedError("this build has no NCCL (tensor parallel unavailable)");
#endif
  }
  ~Impl() {
    if (graph) cudaGraphExecDestroy(graph);
    for (void* p : allocations) cudaFree(p);
    if (stream) cudaStreamDestroy(stream);
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
  absl::Status Upload(const std::vector<T>& v, const T** out) {
    T* p = nullptr;
    RETURN_IF_ERROR(Alloc(v.size(), &p));
    QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    *out = p;
    return absl::OkStatus();
  }
  absl::Status Up(const Bf16Tensor& t, DevBf16* d) {
    d->rows = static_cast<int>(t.rows);
    d->cols = static_cast<int>(t.cols);
    return Upload(t.data, &d->p);
  }
  absl::Status Up(const Fp4Stack& s, DevFp4* d) {
    RETURN_IF_ERROR(Upload(s.packed, &d->w.packed));
    RETURN_IF_ERROR(Upload(s.scales, &d->w.scales));
    if (!s.scale2.empty()) RETURN_IF_ERROR(Upload(s.scale2, &d->w.scale2));
    return absl::OkStatus();
  }

  kernels::MoeParams Moe(const LayerWeights* hostl, const DevLayer& L, bool shared) const {
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
    p.w13 = shared ? L.shared_w13.w : L.w13.w;
    p.w2 = shared ? L.shared_w2.w : L.w2.w;
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

  absl::Status Attention(int l, bool ranges) {
    const DevLayer& L = layers[l];
    const int H = Heads(), dqk = c.d_qk(), dv = c.kv_lora_rank, R = c.rope_dim;
    RETURN_IF_ERROR(Norm(B, c.dim, c.dim, L.attn_norm, x, h));
    RETURN_IF_ERROR(Gemm(L.wq_a, h, qa, false));
    RETURN_IF_ERROR(Norm(B, c.q_lora_rank, c.q_lora_rank, L.q_norm, qa, qa));
    RETURN_IF_ERROR(Gemm(L.wq_b, qa, q, false));
    RETURN_IF_ERROR(Gemm(L.wkv_a, h, kv_new, false));
    RETURN_IF_ERROR(Norm(B, dv, dqk, L.kv_norm, kv_new, kv_new));
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

  absl::Status MoeHalf(int l) {
    const DevLayer& L = layers[l];
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
#if QPROF_HAVE_NCCL
      QPROF_CUDA_RETURN_IF_ERROR(LaunchLocalExpertIds(topk_ids, B * c.n_activated_experts,
                                                      o.tp.expert_begin, o.tp.expert_end,
                                                      local_ids, stream));
#endif
    }
    RETURN_IF_ERROR(kc::LaunchMoeCuda(Moe(nullptr, L, false), path, moe_ws, moe_ws_bytes, stream));
    if (c.n_shared_experts > 0 && SharedInter() > 0) {
      RETURN_IF_ERROR(kc::LaunchMoeCuda(Moe(nullptr, L, true), path, moe_ws, moe_ws_bytes, stream));
    }
    return absl::OkStatus();
  }

  // The device work of one step (everything after the input upload).
  absl::Status Body(int step, bool ranges) {
    auto range = [&](const std::string& n) { return ranges ? std::make_unique<NvtxRange>(n) : nullptr; };
    {
      auto r = range("embed");
      RETURN_IF_ERROR(kc::LaunchEmbedding({B, c.dim, c.vocab_size, tokens, embed.p, x}, stream));
    }
    for (int l = 0; l < w.layers; ++l) {
      auto rl = range(absl::StrCat("layer ", l));
      {
        auto r = range("attn");
        RETURN_IF_ERROR(Attention(l, ranges));
      }
      if (Tp()) {
        auto r = range("comm");
        RETURN_IF_ERROR(AllReduceX());
      }
      {
        auto r = range("moe");
        RETURN_IF_ERROR(MoeHalf(l));
      }
      if (Tp()) {
        auto r = range("comm");
        RETURN_IF_ERROR(AllReduceX());
      }
    }
    auto r = range("head");
    RETURN_IF_ERROR(Norm(B, c.dim, c.dim, final_norm, x, h));
    RETURN_IF_ERROR(Gemm(lm_head, h, logits, false, /*which=*/1));
    return kc::LaunchArgmax({B, c.vocab_size, logits, next}, stream);
  }
};

CudaDecoder::CudaDecoder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDecoder::~CudaDecoder() = default;
size_t CudaDecoder::device_bytes() const { return impl_->bytes; }
size_t CudaDecoder::cache_bytes() const { return impl_->cache_bytes; }

absl::StatusOr<std::unique_ptr<CudaDecoder>> CudaDecoder::Create(const ModelWeights& weights,
                                                                 const CudaDecoderOptions& options) {
  auto impl = std::make_unique<Impl>(weights, options);
  Impl& d = *impl;
  const ModelConfig& c = d.c;
  d.B = static_cast<int>(options.context_lengths.size());
  if (d.B < 1) return absl::InvalidArgumentError("cuda decoder: empty batch");
  const int max_len = *std::max_element(options.context_lengths.begin(), options.context_lengths.end());
  d.stride = max_len + std::max(options.max_steps, 1);
  d.out_topk = std::min(d.stride, c.index_topk + c.window);
  d.path = PathFor(options.moe_backend);
  if (d.Tp() && options.nccl_comm == nullptr) {
    return absl::InvalidArgumentError("cuda decoder: tp > 1 without an NCCL communicator");
  }
#if !QPROF_HAVE_NCCL
  if (d.Tp()) return absl::UnimplementedError("this build has no NCCL: --tp 1 only");
#endif
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
    if (s.ok() && d.Tp() && c.n_shared_experts > 0 && d.SharedInter() > 0) {
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
  RETURN_IF_ERROR(d.Up(weights.embed, &d.embed));
  RETURN_IF_ERROR(d.Up(weights.final_norm, &d.final_norm));
  RETURN_IF_ERROR(d.Up(weights.lm_head, &d.lm_head));
  d.layers.resize(weights.layers);
  for (int l = 0; l < weights.layers; ++l) {
    const LayerWeights& h = weights.layer[l];
    DevLayer& L = d.layers[l];
    for (auto [src, dst] : std::vector<std::pair<const Bf16Tensor*, DevBf16*>>{
             {&h.attn_norm, &L.attn_norm}, {&h.wq_a, &L.wq_a}, {&h.q_norm, &L.q_norm},
             {&h.wq_b, &L.wq_b}, {&h.wkv_a, &L.wkv_a}, {&h.kv_norm, &L.kv_norm},
             {&h.wo_a, &L.wo_a}, {&h.wo_b, &L.wo_b}, {&h.wi_q, &L.wi_q}, {&h.wi_k, &L.wi_k},
             {&h.wi_w, &L.wi_w}, {&h.ffn_norm, &L.ffn_norm}, {&h.gate, &L.gate}}) {
      RETURN_IF_ERROR(d.Up(*src, dst));
    }
    RETURN_IF_ERROR(d.Up(h.w13, &L.w13));
    RETURN_IF_ERROR(d.Up(h.w2, &L.w2));
    if (c.n_shared_experts > 0 && d.SharedInter() > 0) {
      RETURN_IF_ERROR(d.Up(h.shared_w13, &L.shared_w13));
      RETURN_IF_ERROR(d.Up(h.shared_w2, &L.shared_w2));
    }
  }
  // Prompt caches: the same seeded rows as CpuDecoder::Init.
  const int B = d.B, dqk = c.d_qk(), Di = c.index_head_dim;
  d.kv.resize(weights.layers);
  d.ikey.resize(weights.layers);
  std::vector<float> row(std::max(dqk, Di));
  for (int l = 0; l < weights.layers; ++l) {
    std::vector<uint16_t> kvh(static_cast<size_t>(B) * d.stride * dqk, 0);
    std::vector<uint16_t> ikh(static_cast<size_t>(B) * d.stride * Di, 0);
    SynthSpec kvs{options.seed, absl::StrCat("cache.layers.", l, ".kv"), int64_t{B} * d.stride, dqk, 1.0f};
    SynthSpec iks{options.seed, absl::StrCat("cache.layers.", l, ".index_k"), int64_t{B} * d.stride, Di, 1.0f};
    for (int b = 0; b < B; ++b) {
      for (int t = 0; t < options.context_lengths[b]; ++t) {
        const int64_t r = int64_t{b} * d.stride + t;
        SynthRows(kvs, r, r + 1, row.data());
        kernels::FloatToBf16N(row.data(), dqk, &kvh[r * dqk]);
        SynthRows(iks, r, r + 1, row.data());
        kernels::FloatToBf16N(row.data(), Di, &ikh[r * Di]);
      }
    }
    const uint16_t* p = nullptr;
    RETURN_IF_ERROR(d.Upload(kvh, &p));
    d.kv[l] = const_cast<uint16_t*>(p);
    RETURN_IF_ERROR(d.Upload(ikh, &p));
    d.ikey[l] = const_cast<uint16_t*>(p);
    d.cache_bytes += (kvh.size() + ikh.size()) * 2;
  }
  const int H = d.Heads(), E = c.n_routed_experts, k = c.n_activated_experts;
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.dim, &d.x));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.dim, &d.h));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.q_lora_rank, &d.qa));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * H * dqk, &d.q));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * dqk, &d.kv_new));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.index_n_heads * Di, &d.iq));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * Di, &d.ik));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.index_n_heads, &d.iw));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * H * c.kv_lora_rank, &d.attn));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.o_lora_rank, &d.oa));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * E, &d.router));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * d.stride, &d.scores));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * c.vocab_size, &d.logits));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * k, &d.topk_w));
  RETURN_IF_ERROR(d.Alloc(size_t(B), &d.shared_w));
  RETURN_IF_ERROR(d.Alloc(size_t(B), &d.tokens));
  RETURN_IF_ERROR(d.Alloc(size_t(B), &d.positions));
  RETURN_IF_ERROR(d.Alloc(size_t(B), &d.lens));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * d.out_topk, &d.indices));
  RETURN_IF_ERROR(d.Alloc(size_t(B) * k, &d.topk_ids));
  RETURN_IF_ERROR(d.Alloc(size_t(B), &d.shared_ids));
  RETURN_IF_ERROR(d.Alloc(size_t(B), &d.next));
  if (d.Tp()) RETURN_IF_ERROR(d.Alloc(size_t(B) * k, &d.local_ids));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemset(d.shared_ids, 0, sizeof(int32_t) * B));
  const std::vector<float> ones(B, 1.0f);
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpy(d.shared_w, ones.data(), sizeof(float) * B, cudaMemcpyHostToDevice));
  d.moe_ws_bytes = kc::MoeCudaWorkspaceBytes(d.Moe(nullptr, DevLayer{}, false), d.path);
  if (d.SharedInter() > 0) {
    d.moe_ws_bytes = std::max(d.moe_ws_bytes,
                              kc::MoeCudaWorkspaceBytes(d.Moe(nullptr, DevLayer{}, true), d.path));
  }
  RETURN_IF_ERROR(d.Alloc(d.moe_ws_bytes, reinterpret_cast<uint8_t**>(&d.moe_ws)));
  {
    kernels::SparseMlaParams mp;
    mp.batch = B;
    mp.heads = H;
    mp.d_v = c.kv_lora_rank;
    mp.d_qk = dqk;
    mp.topk = d.out_topk;
    d.mla_ws_bytes = options.mla_tensor ? kc::SparseMlaMmaWorkspaceBytes(mp) : 0;
    if (d.mla_ws_bytes > 0) RETURN_IF_ERROR(d.Alloc(d.mla_ws_bytes, reinterpret_cast<uint8_t**>(&d.mla_ws)));
  }
  d.base_lens.assign(options.context_lengths.begin(), options.context_lengths.end());
  QPROF_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return std::unique_ptr<CudaDecoder>(new CudaDecoder(std::move(impl)));
}

absl::Status CudaDecoder::Step(int step, const std::vector<int32_t>& tokens,
                               std::vector<float>* logits, std::vector<int32_t>* next) {
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
  NvtxRange r_step(absl::StrCat("step ", step));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.tokens, tokens.data(), 4 * B, cudaMemcpyHostToDevice, d.stream));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.positions, pos.data(), 4 * B, cudaMemcpyHostToDevice, d.stream));
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(d.lens, lens.data(), 4 * B, cudaMemcpyHostToDevice, d.stream));
  if (!d.o.cuda_graph || step == 0) {
    RETURN_IF_ERROR(d.Body(step, /*ranges=*/true));
  } else {
    if (d.graph == nullptr) {
      cudaGraph_t g = nullptr;
      QPROF_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal));
      absl::Status body = d.Body(step, /*ranges=*/false);
      const cudaError_t end = cudaStreamEndCapture(d.stream, &g);
      RETURN_IF_ERROR(body);
      QPROF_CUDA_RETURN_IF_ERROR(end);
      QPROF_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&d.graph, g, 0));
      cudaGraphDestroy(g);
    }
    NvtxRange r("graph");
    QPROF_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(d.graph, d.stream));
  }
  next->resize(B);
  if (logits != nullptr) {
    logits->resize(size_t(B) * d.c.vocab_size);
    QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(logits->data(), d.logits, logits->size() * 4,
                                               cudaMemcpyDeviceToHost, d.stream));
  }
  QPROF_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(next->data(), d.next, 4 * B, cudaMemcpyDeviceToHost, d.stream));
  QPROF_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(d.stream));
  for (int b = 0; b < B; ++b) ++d.base_lens[b];
  return absl::OkStatus();
}

}  // namespace qprof::runtime
