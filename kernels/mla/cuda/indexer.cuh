// Indexer (DeepSeek-V3.2 lightning indexer) on CUDA: scoring then top-k selection.
//  qprof_attn_indexer_score: block = 16 cached tokens x all index heads of one sequence;
//    the tile's keys (BF16 -> FP32) and the sequence's queries sit in shared memory; thread
//    (token, group of 16 heads) accumulates sum_h w_h * relu(q_h . k_t), reduced over the 16
//    lanes of a token. index_dim <= 128, index_heads <= 64 (checked by the launcher).
//  qprof_attn_indexer_topk: block per sequence; rank of token t = #{u: s_u > s_t or (s_u ==
//    s_t and u < t)} (the CPU's tie rule), chosen if rank < index_topk or t is in the
//    window; a block-wide prefix count writes the chosen tokens in increasing order, -1 padded.
//    O(len^2) comparisons from shared memory: fine for decode contexts (len <= 12288).
#ifndef QPROF_KERNELS_MLA_CUDA_INDEXER_CUH_
#define QPROF_KERNELS_MLA_CUDA_INDEXER_CUH_

#include <stdint.h>

#include "kernels/mla/cuda/indexer_math.h"  // constants and the per-thread math

#endif  // QPROF_KERNELS_MLA_CUDA_INDEXER_CUH_
