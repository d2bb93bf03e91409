// Times the CUDA MoE and sparse-MLA kernels at DeepSeek-V4-Flash shapes (dim 4096, inter
// 2048, 256 experts top-6; 64 heads, 512 + 128 selected tokens) and prints one table row
// per (kernel path, format, batch): median time per call over 20 timed calls (CUDA events,
// after 3 warm-up calls), the bytes the call must move (MoE: weights of the distinct
// experts routed to, scales included; MLA: the selected KV rows, 1152 bytes each), achieved
// GB/s on those bytes and its share of the measured copy bandwidth (argument 1, GB/s).
// Inputs are random (never zeros); expert weights (3+ GB per format) and KV caches (>= 256
// MB) are far larger than L2, and MLA rotates 8 index sets, so the numbers are DRAM-bound.
// usage: qprof_kernel_bench <copy_gbps> [batches=1,16,64]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/mla/cuda/mla_cuda.h"
#include "kernels/moe/cuda/moe_cuda.h"

namespace {

using qprof::kernels::Fp4Format;
using qprof::kernels::MoeParams;
using qprof::kernels::SparseMlaParams;
using qprof::kernels::cuda::MoeCudaPath;

double g_copy_gbps = 0;

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

template <typename Fn>
double MedianMs(Fn&& fn) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) fn(i);
  CK(cudaDeviceSynchronize());
  std::vector<float> ms(20);
  for (size_t i = 0; i < ms.size(); ++i) {
    CK(cudaEventRecord(a));
    fn(static_cast<int>(i));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms[i], a, b));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void Row(const char* kernel, const char* path, const char* fmt, int batch, double ms,
         double bytes) {
  const double gbps = bytes / (ms * 1e-3) / 1e9;
  std::printf("%-34s %-10s %-6s %5d %10.1f %12.1f %9.1f %7.1f%%\n", kernel, path, fmt, batch,
              ms * 1e3, bytes / 1e6, gbps, g_copy_gbps > 0 ? 100.0 * gbps / g_copy_gbps : 0.0);
  std::fflush(stdout);
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
    std::vector<int32_t> ids(size_t(B) * K);
    std::vector<float> w(ids.size(), 1.f / K);
    std::set<int> unique;
    for (int t = 0; t < B; ++t) {
      std::vector<int> perm(E);
      for (int e = 0; e < E; ++e) perm[e] = e;
      std::shuffle(perm.begin(), perm.end(), rng);
      for (int j = 0; j < K; ++j) { ids[t * K + j] = perm[j]; unique.insert(perm[j]); }
    }
    p.tokens = B; p.x = dx; p.out = dout;
    p.topk_ids = Upload(ids);
    p.topk_weights = Upload(w);
    const double bytes = unique.size() * expert_bytes;
    for (MoeCudaPath path : {MoeCudaPath::kSlotGemv, MoeCudaPath::kW4a16Mma, MoeCudaPath::kFp4Mma}) {
      if (path == MoeCudaPath::kFp4Mma && arch != 120) continue;
      const size_t wsb = qprof::kernels::cuda::MoeCudaWorkspaceBytes(p, path);
      void* ws = nullptr;
      CK(cudaMalloc(&ws, wsb));
      bool ok = true;
      const double ms = MedianMs([&](int) {
        absl::Status s = qprof::kernels::cuda::LaunchMoeCuda(p, path, ws, wsb, nullptr);
        if (!s.ok() && ok) { std::fprintf(stderr, "kernel_bench: %s\n", s.ToString().c_str()); ok = false; }
      });
      CK(cudaDeviceSynchronize());
      if (ok) {
        const std::string name = std::string("moe.") + qprof::kernels::cuda::MoeCudaPathName(path);
        Row(name.c_str(), qprof::kernels::cuda::MoeCudaPathName(path), nv ? "nvfp4" : "mxfp4", B, ms, bytes);
      }
      cudaFree(ws);
    }
    cudaFree(const_cast<int32_t*>(p.topk_ids));
    cudaFree(const_cast<float*>(p.topk_weights));
  }
  cudaFree(const_cast<uint8_t*>(p.w13.packed)); cudaFree(const_cast<uint8_t*>(p.w13.scales));
  cudaFree(const_cast<uint8_t*>(p.w2.packed)); cudaFree(const_cast<uint8_t*>(p.w2.scales));
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
    for (int s = 0; s < 8; ++s) {
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
      bool ok = true;
      const double ms = MedianMs([&](int i) {
        p.indices = sets[i % sets.size()];
        absl::Status s = tensor ? qprof::kernels::cuda::LaunchSparseMlaMma(p, ws, ws_bytes, nullptr)
                                : qprof::kernels::cuda::LaunchSparseMlaSimt(p, nullptr);
        if (!s.ok() && ok) { std::fprintf(stderr, "kernel_bench: %s\n", s.ToString().c_str()); ok = false; }
      });
      CK(cudaDeviceSynchronize());
      if (ok) Row(tensor ? "attn.sparse_mla.mma" : "attn.sparse_mla.simt", tensor ? "mma" : "simt", "bf16", B, ms, bytes);
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
      if (absl::SimpleAtoi(s, &b) && b > 0) batches.push_back(b);
    }
  }
  int arch = 0;
  absl::Status st = qprof::kernels::cuda::CurrentDeviceArch(&arch);
  if (!st.ok()) {
    std::fprintf(stderr, "kernel_bench: no CUDA device: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("%-34s %-10s %-6s %5s %10s %12s %9s %8s\n", "kernel", "path", "format", "batch",
              "us/call", "MB moved", "GB/s", "of copy");
  BenchMoe(Fp4Format::kMxfp4, batches, arch);
  BenchMoe(Fp4Format::kNvfp4, batches, arch);
  BenchMla(batches);
  return 0;
}
