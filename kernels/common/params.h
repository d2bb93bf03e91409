// Parameters of the small dense kernels of the decode step (embedding, RMSNorm, rope,
// BF16 projections, router top-k, argmax), shared by the CPU references (kernels/common)
// and the CUDA variants. Plain structs in the FlashMLA style: every pointer carries its
// shape in a comment, dims are explicit, nothing is owned.
//
// Conventions for every params struct under kernels/:
//  - Activations are FP32 on the CPU ([rows, cols] row-major). CUDA kernels may take a
//    BF16 copy where a field says so; the CPU ignores those fields.
//  - BF16 tensors are stored as uint16_t bit patterns (the upper half of an FP32).
//  - Weight matrices are [n, k] row-major (k contiguous), as in the checkpoints: y = W x.
//  - Output pointers are written, never read, unless the field says "accumulated".
#ifndef QPROF_KERNELS_COMMON_PARAMS_H_
#define QPROF_KERNELS_COMMON_PARAMS_H_

#include <cstdint>

namespace qprof::kernels {

class ThreadPool;  // kernels/common/thread_pool.h

// FP4 weight formats of the expert weights (kernels/formats).
enum class Fp4Format : int { kMxfp4 = 0, kNvfp4 = 1 };

// Elements per scale block: 32 for MXFP4 (UE8M0 scales), 16 for NVFP4 (E4M3 scales).
inline constexpr int BlockSize(Fp4Format f) { return f == Fp4Format::kMxfp4 ? 32 : 16; }
inline constexpr const char* FormatName(Fp4Format f) {
  return f == Fp4Format::kMxfp4 ? "mxfp4" : "nvfp4";
}

// x = table[ids]: embedding lookup.
struct EmbeddingParams {
  int rows = 0;                  // tokens
  int dim = 0;
  int vocab = 0;
  const int32_t* ids = nullptr;  // [rows], each in [0, vocab)
  const uint16_t* table = nullptr;  // [vocab, dim] bf16
  float* out = nullptr;          // [rows, dim]
};

// out = x / sqrt(mean(x^2) + eps) * weight, per row.
struct RmsNormParams {
  int rows = 0;
  int cols = 0;
  int x_stride = 0;              // elements between rows of x (>= cols; 0 = cols)
  int out_stride = 0;            // elements between rows of out (0 = cols)
  float eps = 1e-6f;
  const float* x = nullptr;      // [rows, x_stride]
  const uint16_t* weight = nullptr;  // [cols] bf16
  float* out = nullptr;          // [rows, out_stride]; may alias x when strides match
};

// Rotary embedding (interleaved pairs, DeepSeek style: (x[2i], x[2i+1]) rotated by
// angle pos * theta^(-2i/rope_dim)) applied in place to `heads` vectors per row.
struct RopeParams {
  int rows = 0;                  // tokens
  int heads = 0;                 // vectors per row to rotate
  int rope_dim = 0;              // even
  int head_stride = 0;           // elements between consecutive heads' rope parts
  int row_stride = 0;            // elements between rows
  float theta = 10000.0f;
  const int32_t* positions = nullptr;  // [rows]
  float* x = nullptr;            // rope part of head h of row r at x[r*row_stride + h*head_stride]
};

// y = W x for a BF16 weight: the dense projections (q_a, q_b, kv_a, o_a, o_b, indexer
// projections, router gate, LM head).
struct DenseGemmParams {
  int m = 0;                     // rows of x (tokens)
  int n = 0;                     // output features
  int k = 0;                     // input features
  const float* x = nullptr;      // [m, k]
  const uint16_t* w = nullptr;   // [n, k] bf16
  float* y = nullptr;            // [m, n]; accumulated (y += W x) when `accumulate`
  bool accumulate = false;       // residual add fused into the projection
  ThreadPool* pool = nullptr;    // CPU workers; null = calling thread. Ignored by CUDA.
};

// Router (DeepSeek-V3 style): scores = sigmoid(logits); choose top-k of (scores + bias);
// weights = scores of the chosen experts renormalised to sum 1, times route_scale.
// NaN counts as -inf (kernels/common/router_math.h, shared by the CPU and CUDA kernels):
// such experts are chosen last, by index, with weight 0; ids are always in range.
struct RouterTopkParams {
  int tokens = 0;
  int experts = 0;
  int topk = 0;
  float route_scale = 1.0f;
  const float* logits = nullptr;     // [tokens, experts] (the gate projection's output)
  const float* bias = nullptr;       // [experts] selection-only bias; may be null
  int32_t* topk_ids = nullptr;       // [tokens, topk], ordered by descending score
  float* topk_weights = nullptr;     // [tokens, topk]
};

// Greedy sampling: ids[r] = argmax_j logits[r, j] (lowest index on ties).
struct ArgmaxParams {
  int rows = 0;
  int cols = 0;
  const float* logits = nullptr;     // [rows, cols]
  int32_t* ids = nullptr;            // [rows]
};

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_COMMON_PARAMS_H_
