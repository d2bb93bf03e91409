// The work of one operator call, derived from the shapes the trace recorded (op_call.h):
// FLOPs and bytes of DRAM traffic. Which ops have work, and where each convention's
// operands sit in an op's arguments, is the op-rule table (op_rules.h: one row per op with
// its source); the conventions, one function each, are:
//
//   kGemm          C[M,N] = A[M,K] x B, B as [K,N] (mm) or [N,K] (linear, kWeightNK); A may
//                  carry leading batch dimensions (M = their product) in the linear layout.
//                  FLOPs 2*M*N*K (+ M*N for a bias or added matrix). Bytes: every tensor
//                  among the schema's inputs read once (A, B, bias, scales) and the output
//                  written once, never read: an out= tensor (past the schema's inputs, with
//                  M*N elements) or a "Tensor! out" argument counts once, as the output, at
//                  its dtype; else M*N at out_dtype when recorded, else A's dtype (BF16 for
//                  the a8w8 rows). kPackedK2: two FP4 values per stored byte (K = 2 x the
//                  recorded inner size). B is weight_bytes.
//   kBatchedGemm   bmm / baddbmm: 2*B*M*N*K (+ B*M*N added); bytes as kGemm.
//   kMatmul        torch.matmul: 1-D operands a row / a column, batch dimensions broadcast.
//   kGroupedGemm   _grouped_mm: 2-D x 3-D (rows grouped by offs), 3-D x 3-D, 2-D x 2-D (K
//                  grouped), 3-D x 2-D.
//   kAttention     Q, K, V tensors: FLOPs 2*B*H*Nq*Nkv*(d + dv) (= 4*B*H*Nq*Nkv*d when
//                  dv = d), halved when causal (the FlashAttention benchmarks' convention);
//                  bytes Q, K, V read and O written once. Varlen calls ([total, H, d] with
//                  cu_seqlens [B+1]): decode (one query per sequence) pairs every key once;
//                  otherwise the per-sequence lengths come from the step (below), or from
//                  max_seqlen when every sequence is at it (total = B*max); else no work,
//                  with the reason.
//   kStepAttention attention over the step's sequences, whose key lengths live in tensors
//                  the trace does not record (paged KV caches, vLLM's unified attention):
//                  from the step's iteration annotation (iteration_annotation.h), pairs =
//                  context (sqsk - sqsq/2: causal within the chunk) + generation (sqsk);
//                  FLOPs 2*H*pairs*(d + dv); bytes: Q read and O written for the step's
//                  query tokens, each sequence's keys and values read once
//                  ((c_sk + g_sk) * Hkv * (d + dv) at the cache's dtype; kSharedKV: the
//                  MLA latent cache once, d wide). A decode kernel (kDecodeOnly) takes the
//                  generation part; otherwise the part(s) whose query tokens match the
//                  call's. Without sums: no work, saying the lengths are not recorded.
//   kConv          2*N*K*(C/groups)*prod(R)*prod(P) (+ N*K*prod(P) for a bias), output size
//                  from padding, stride and dilation; bytes: input, weight, bias read, output
//                  written. Transposed convolutions have no rule.
//   kConvBackward  by output_mask: grad input (the forward's FLOPs; reads grad_output and
//                  the weight, writes grad input), grad weight (the forward's FLOPs; reads
//                  grad_output and the input, writes grad weight), grad bias (one add per
//                  grad_output element; reads grad_output, writes [K]).
//   kNorm          bytes only: the input read and the output written once, every other
//                  tensor argument (weight, bias, running statistics) read once, plus the
//                  statistics the op writes (FP32 mean and rstd: per channel for batch
//                  norm in training, per row for layer norm, per (sample, group) for group
//                  norm, per (sample, channel) for instance norm, rstd only for RMS norm;
//                  batch norm in training also writes its running statistics back).
//   kNormBackward  bytes only: grad_output and the input read once, every other tensor
//                  argument read once, and each gradient the output_mask asks for written
//                  once (grad input like the input; grad weight and grad bias like the
//                  weight).
//   kElementwise   bytes only: the schema's tensor inputs read once, the output (their
//                  broadcast, at the largest input's dtype; an out= tensor's when given)
//                  written once; in-place ops (name ending in '_') write their first argument.
//   kCopy, kFill, kCat   copy_ reads src and writes self; fill_ / zero_ write self; cat
//                  reads its list and writes as much.
//   kReduce        the input read once, the output (the input less the reduced dimensions)
//                  written once; reduced dimensions that were not recorded leave the output
//                  uncounted, which the description says.
//   kMoved         custom ops whose outputs are arguments ("Tensor! out"): every tensor
//                  argument moves once; in-place arguments (read and written) twice;
//                  kReturnsLikeA adds a returned tensor shaped like argument a.
//   kRope          Q and K read and written in place, positions read, one cos/sin cache row
//                  per position read.
//   kKvStore       the new K and V rows read once and written once into their caches (at
//                  the cache's dtype); the slot indices read.
//   kTriton        TorchInductor kernels take their inputs and outputs as pointers: every
//                  tensor argument moves once (an in/out buffer is counted once).
//   kMoeLayer      no work here: it needs the model's shape (moe_work.h, launch_work.h).
// Shapes that do not add up (inner dimensions that differ, a missing operand, a rank a rule
// does not accept) give kInvalid with the reason. Bytes stay unknown (bytes_known = false)
// when a tensor's dtype is unknown (nsys sizes with a kernel name that names no type);
// FLOPs need no dtype.
#ifndef QPROF_ANALYSIS_WORK_OP_WORK_H_
#define QPROF_ANALYSIS_WORK_OP_WORK_H_

#include <string>
#include <string_view>

#include "analysis/work/iteration_annotation.h"
#include "analysis/work/op_call.h"
#include "analysis/work/op_rules.h"

namespace qprof::work {

struct OpWork {
  double flops = 0;
  double bytes = 0;
  bool bytes_known = true;
  double weight_bytes = 0;        // of bytes: the weight operand
  double weight_bits = 0;         // bits per stored weight (with scales) of weight_bytes
  std::string weight_format;      // "bf16", "fp8", "mxfp4", ... of weight_bytes ("" none)
  std::string precision;          // compute precision: "bf16", "fp16", "tf32", "fp8", "fp4", ""
  std::string kind;               // kind:: (op_rules.h)
  std::string description;        // "aten::addmm [1024]+[8944,1024]x[1024,1024] bf16"
};

enum class Outcome { kNoRule, kWork, kInvalid };

struct OpWorkResult {
  Outcome outcome = Outcome::kNoRule;
  OpWork work;
  std::string error;              // kInvalid: why, naming the op and shapes
};

// What a call's shapes do not say.
struct OpContext {
  // The step's sequence sums (an iteration annotation enclosing the launch, or the one the
  // graph-replay plumbing found for the replay's step); nullptr when none.
  const IterationAnnotation* step = nullptr;
};

// The work of `call` (all of it, whichever kernels it launched).
OpWorkResult DeriveOpWork(const OpCall& call, const OpContext& ctx = {});

// The kind of an op's rule ("" when it has none, or its rule gives no work).
std::string_view OpKind(std::string_view op);

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_OP_WORK_H_
