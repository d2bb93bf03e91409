// Work models of the registered kernel families: bytes that must cross memory and FLOPs
// on the compute pipe, from a launch's named dims (KernelShape). Shared by the registry
// entries and the decode plan, so a measured run and a modelled plan count the same way.
//
// Shape keys per family (missing keys count as 0 unless stated):
//   moe.*            tokens, topk, experts, dim, inter, unique_experts (grouped paths;
//                    default min(experts, tokens*topk))
//   attn.sparse_mla  batch, heads, selected (tokens attended per sequence), d_qk, d_v
//   attn.indexer     batch, context (cached tokens scored per sequence), index_heads,
//                    index_dim, selected
//   attn.kv_append   batch, d_qk, index_dim
//   gemm.*           m, n, k
//   norm.rmsnorm     rows, cols;  rope: rows, heads, rope_dim
//   moe.router       tokens, experts, dim, topk
//   embedding        rows, dim;   sampling.argmax: rows, cols
//   comm.allreduce   bytes (message per rank), ranks
// Activations and KV entries move as BF16 (2 bytes), as on the GPU backend; weights of
// the dense kernels are BF16; expert weights are FP4 at the format's bits per weight
// including block scales (MXFP4 4.25, NVFP4 4.5 plus one FP32 tensor scale per matrix;
// format::BitsPerWeight in proto/vocabulary.h, the one definition).
//
// Parts (the *Part functions): a call that launches several CUDA kernels splits its work
// among them; each term of the call's model goes to exactly one kernel, so the parts sum
// to the call (tests/kernels/registry_test.cc holds every variant to that).
#ifndef QPROF_KERNELS_REGISTRY_WORK_MODELS_H_
#define QPROF_KERNELS_REGISTRY_WORK_MODELS_H_

#include <string>
#include <vector>

#include "kernels/registry/registry.h"
#include "proto/trace.pb.h"

namespace qprof::kernels {

// Bytes of one expert's W13 + W2 (3 * inter * dim weights) in `format`.
double ExpertWeightBytes(const std::string& format, double dim, double inter);

// `reuse` false: weights read once per (token, slot) (slot path); true: once per unique
// expert (grouped / MMA paths).
proto::WorkModel MoeWork(const KernelShape& s, const std::string& format, bool reuse,
                         const std::string& compute_pipe);
proto::WorkModel SparseMlaWork(const KernelShape& s, const std::string& compute_pipe);
proto::WorkModel IndexerWork(const KernelShape& s);
proto::WorkModel KvAppendWork(const KernelShape& s);
proto::WorkModel DenseGemmWork(const KernelShape& s);
proto::WorkModel RmsNormWork(const KernelShape& s);
proto::WorkModel RopeWork(const KernelShape& s);
proto::WorkModel RouterWork(const KernelShape& s);
proto::WorkModel EmbeddingWork(const KernelShape& s);
proto::WorkModel ArgmaxWork(const KernelShape& s);
proto::WorkModel AllReduceWork(const KernelShape& s);

// Terms of a MoE call (MoeWork) as bits, to be given to the kernels that move them.
enum MoeTerm : unsigned {
  kMoeIds = 1,         // routing ids and weights, read
  kMoeInput = 2,       // x, read
  kMoeGateUp = 4,      // W13 weights (2/3 of an expert's), their FLOPs and FP4 decode,
                       // and the SwiGLU hidden state written
  kMoeDown = 8,        // W2 weights (1/3), their FLOPs and decode
  kMoeHiddenRead = 16, // the hidden state read back by the down projection
  kMoeOutput = 32,     // out, read and written (the residual add)
};
WorkFn MoePart(const std::string& format, bool reuse, const std::string& compute_pipe,
               unsigned terms);
// The router: its gate projection (weights, x, FLOPs) or its top-k (ids out, scoring).
WorkFn RouterPart(bool gate);
// The indexer: scoring (keys, queries, head weights, FLOPs) or top-k (the scores and the
// selected ids; the scores cross memory twice, the call's model counts them once, here).
WorkFn IndexerPart(bool score);
// Sparse MLA: everything but the output write, or the output write alone (the split-K
// combine; without a split the main kernel writes it and gets this part back).
WorkFn SparseMlaPart(const std::string& compute_pipe, bool output_only);
// Sum of work models (bytes and FLOPs by kind; the compute pipe of the first with FLOPs).
proto::WorkModel SumWork(const std::vector<proto::WorkModel>& parts);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_WORK_MODELS_H_
