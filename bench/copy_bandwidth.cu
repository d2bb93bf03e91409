// Measured copy bandwidth of the device (METHOD.md "two numbers"): a large device-to-device
// copy, counting bytes read plus bytes written, median of repeated timed copies (CUDA
// events) after a warm-up. The buffer (1 GiB each way by default) is far larger than L2, so
// this is DRAM bandwidth. Prints one line: `copy_bandwidth_gbps <GB/s> bytes <n> reps <r>`.
// usage: qprof_copy_bandwidth [MiB]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                            \
  do {                                                                      \
    cudaError_t e = (x);                                                    \
    if (e != cudaSuccess) {                                                 \
      std::fprintf(stderr, "copy_bandwidth: %s: %s\n", #x, cudaGetErrorString(e)); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const size_t bytes = mib << 20;
  void *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 0x5A, bytes));  // non-zero data
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i) CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
  CHECK(cudaDeviceSynchronize());
  const int reps = 20;
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i) {
    CHECK(cudaEventRecord(e0));
    CHECK(cudaMemcpyAsync(i % 2 ? a : b, i % 2 ? b : a, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaEventElapsedTime(&ms[i], e0, e1));
  }
  std::sort(ms.begin(), ms.end());
  const double med = ms[reps / 2];
  const double gbps = 2.0 * bytes / (med * 1e-3) / 1e9;  // read + write
  std::printf("copy_bandwidth_gbps %.1f bytes %zu reps %d min_ms %.3f median_ms %.3f max_ms %.3f\n",
              gbps, bytes, reps, ms[0], med, ms[reps - 1]);
  cudaFree(a);
  cudaFree(b);
  return 0;
}
