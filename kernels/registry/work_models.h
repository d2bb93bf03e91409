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
// including block scales (MXFP4 4.25, NVFP4 4.5 plus one FP32 tensor scale per matrix).
#ifndef QPROF_KERNELS_REGISTRY_WORK_MODELS_H_
#define QPROF_KERNELS_REGISTRY_WORK_MODELS_H_

#include <string>

#include "kernels/registry/registry.h"
#include "proto/trace.pb.h"

namespace qprof::kernels {

// Bits per weight including block scales; 16 for "bf16", 0 for unknown.
double BitsPerWeight(const std::string& format);

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

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_WORK_MODELS_H_
