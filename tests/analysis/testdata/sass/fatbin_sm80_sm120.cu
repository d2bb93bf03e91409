#include <cuda_bf16.h>
__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void mma_bf16(const unsigned* a, const unsigned* b, float* c) {
  float d[4] = {0, 0, 0, 0};
  unsigned A[4] = {a[0], a[1], a[2], a[3]}, B[2] = {b[0], b[1]};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]));
  for (int i = 0; i < 4; ++i) c[threadIdx.x * 4 + i] = d[i];
}
namespace ns { template <int N> __global__ void tmpl(float* p) { p[threadIdx.x] *= N; } template __global__ void tmpl<4>(float*); }
