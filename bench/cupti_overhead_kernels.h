// Launchers for the CUPTI overhead benchmark's kernels (plain C++ interface so the host
// side is compiled by the C++ compiler). Return a cudaError_t value (0 = success).
#ifndef QPROF_BENCH_CUPTI_OVERHEAD_KERNELS_H_
#define QPROF_BENCH_CUPTI_OVERHEAD_KERNELS_H_

#include <cstddef>

int BenchLaunchStepKernel(const float* weights, const float* act, float* out, size_t n,
                          int batch, int sm_count);
int BenchLaunchTinyKernel(float* out);
// On a given cudaStream_t (passed as void* to keep CUDA types out of this header).
int BenchLaunchTinyKernelOn(float* out, void* stream);
// GridKernelA (which = 0) or GridKernelB (1) with `grid` blocks of 32 threads on `stream`
// (nullptr: the current context's default stream); `out` may be null (nothing written).
int BenchLaunchGridKernel(int which, float* out, int grid, void* stream);

#endif  // QPROF_BENCH_CUPTI_OVERHEAD_KERNELS_H_
