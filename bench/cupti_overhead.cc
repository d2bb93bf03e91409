// Collector overhead and record loss, measured on the GPU (device-check script; not a test).
//
// 1. Overhead: a synthetic decode step (layers x kernels_per_layer weight-streaming kernels
//    at batch B, NVTX ranges per step and layer, one sync per step as a sampler would)
//    is timed without the collector, with the CUPTI collector in trace mode, and without
//    again, in one process. Step time = host wall time of launch + sync (so CPU-side
//    tracing cost shows up). ratio = median(with) / median(without both phases).
//    Target: overhead <= 3% at batch 16.
// 2. Loss: 100k tiny kernels launched back to back with the collector on; counts kernel
//    records received and records dropped. Target: 0 dropped, all 100k seen.
//
// usage: qprof_cupti_overhead [--batch 16] [--steps 40] [--layers 43] [--kernels 100000]
// Prints "key value" lines; exits 1 when a target is missed.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/absl_fmt.h"
#include "bench/cupti_overhead_kernels.h"
#include "fmt/core.h"
#include "profiler/cupti/cupti_collector.h"

namespace {

using qprof::profiler::cupti::CuptiOptions;
using qprof::profiler::cupti::MakeCuptiCollector;

struct Args {
  int batch = 16;
  int steps = 40;
  int layers = 43;
  int kernels_per_layer = 8;
  int tiny_kernels = 100000;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Workload {
  std::vector<float*> weights;  // a ring of buffers larger than L2, so reads hit DRAM
  float* act = nullptr;
  float* out = nullptr;
  size_t n = 0;
  int sm_count = 0;
};

// One decode step; returns wall milliseconds (launch + sync), or -1 on a CUDA error.
double Step(const Workload& w, const Args& a, int step) {
  const auto t0 = std::chrono::steady_clock::now();
  nvtxRangePushA(("step " + std::to_string(step)).c_str());
  for (int l = 0; l < a.layers; ++l) {
    nvtxRangePushA(("layer " + std::to_string(l)).c_str());
    for (int k = 0; k < a.kernels_per_layer; ++k) {
      const float* weights = w.weights[(l * a.kernels_per_layer + k) % w.weights.size()];
      if (BenchLaunchStepKernel(weights, w.act, w.out, w.n, a.batch, w.sm_count) != 0) return -1;
    }
    nvtxRangePop();
  }
  nvtxRangePop();
  if (cudaDeviceSynchronize() != cudaSuccess) return -1;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

bool Phase(const Workload& w, const Args& a, int first_step, std::vector<double>* ms) {
  for (int s = 0; s < a.steps; ++s) {
    const double t = Step(w, a, first_step + s);
    if (t < 0) return false;
    ms->push_back(t);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  qprof::profiler::cupti::RouteNvtxToCupti();  // before the first NVTX call below
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--batch") a.batch = v;
    else if (k == "--steps") a.steps = v;
    else if (k == "--layers") a.layers = v;
    else if (k == "--kernels") a.tiny_kernels = v;
  }
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    fmt::print(stderr, "cupti_overhead: no CUDA device\n");
    return 2;
  }
  Workload w;
  w.sm_count = prop.multiProcessorCount;
  w.n = (64u << 20) / sizeof(float);  // 64 MiB per kernel: ~15 us at H200 bandwidth
  for (int i = 0; i < 8; ++i) {
    float* p = nullptr;
    if (cudaMalloc(&p, w.n * sizeof(float)) != cudaSuccess) return 2;
    cudaMemset(p, 0, w.n * sizeof(float));
    w.weights.push_back(p);
  }
  cudaMalloc(&w.act, 4096 * sizeof(float));
  cudaMalloc(&w.out, sizeof(float));
  cudaMemset(w.act, 0, 4096 * sizeof(float));
  fmt::print("device {}\nbatch {}\nlayers {}\nkernels_per_step {}\n", prop.name, a.batch,
             a.layers, a.layers * a.kernels_per_layer);

  std::vector<double> warm, without, with;
  Args warm_args = a;
  warm_args.steps = 5;
  if (!Phase(w, warm_args, 0, &warm) || !Phase(w, a, 100, &without)) return 2;
  auto collector = MakeCuptiCollector(CuptiOptions{});
  if (!collector.ok() || !(*collector)->Start().ok()) {
    fmt::print(stderr, "cupti_overhead: collector did not start\n");
    return 2;
  }
  if (!Phase(w, a, 200, &with)) return 2;
  (void)(*collector)->Stop();
  qprof::proto::Trace trace;
  (void)(*collector)->Flush(&trace);
  if (!Phase(w, a, 300, &without)) return 2;

  const double base = Median(without), traced = Median(with);
  const double overhead_pct = base > 0 ? (traced / base - 1) * 100 : 0;
  int kernels = 0;
  int with_path = 0;
  for (const auto& act : trace.activities()) {
    if (act.kind() != qprof::proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    with_path += act.nvtx_path().rfind("step ", 0) == 0;
  }
  fmt::print("step_ms_without {:.3f}\nstep_ms_with {:.3f}\noverhead_pct {:.2f}\n", base, traced,
             overhead_pct);
  fmt::print("traced_kernels {} (expected {})\nkernels_with_nvtx_path {}\n", kernels,
             a.steps * a.layers * a.kernels_per_layer, with_path);
  fmt::print("trace_records_dropped {}\n", trace.header().collector().records_dropped());
  bool ok = overhead_pct <= 3.0;
  fmt::print("overhead_target_3pct {}\n", ok ? "PASS" : "FAIL");

  // 2. 100k kernels, no per-step sync (worst case for buffer turnover).
  auto loss = MakeCuptiCollector(CuptiOptions{});
  if (!loss.ok() || !(*loss)->Start().ok()) return 2;
  for (int i = 0; i < a.tiny_kernels; ++i) {
    if (BenchLaunchTinyKernel(w.out) != 0) return 2;
  }
  cudaDeviceSynchronize();
  (void)(*loss)->Stop();
  qprof::proto::Trace loss_trace;
  (void)(*loss)->Flush(&loss_trace);
  int tiny = 0;
  for (const auto& act : loss_trace.activities()) tiny += act.kind() == qprof::proto::ACTIVITY_KIND_KERNEL;
  const auto& s = loss_trace.header().collector();
  fmt::print("loss_kernels_launched {}\nloss_kernels_seen {}\nloss_records_dropped {}\n"
             "loss_records_invalid {}\nloss_buffers {}\nloss_overhead_ns {}\n",
             a.tiny_kernels, tiny, s.records_dropped(), s.records_invalid(),
             s.buffers_allocated(), s.overhead_ns());
  const bool no_loss = s.records_dropped() == 0 && tiny == a.tiny_kernels;
  fmt::print("dropped_target_0 {}\n", no_loss ? "PASS" : "FAIL");
  return ok && no_loss ? 0 : 1;
}
