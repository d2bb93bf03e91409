// What the stand-in CUDA driver (libcuda_standin.cc) offers a test program besides the
// driver functions it emulates: "launches" on the fake GPU, NVTX ranges, a device reset.
// Each returns 0 on success. Without the injection library (no CUPTI loaded) they do
// nothing, as a real GPU runs kernels nobody records.
#ifndef QPROF_TESTS_PROFILER_CUPTI_FAKE_FAKE_GPU_APP_API_H_
#define QPROF_TESTS_PROFILER_CUPTI_FAKE_FAKE_GPU_APP_API_H_

#include <cstdint>

extern "C" {
int qprofFakeLaunchKernel(const char* name, unsigned stream, unsigned duration_ns);
// With a grid (CTAs; 0: the fake's own function of the name).
int qprofFakeLaunchKernelGrid(const char* name, unsigned stream, unsigned grid,
                              unsigned duration_ns);
// Stream capture into a graph, its instantiation (returns the executable graph, 0 when
// nothing was captured) and its replay.
int qprofFakeBeginCapture(unsigned stream);
uint64_t qprofFakeEndCaptureAndInstantiate(unsigned stream);
int qprofFakeLaunchGraphExec(uint64_t exec, unsigned stream);
int qprofFakeGraphLaunch(const char* const* names, int n, unsigned stream);
int qprofFakeMemcpy(unsigned copy_kind, uint64_t bytes, unsigned stream);
int qprofFakeMemset(uint64_t bytes, unsigned stream);
void qprofFakeNvtxPush(const char* domain, const char* name);  // domain "" = default
void qprofFakeNvtxPop(const char* domain);
void qprofFakeSynchronize();   // cudaDeviceSynchronize
void qprofFakeDeviceReset();   // cudaDeviceReset: the primary context is destroyed
}

#endif  // QPROF_TESTS_PROFILER_CUPTI_FAKE_FAKE_GPU_APP_API_H_
