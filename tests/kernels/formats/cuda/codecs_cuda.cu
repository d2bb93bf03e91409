// Runs the shared codecs (kernels/formats/fp4_codecs.h) in device code, so the same
// inline functions are compiled by nvcc and checked against the host results.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/formats/fp4_codecs.h"
#include "tests/kernels/formats/cuda/codecs_cuda.h"

namespace qprof::fp4::testing {
namespace {

__global__ void CodecKernel(const float* in, int n, uint8_t* e2m1, uint8_t* e4m3,
                            float* decoded) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    e2m1[i] = FloatToE2M1(in[i]);
    e4m3[i] = FloatToE4M3(in[i]);
  }
  if (i < 256) {
    const uint8_t c = static_cast<uint8_t>(i);
    decoded[i] = E4M3ToFloat(c);
    decoded[256 + i] = Ue8m0ToFloat(c);
    if (i < 16) decoded[512 + i] = E2M1ToFloat(c);
  }
}

}  // namespace

int DeviceCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::string RunCodecsOnDevice(const std::vector<float>& in, std::vector<uint8_t>* e2m1,
                              std::vector<uint8_t>* e4m3, std::vector<float>* decoded) {
  const int n = static_cast<int>(in.size());
  float* d_in = nullptr;
  float* d_dec = nullptr;
  uint8_t* d_codes = nullptr;
  cudaError_t err = cudaMalloc(&d_in, n * sizeof(float));
  if (err == cudaSuccess) err = cudaMalloc(&d_codes, 2 * n);
  if (err == cudaSuccess) err = cudaMalloc(&d_dec, 528 * sizeof(float));
  if (err == cudaSuccess) err = cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  if (err == cudaSuccess) {
    const int threads = 256, blocks = (std::max(n, 256) + threads - 1) / threads;
    CodecKernel<<<blocks, threads>>>(d_in, n, d_codes, d_codes + n, d_dec);
    err = cudaGetLastError();
  }
  e2m1->resize(n);
  e4m3->resize(n);
  decoded->resize(528);
  if (err == cudaSuccess) err = cudaMemcpy(e2m1->data(), d_codes, n, cudaMemcpyDeviceToHost);
  if (err == cudaSuccess) err = cudaMemcpy(e4m3->data(), d_codes + n, n, cudaMemcpyDeviceToHost);
  if (err == cudaSuccess) {
    err = cudaMemcpy(decoded->data(), d_dec, 528 * sizeof(float), cudaMemcpyDeviceToHost);
  }
  cudaFree(d_in);
  cudaFree(d_codes);
  cudaFree(d_dec);
  return err == cudaSuccess ? "" : cudaGetErrorString(err);
}

}  // namespace qprof::fp4::testing
