// The work of one operator call, derived from the shapes the trace recorded (op_call.h):
// FLOPs and bytes of DRAM traffic, with the conventions TraceLens and the FlashAttention
// benchmarks use, so figures compare:
//
//   GEMM      aten::mm, addmm, bmm, baddbmm, linear, matmul, _scaled_mm, _grouped_mm:
//             FLOPs = 2*B*M*N*K (+ B*M*N for a bias or the added matrix of addmm/baddbmm);
//             bytes = every input read once and the output written once, at its dtype's
//             size (the output's dtype is the first matrix's; _scaled_mm's is out_dtype
//             when given, else its input's, as PyTorch defines it). The weight operand
//             (linear's W, mm/addmm's second matrix, _scaled_mm's mat2) is weight_bytes.
//   attention SDPA (flash, efficient, cuDNN), _flash_attention_forward,
//             _efficient_attention_forward, flash_attn's _flash_attn_forward and varlen:
//             FLOPs = 2*B*H*Nq*Nkv*(d + dv), i.e. 4*B*H*Nq*Nkv*d when dv = d, halved when
//             causal; bytes = Q, K, V read and O written. Varlen calls (cu_seqlens) get work
//             only for decode (one query per sequence: the pairs are the keys, total_k);
//             prefill's per-sequence lengths are not in the shapes.
//   conv      aten::cudnn_convolution, convolution, _convolution (not transposed):
//             FLOPs = 2*N*K*(C/groups)*R*S*P*Q (each spatial dimension), output sizes from
//             padding, stride and dilation (Concrete Inputs); bytes = input, weight, bias, output.
//   memory    elementwise, copy, cat, fill, softmax and norm ops: bytes only (FLOPs 0):
//             every tensor input read once and the output written once (the broadcast of
//             the inputs, at the dtype of the largest input); in-place ops (name ending in
//             '_') write their first argument; copy_ reads src and writes self; fill_ and
//             zero_ write self; cat reads its list and writes as much.
// Anything else gives no rule (kNoRule). Shapes that do not add up (inner dimensions that
// differ, a missing operand, a rank a rule does not accept) give kInvalid with the reason.
// Bytes stay unknown (bytes_known = false) when a tensor's dtype is unknown (nsys sizes
// with a kernel name that names no type); FLOPs need no dtype.
#ifndef QPROF_ANALYSIS_WORK_OP_WORK_H_
#define QPROF_ANALYSIS_WORK_OP_WORK_H_

#include <string>
#include <string_view>

#include "analysis/work/op_call.h"

namespace qprof::work {

namespace kind {
inline constexpr std::string_view kGemm = "gemm";
inline constexpr std::string_view kAttention = "attention";
inline constexpr std::string_view kConv = "conv";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kMoe = "moe";
}  // namespace kind

struct OpWork {
  double flops = 0;
  double bytes = 0;
  bool bytes_known = true;
  double weight_bytes = 0;        // of bytes: the weight operand
  double weight_bits = 0;         // bits per stored weight (with scales) of weight_bytes
  std::string weight_format;      // "bf16", "fp8", "mxfp4", ... of weight_bytes ("" none)
  std::string precision;          // compute precision: "bf16", "fp16", "tf32", "fp8", "fp4", ""
  std::string kind;               // kind:: above
  std::string description;        // "aten::addmm [1024]+[8944,1024]x[1024,1024] bf16"
};

enum class Outcome { kNoRule, kWork, kInvalid };

struct OpWorkResult {
  Outcome outcome = Outcome::kNoRule;
  OpWork work;
  std::string error;              // kInvalid: why, naming the op and shapes
};

// The work of `call` (all of it, whichever kernels it launched).
OpWorkResult DeriveOpWork(const OpCall& call);

// Whether an op has a rule, and of which kind ("" when none); by name only.
std::string_view OpKind(std::string_view op);

// Per family (op_work.cc dispatches by OpKind).
OpWorkResult GemmWork(const OpCall& call);
OpWorkResult AttentionWork(const OpCall& call);
OpWorkResult ConvWork(const OpCall& call);
OpWorkResult MemoryWork(const OpCall& call);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_OP_WORK_H_
