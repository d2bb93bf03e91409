// Parameters of the sparse MLA decode kernel and the indexer, shared by the CPU
// references (kernels/mla/mla_cpu.h) and the CUDA variants (kernels/mla/cuda).
//
// Attention runs in the latent space (MLA with the up-projections absorbed, as in
// DeepSeek decode): each cached token holds one KV row of d_qk = d_v + rope_dim values:
// the normalised latent c (d_v = 512) then the rotated rope key k_pe (rope_dim = 64).
// For batch row b, head h, with the selected token set S_b = {indices[b, i] >= 0}:
//   score(t) = softmax_scale * (q[b,h,:d_v] . c_t + q[b,h,d_v:] . k_pe_t)
//   p = softmax over t in S_b (FP32, max-subtracted)
//   out[b,h,:] = sum_t p_t * c_t                            ([d_v], the value is c itself)
//   lse[b,h] = log(sum_t exp(score(t)))  (natural log; -inf when S_b is empty, out = 0)
//
// The indexer (DeepSeek-V3.2 "lightning indexer") picks S_b: for each cached token t < len_b
//   iscore(t) = sum_h w[b,h] * relu(iq[b,h,:] . ik_t)
// keeps the top index_topk tokens by iscore (ties: the lower index first), and then the
// most recent `window` tokens (t >= len_b - window) are added if not already chosen.
// indices[b, :] lists the chosen tokens in increasing order, padded with -1.
//
// KV layout: one contiguous region per sequence: row t of sequence b at
// kv[(b * kv_seq_stride + t) * d_qk]. BF16 storage (uint16_t bit patterns).
#ifndef QPROF_KERNELS_MLA_PARAMS_H_
#define QPROF_KERNELS_MLA_PARAMS_H_

#include <cstdint>

#include "kernels/common/params.h"

namespace qprof::kernels {

struct SparseMlaParams {
  int batch = 0;                     // B sequences (one query token each: decode)
  int heads = 0;                     // H query heads sharing the one latent KV head
  int d_v = 512;                     // latent width (value width)
  int d_qk = 576;                    // d_v + rope_dim
  int topk = 0;                      // width of `indices` per sequence
  int kv_seq_stride = 0;             // tokens reserved per sequence in kv
  float softmax_scale = 0.0f;        // 1/sqrt(d_qk) unless the model says otherwise

  const float* q = nullptr;          // [batch, heads, d_qk]
  const uint16_t* kv = nullptr;      // [batch, kv_seq_stride, d_qk] bf16
  const int32_t* seq_lens = nullptr; // [batch] valid cached tokens (indices must be < len)
  const int32_t* indices = nullptr;  // [batch, topk] selected token positions; -1 = padding

  float* out = nullptr;              // [batch, heads, d_v]
  float* lse = nullptr;              // [batch, heads] natural-log sum-exp; may be null

  ThreadPool* pool = nullptr;        // CPU workers; null = calling thread. Ignored by CUDA.
};

struct IndexerParams {
  int batch = 0;
  int index_heads = 0;               // Hi
  int index_dim = 0;                 // Di
  int index_topk = 0;                // tokens kept by score
  int window = 0;                    // most recent tokens always kept
  int kv_seq_stride = 0;             // tokens reserved per sequence in keys
  int out_topk = 0;                  // width of `indices` (>= min(len, index_topk + window))

  const float* q = nullptr;          // [batch, index_heads, index_dim] index queries
  const float* head_weights = nullptr;  // [batch, index_heads] w[b, h] (already scaled)
  const uint16_t* keys = nullptr;    // [batch, kv_seq_stride, index_dim] bf16 index keys
  const int32_t* seq_lens = nullptr; // [batch]

  float* scores = nullptr;           // [batch, kv_seq_stride] scratch/out: iscore per token
  int32_t* indices = nullptr;        // [batch, out_topk] chosen tokens ascending, -1 padded
  int32_t* counts = nullptr;         // [batch] number chosen; may be null

  ThreadPool* pool = nullptr;        // CPU workers; null = calling thread. Ignored by CUDA.
};

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_MLA_PARAMS_H_
