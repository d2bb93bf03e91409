// Times the CUDA MoE and sparse-MLA kernels at DeepSeek-V4-Flash shapes (dim 4096, inter
// 2048, 256 experts top-6; 64 heads, 512 + 128 selected tokens) and prints one table row
// per (kernel path, format, batch).
//
// How it times (so the figure is the kernels' and the memory's, not the host's or L2's):
//  - kCalls calls are captured into one CUDA graph and the graph is replayed kReplays times,
//    each replay between two CUDA events: per call = replay time / kCalls, so host launch
//    gaps between the 3-5 kernels of a call are not in the window. If a launcher cannot be
//    captured, the same kCalls calls run back to back between the events ("eager" in the
//    method column; launch gaps can then be in the figure).
//  - Every call reads from DRAM: the calls rotate over kSets routing sets (MoE) whose
//    consecutive sets share no expert, and over kSets index sets (MLA) into a >= 256 MB KV
//    cache; the expert weights are 3+ GB per format. L2 is 50-60 MB.
//  - Reported: median per-call time over the replays and the spread (min..max); the bytes
//    a call must move (MoE: weights of the distinct experts routed to, scales included,
//    averaged over the sets; MLA: the selected KV rows, 1152 bytes each), achieved GB/s and
//    its share of the measured copy bandwidth (argument 1, GB/s).
//  - Inputs are random (never zeros). A row whose launch or graph fails prints FAILED with
//    the reason, and the program exits 1.
// usage: qprof_kernel_bench <copy_gbps> [batches=1,16,64]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/moe/cuda/moe_cuda.h"

