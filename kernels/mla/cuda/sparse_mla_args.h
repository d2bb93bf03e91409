// Kernel arguments of the CUDA sparse MLA decode kernels (SIMT and tensor-core) and of the
// split-K combine. A plain struct (no CUDA headers): the launchers fill it, and the CPU warp
// emulation passes it to the same kernel bodies.
#ifndef QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_ARGS_H_
#define QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_ARGS_H_

#include <cstdint>

namespace qprof::kernels::cuda {

struct SparseMlaArgs {
  const float* q;          // [batch, heads, 576]
  const uint16_t* kv;      // [batch, kv_seq_stride, 576] bf16
  const int32_t* indices;  // [batch, topk]
  float* out;              // [batch, heads, 512]
  float* lse;              // [batch, heads] or null
  int heads, topk, kv_seq_stride;
  float softmax_scale;
  // Split-K over token tiles (tensor-core kernel only; 1 = off). With splits > 1 block z
  // handles its share of the tiles and writes unnormalised partials, merged by
  // qprof_attn_sparse_mla_mma_combine.
  int splits = 1;
  float* part_o = nullptr;   // [batch, heads, splits, 512]
  float* part_ml = nullptr;  // [batch, heads, splits, 2] (running max m, sum l)
};

}  // namespace qprof::kernels::cuda

#endif  // QPROF_KERNELS_MLA_CUDA_SPARSE_MLA_ARGS_H_
