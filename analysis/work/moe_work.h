// The work of one MoE layer call from the model's shape (model_shape.h) and the token count
// its recorded shapes give. Per GPU, with the expert intermediate size split over
// tensor_parallel_size GPUs:
//
//   experts touched  E_t = E * (1 - (1 - k/E)^T)   expected distinct routed experts when each
//                    of T tokens picks k of E uniformly: an ASSUMPTION (real routers are
//                    skewed; fewer distinct experts means fewer bytes), stated in every
//                    description that uses it
//   weights read     (E_t * 3*h*i + S * 3*h*i_s) * bpw / 8   gated MLP: w1 and w3 [i, h],
//                    w2 [h, i] per expert; S shared experts when the op computes them
//   activations      2 * T * h * (activation bytes)          tokens in and out
//   FLOPs            2 * T * k * 3*h*i (+ 2 * T * S * 3*h*i_s)
// with h = hidden_size, i = moe_intermediate_size / tp, bpw = the format's bits per weight
// with block scales (format::BitsPerWeight: MXFP4 4.25, NVFP4 4.5, FP8 8.002, BF16 16).
#ifndef QPROF_ANALYSIS_WORK_MOE_WORK_H_
#define QPROF_ANALYSIS_WORK_MOE_WORK_H_

#include <string_view>

#include "analysis/work/model_shape.h"
#include "analysis/work/op_work.h"

namespace qprof::work {

double ExpectedExpertsTouched(double experts, double top_k, double tokens);

// The whole call's work (kind "moe"), or an error when the shape is not an MoE model.
absl::StatusOr<OpWork> MoeCallWork(const ModelShape& m, std::string_view op, double tokens,
                                   double activation_bytes, bool with_shared);

// Whether a cpu_op names an MoE layer entry point whose first [T, hidden] input gives the
// tokens: its op rule (op_rules.h) is Convention::kMoeLayer (vllm::moe_forward, SGLang and
// vLLM fused_moe / fused_experts ops, MoE runners, FlashInfer/TRT-LLM FP4 MoE, Marlin MoE,
// CUTLASS MoE, ...; routing ops such as topk_softmax and moe_align_block_size are not);
// `shared` says the op also runs the shared experts.
bool IsMoeOp(std::string_view op, bool* shared = nullptr);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_MOE_WORK_H_
