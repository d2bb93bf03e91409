// Kernels for bench/cupti_overhead.cc: a synthetic decode step (weight streaming per
// layer at a given batch) and a tiny kernel for the 100k-launch dropped-record test.
#include <cuda_runtime.h>

#include "bench/cupti_overhead_kernels.h"

namespace {

// Reads `weights` (n floats) once and does `batch` FMAs per weight against the activation
// row: memory-bound like a decode GEMV, with compute growing with the batch.
__global__ void StepKernel(const float* __restrict__ weights, const float* __restrict__ act,
                           float* __restrict__ out, size_t n, int batch) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float w = weights[i];
    for (int b = 0; b < batch; ++b) acc = fmaf(w, act[(i + b) & 4095], acc);
  }
  if (acc == 12345.678f) out[0] = acc;  // keeps the loop alive; practically never taken
}

__global__ void TinyKernel(float* out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] += 1.f;
}

// Two kernels of their own names for tests that tell ranges apart by name and CTA count.
__global__ void GridKernelA(float* out) {
  if (out != nullptr && threadIdx.x == 0 && blockIdx.x == 0) out[0] += 1.f;
}
__global__ void GridKernelB(float* out) {
  if (out != nullptr && threadIdx.x == 0 && blockIdx.x == 0) out[0] += 2.f;
}

}  // namespace

int BenchLaunchStepKernel(const float* weights, const float* act, float* out, size_t n,
                          int batch, int sm_count) {
  StepKernel<<<sm_count * 4, 256>>>(weights, act, out, n, batch);
  return static_cast<int>(cudaGetLastError());
}

int BenchLaunchTinyKernelOn(float* out, void* stream) {
  TinyKernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(out);
  return static_cast<int>(cudaGetLastError());
}

int BenchLaunchTinyKernel(float* out) {
  TinyKernel<<<1, 32>>>(out);
  return static_cast<int>(cudaGetLastError());
}

int BenchLaunchGridKernel(int which, float* out, int grid, void* stream) {
  if (which == 0) {
    GridKernelA<<<grid, 32, 0, static_cast<cudaStream_t>(stream)>>>(out);
  } else {
    GridKernelB<<<grid, 32, 0, static_cast<cudaStream_t>(stream)>>>(out);
  }
  return static_cast<int>(cudaGetLastError());
}