namespace {

using qprof::kernels::Fp4Format;
using qprof::kernels::MoeParams;
using qprof::kernels::SparseMlaParams;
using qprof::kernels::cuda::MoeCudaPath;

constexpr int kCalls = 20;    // calls per timed graph (or eager window)
constexpr int kReplays = 7;   // timed replays: median and spread
constexpr int kSets = 16;     // rotated routing / index sets

double g_copy_gbps = 0;
int g_failed_rows = 0;

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "kernel_bench: %s: %s\n", #x, cudaGetErrorString(e_));      \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// Device buffer filled with pseudo-random bytes drawn from [lo, hi] (per byte).
void* RandomDevice(size_t bytes, uint8_t lo, uint8_t hi, uint32_t seed) {
  void* d = nullptr;
  CK(cudaMalloc(&d, bytes + 16));
  const size_t chunk = std::min<size_t>(bytes, 64 << 20);
  std::vector<uint8_t> h(chunk);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& b : h) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    b = static_cast<uint8_t>(lo + (s >> 24) % (hi - lo + 1));
  }
  for (size_t off = 0; off < bytes; off += chunk)
    CK(cudaMemcpy(static_cast<char*>(d) + off, h.data(), std::min(chunk, bytes - off),
                  cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
T* Upload(const std::vector<T>& v) {
  T* d = nullptr;
  CK(cudaMalloc(&d, v.size() * sizeof(T) + 16));
  CK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

struct Timing {
  bool ok = false;
  std::string error;
  std::string method;               // "graph" or "eager"
  std::vector<double> per_call_ms;  // one per timed replay, sorted
};

// call(i, stream) launches call i (its rotated inputs) and returns its status.
Timing TimeCalls(const std::function<absl::Status(int, cudaStream_t)>& call) {
  Timing t;
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // Warm-up, eager: module loading and one-time attribute setup stay out of the graph.
  for (int i = 0; i < 3; ++i) {
    absl::Status st = call(i, s);
    if (!st.ok()) {
      t.error = st.ToString();
      CK(cudaStreamDestroy(s));
      return t;
    }
  }
  if (cudaStreamSynchronize(s) != cudaSuccess) {
    t.error = cudaGetErrorString(cudaGetLastError());
    CK(cudaStreamDestroy(s));
    return t;
  }
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    absl::Status st = absl::OkStatus();
    for (int i = 0; i < kCalls && st.ok(); ++i) st = call(i, s);
    cudaGraph_t g = nullptr;
    const cudaError_t end = cudaStreamEndCapture(s, &g);
    if (st.ok() && end == cudaSuccess && g != nullptr &&
        cudaGraphInstantiate(&exec, g, 0) != cudaSuccess) {
      exec = nullptr;
    }
    if (g != nullptr) cudaGraphDestroy(g);
    cudaGetLastError();  // a capture the launcher does not support is not an error here
  }
  t.method = exec != nullptr ? "graph" : "eager";
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < kReplays; ++r) {
    CK(cudaEventRecord(a, s));
    if (exec != nullptr) {
      CK(cudaGraphLaunch(exec, s));
    } else {
      for (int i = 0; i < kCalls; ++i) {
        absl::Status st = call(i, s);
        if (!st.ok()) {
          t.error = st.ToString();
          break;
        }
      }
    }
    CK(cudaEventRecord(b, s));
    const cudaError_t e = cudaEventSynchronize(b);
    if (e != cudaSuccess || !t.error.empty()) {
      if (t.error.empty()) t.error = cudaGetErrorString(e);
      break;
    }
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.per_call_ms.push_back(ms / kCalls);
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
  std::sort(t.per_call_ms.begin(), t.per_call_ms.end());
  t.ok = t.error.empty() && t.per_call_ms.size() == kReplays;
  return t;
}

void Row(const std::string& kernel, const char* path, const char* fmt, int batch, const Timing& t,
         double bytes) {
  if (!t.ok) {
    ++g_failed_rows;
    std::printf("%-28s %-10s %-6s %5d FAILED: %s\n", kernel.c_str(), path, fmt, batch,
                t.error.c_str());
    std::fflush(stdout);
    return;
  }
  const double ms = t.per_call_ms[t.per_call_ms.size() / 2];
  const double gbps = bytes / (ms * 1e-3) / 1e9;
  std::printf("%-28s %-10s %-6s %5d %10.1f %8.1f..%-8.1f %10.1f %8.1f %6.1f%% %s\n",
              kernel.c_str(), path, fmt, batch, ms * 1e3, t.per_call_ms.front() * 1e3,
              t.per_call_ms.back() * 1e3, bytes / 1e6, gbps,
              g_copy_gbps > 0 ? 100.0 * gbps / g_copy_gbps : 0.0, t.method.c_str());
  std::fflush(stdout);
}

// kSets routing sets for batch B. Small batches (B*K <= E/4: a call touches at most ~1/4 of
// the experts, hundreds of MB at most) alternate between the two halves of the experts, so
// consecutive calls share no expert and a call never finds the previous call's weights in
// L2; larger batches route uniformly over all experts (a call then reads over 1 GB, far
// beyond L2, and its number of distinct experts stays the uniform one).
std::vector<std::vector<int32_t>> RoutingSets(int B, int E, int K, std::mt19937& rng) {
  std::vector<std::vector<int32_t>> sets(kSets);
  const bool halves = B * K <= E / 4;
  for (int s = 0; s < kSets; ++s) {
    const int half = halves ? E / 2 : E, base = halves ? (s % 2) * half : 0;
    for (int t = 0; t < B; ++t) {
      std::vector<int> perm(half);
      for (int e = 0; e < half; ++e) perm[e] = base + e;
      std::shuffle(perm.begin(), perm.end(), rng);
      for (int j = 0; j < K; ++j) sets[s].push_back(perm[j]);
    }
  }
  return sets;
}

void BenchMoe(Fp4Format f, const std::vector<int>& batches, int arch) {
  const int D = 4096, I = 2048, E = 256, K = 6;
  const int block = f == Fp4Format::kMxfp4 ? 32 : 16;
  const bool nv = f == Fp4Format::kNvfp4;
  // MXFP4 UE8M0 codes 118..124 (2^-9 .. 2^-3); NVFP4 E4M3 codes 0x28..0x40 (~0.03 .. 2).
  const uint8_t slo = nv ? 0x28 : 118, shi = nv ? 0x40 : 124;
  const size_t w13_packed = size_t(E) * 2 * I * D / 2, w13_scales = size_t(E) * 2 * I * D / block;
  const size_t w2_packed = size_t(E) * D * I / 2, w2_scales = size_t(E) * D * I / block;
  MoeParams p;
  p.format = f; p.dim = D; p.inter = I; p.experts = E; p.topk = K; p.swiglu_limit = 7.f;
  p.w13.packed = static_cast<uint8_t*>(RandomDevice(w13_packed, 0, 255, 1));
  p.w13.scales = static_cast<uint8_t*>(RandomDevice(w13_scales, slo, shi, 2));
  p.w2.packed = static_cast<uint8_t*>(RandomDevice(w2_packed, 0, 255, 3));
  p.w2.scales = static_cast<uint8_t*>(RandomDevice(w2_scales, slo, shi, 4));
  if (nv) {
    p.w13.scale2 = Upload(std::vector<float>(E, 1e-3f));
    p.w2.scale2 = Upload(std::vector<float>(E, 1e-3f));
  }
  const double expert_bytes = double(2 * I * D + D * I) / 2 + double(2 * I * D + D * I) / block + (nv ? 8 : 0);
  const int max_b = *std::max_element(batches.begin(), batches.end());
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> x(size_t(max_b) * D);
  for (float& v : x) v = nd(rng);
  float* dx = Upload(x);
  float* dout = Upload(std::vector<float>(size_t(max_b) * D, 0.f));
  for (int B : batches) {
    const auto sets = RoutingSets(B, E, K, rng);
    std::vector<const int32_t*> dids;
    double unique_total = 0;
    for (const auto& ids : sets) {
      dids.push_back(Upload(ids));
      unique_total += std::set<int32_t>(ids.begin(), ids.end()).size();
    }
    const float* dw = Upload(std::vector<float>(size_t(B) * K, 1.f / K));
    const double bytes = unique_total / kSets * expert_bytes;
    for (const MoeCudaPath* p_path : qprof::kernels::cuda::MoeCudaPaths()) {
      const MoeCudaPath& path = *p_path;
      if (path.only_sm != 0 && path.only_sm != arch) continue;
      MoeParams q = p;
      q.tokens = B; q.x = dx; q.out = dout; q.topk_weights = dw; q.topk_ids = dids[0];
      const size_t wsb = qprof::kernels::cuda::MoeCudaWorkspaceBytes(q, path);
      void* ws = nullptr;
      CK(cudaMalloc(&ws, wsb + 16));
      const Timing t = TimeCalls([&](int i, cudaStream_t s) {
        MoeParams c = q;
        c.topk_ids = dids[i % kSets];
        return qprof::kernels::cuda::LaunchMoeCuda(c, path, ws, wsb, s);
      });
      cudaDeviceSynchronize();
      cudaGetLastError();
      const std::string name = std::string("moe.") + path.name;
      Row(name, path.name, nv ? "nvfp4" : "mxfp4", B, t, bytes);
      cudaFree(ws);
    }
    for (const int32_t* d : dids) cudaFree(const_cast<int32_t*>(d));
    cudaFree(const_cast<float*>(dw));
  }
  cudaFree(dx);
  cudaFree(dout);
  cudaFree(const_cast<uint8_t*>(p.w13.packed)); cudaFree(const_cast<uint8_t*>(p.w13.scales));
  cudaFree(const_cast<uint8_t*>(p.w2.packed)); cudaFree(const_cast<uint8_t*>(p.w2.scales));
  if (nv) {
    cudaFree(const_cast<float*>(p.w13.scale2));
    cudaFree(const_cast<float*>(p.w2.scale2));
  }
}

void BenchMla(const std::vector<int>& batches) {
  const int H = 64, sel = 512 + 128, dqk = 576;
  for (int B : batches) {
    const int stride = std::max(4096, int((256ull << 20) / (size_t(B) * dqk * 2)));
    SparseMlaParams p;
    p.batch = B; p.heads = H; p.topk = sel; p.kv_seq_stride = stride;
    p.softmax_scale = 1.f / 24.f;
    p.kv = static_cast<uint16_t*>(RandomDevice(size_t(B) * stride * dqk * 2, 0x30, 0x3F, 9));
    std::mt19937 rng(11);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> q(size_t(B) * H * dqk);
    for (float& v : q) v = nd(rng);
    p.q = Upload(q);
    std::vector<int32_t> lens(B, stride);
    p.seq_lens = Upload(lens);
    p.out = Upload(std::vector<float>(size_t(B) * H * 512, 0.f));
    std::vector<int32_t*> sets;
    for (int s = 0; s < kSets; ++s) {
      std::vector<int32_t> idx(size_t(B) * sel);
      for (int b = 0; b < B; ++b) {
        std::set<int> chosen;
        std::uniform_int_distribution<int> u(0, stride - 1);
        while (static_cast<int>(chosen.size()) < sel) chosen.insert(u(rng));
        int i = 0;
        for (int t : chosen) idx[size_t(b) * sel + i++] = t;
      }
      sets.push_back(Upload(idx));
    }
    const double bytes = double(B) * sel * dqk * 2;
    const size_t ws_bytes = qprof::kernels::cuda::SparseMlaMmaWorkspaceBytes(p);
    void* ws = nullptr;
    if (ws_bytes) CK(cudaMalloc(&ws, ws_bytes));
    for (int tensor = 0; tensor < 2; ++tensor) {
      const Timing t = TimeCalls([&](int i, cudaStream_t s) {
        SparseMlaParams c = p;
        c.indices = sets[i % kSets];
        return tensor ? qprof::kernels::cuda::LaunchSparseMlaMma(c, ws, ws_bytes, s)
                      : qprof::kernels::cuda::LaunchSparseMlaSimt(c, s);
      });
      cudaDeviceSynchronize();
      cudaGetLastError();
      Row(tensor ? "attn.sparse_mla.mma" : "attn.sparse_mla.simt", tensor ? "mma" : "simt",
          "bf16", B, t, bytes);
    }
    for (int32_t* s : sets) cudaFree(s);
    if (ws) cudaFree(ws);
    cudaFree(const_cast<uint16_t*>(p.kv));
    cudaFree(const_cast<float*>(p.q));
    cudaFree(const_cast<int32_t*>(p.seq_lens));
    cudaFree(p.out);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !absl::SimpleAtod(argv[1], &g_copy_gbps)) {
    std::fprintf(stderr, "usage: qprof_kernel_bench <copy_gbps> [batches=1,16,64]\n");
    return 2;
  }
  std::vector<int> batches = {1, 16, 64};
  if (argc > 2) {
    batches.clear();
    for (absl::string_view s : absl::StrSplit(argv[2], ',')) {
      int b = 0;
      if (!absl::SimpleAtoi(s, &b) || b < 1) {
        std::fprintf(stderr, "kernel_bench: bad batch '%s'\n", std::string(s).c_str());
        return 2;
      }
      batches.push_back(b);
    }
  }
  int arch = 0;
  absl::Status st = qprof::kernels::cuda::CurrentDeviceArch(&arch);
  if (!st.ok()) {
    std::fprintf(stderr, "kernel_bench: no CUDA device: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("# %d calls per timed window, %d windows, %d rotated input sets; median "
              "[min..max] per call\n", kCalls, kReplays, kSets);
  std::printf("%-28s %-10s %-6s %5s %10s %18s %10s %8s %7s %s\n", "kernel", "path", "format",
              "batch", "us/call", "spread (us)", "MB/call", "GB/s", "of copy", "method");
  BenchMoe(Fp4Format::kMxfp4, batches, arch);
  BenchMoe(Fp4Format::kNvfp4, batches, arch);
  BenchMla(batches);
  if (g_failed_rows > 0) {
    std::fprintf(stderr, "kernel_bench: %d row(s) FAILED\n", g_failed_rows);
    return 1;
  }
  return 0;
}
