// Helpers for the GPU kernel tests: skip without a device, device buffers with NaN
// poisoning, relative error ||a - b|| / ||b|| (METHOD.md), seeded random fills.
#ifndef QPROF_TESTS_KERNELS_CUDA_GPU_TEST_UTIL_H_
#define QPROF_TESTS_KERNELS_CUDA_GPU_TEST_UTIL_H_

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/rel_error.h"

namespace qprof::testing_cuda {

inline bool HaveGpu(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    *why = "cudaGetDeviceCount returned 0";
    return false;
  }
  return true;
}

#define QPROF_SKIP_WITHOUT_GPU()                                        \
  do {                                                                  \
    std::string qprof_why_;                                             \
    if (!::qprof::testing_cuda::HaveGpu(&qprof_why_))                   \
      GTEST_SKIP() << "no CUDA device: " << qprof_why_;                 \
  } while (0)

#define QPROF_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

// A device copy of a host vector; Poison() fills it with 0xFF bytes (NaN for floats, -1 for
// ints) so that unwritten outputs are caught.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t n) : n_(n) {
    void* v = nullptr;
    if (cudaMalloc(&v, n * sizeof(T) + 16) == cudaSuccess) p_ = static_cast<T*>(v);
  }
  explicit DeviceBuffer(const std::vector<T>& h) : DeviceBuffer(h.size()) { Upload(h); }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }
  void Upload(const std::vector<T>& h) { cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice); }
  void Poison() { cudaMemset(p_, 0xFF, n_ * sizeof(T)); }
  std::vector<T> Download() const {
    std::vector<T> h(n_);
    cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
};

// ||got - want|| / ||want|| in double (tests/kernels/rel_error.h): +inf if any value of
// `got` is NaN/Inf, or non-zero against an all-zero reference beyond a stated bound.
using ::qprof::kernel_test::RelError;

inline std::vector<float> RandomFloats(size_t n, std::mt19937& rng, float scale = 1.f) {
  std::normal_distribution<float> d(0.f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

}  // namespace qprof::testing_cuda

#endif  // QPROF_TESTS_KERNELS_CUDA_GPU_TEST_UTIL_H_
