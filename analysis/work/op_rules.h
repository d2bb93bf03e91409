// The op-rule table: which recorded operator calls have work, by which convention, with
// the convention's operands located in the op's own schema, and where the convention
// comes from. One row per op (or per name pattern); the conventions are a handful of
// functions (op_work.h states each), so a new op is a new row, not new code.
//
// Rows live in two files by origin: op_rules_aten.cc (PyTorch's own ops, their schemas
// from aten/src/ATen/native/native_functions.yaml) and op_rules_serving.cc (vLLM, SGLang,
// aiter, FlashInfer, FlashMLA, TorchInductor's Triton kernels, ...). docs/work.md prints
// the conventions; `OpRules()` lists every row (tests check each has a source).
//
// Lookup: an exact name wins; else the first pattern row that matches, in table order
// (aten rows first). Patterns are a prefix ("triton_poi_*") or a case-insensitive infix
// ("*fused_moe*"). A row with Convention::kNoWork claims a name so that no later pattern
// does (MoE routing ops whose names contain "moe").
#ifndef QPROF_ANALYSIS_WORK_OP_RULES_H_
#define QPROF_ANALYSIS_WORK_OP_RULES_H_

#include <cstdint>
#include <span>
#include <string_view>

namespace qprof::work {

// What a rule's work is, for the reports: FLOPs and bytes for the compute kinds, bytes only
// for kMemory (every kernel of a memory op is one of its workers; launch_work.h).
namespace kind {
inline constexpr std::string_view kGemm = "gemm";
inline constexpr std::string_view kAttention = "attention";
inline constexpr std::string_view kConv = "conv";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kMoe = "moe";
}  // namespace kind

enum class Convention : uint8_t {
  kNoWork,         // claimed, no work (routing, bookkeeping)
  kGemm,           // C[M,N] = A[M,K] x B (+ bias); linear or mm layout of B
  kBatchedGemm,    // bmm / baddbmm
  kMatmul,         // torch.matmul: 1-D operands, broadcast batch dimensions
  kGroupedGemm,    // _grouped_mm
  kAttention,      // Q, K, V tensors (dense, or varlen with cu_seqlens)
  kStepAttention,  // a step's sequences (paged KV cache, varlen): lengths from the step
  kConv,           // forward convolution
  kConvBackward,   // grad input + grad weight (+ grad bias), by output_mask
  kNorm,           // batch / layer / group / instance / RMS norm forward
  kNormBackward,   // their backward
  kElementwise,    // read the inputs, write the broadcast output
  kCopy,           // copy_(self, src)
  kFill,           // fill_ / zero_
  kCat,            // cat(list)
  kReduce,         // read the input, write the reduced output
  kMoved,          // custom op with its outputs among its arguments: each tensor moves once
  kRope,           // rotary embedding of Q and K in place
  kKvStore,        // new K and V rows written into a KV cache
  kTriton,         // TorchInductor Triton kernel: each pointer argument moves once
  kMoeLayer,       // a whole MoE layer: tokens from the call, the rest from --model-shape
};

inline constexpr int kConventions = static_cast<int>(Convention::kMoeLayer) + 1;

enum class Match : uint8_t { kExact, kPrefix, kInfix };

// Where a convention's operands sit among the op's recorded arguments (the schema's order,
// which is the order Kineto's "Input Dims" follows). -1: the op has no such argument. A
// convention reads only the fields op_work.h names for it.
struct ArgMap {
  int8_t a = -1;         // GEMM: the activations A; conv / norm: the input x
  int8_t b = -1;         // GEMM: B (weight); conv / norm: the weight
  int8_t bias = -1;      // GEMM: bias or added matrix; conv / norm: bias
  int8_t out = -1;       // an output passed as an argument ("Tensor! out")
  int8_t out_dtype = -1; // a ScalarType code naming the output dtype
  int8_t q = -1, k = -1, v = -1;
  int8_t causal = -1;    // bool
  int8_t mask_type = -1; // int: 0 = no mask, else causal
  int8_t cu_q = -1;      // cu_seqlens_q [B+1]; cu_seqlens_k follows it
  int8_t max_q = -1, max_k = -1;
  int8_t head_dim_v = -1;// int: V head size (MLA)
  int8_t grad = -1;      // backward: grad_output
  int8_t stride = -1, padding = -1, dilation = -1, transposed = -1, groups = -1;
  int8_t mask = -1;      // output_mask [bool, ...]
  int8_t training = -1;  // bool
  int8_t normalized = -1;// normalized_shape (int list)
  int8_t running = -1;   // running_mean (running_var follows it)
  int8_t dim = -1;       // reduction dims
  int8_t kc = -1, vc = -1;  // KV caches written
  int8_t offs = -1;      // _grouped_mm group offsets
  int8_t inputs = -1;    // the schema's inputs: tensors at or past it are out= outputs
  uint16_t inplace = 0;  // kMoved: bit i set = argument i is read and written in place
};

// Row flags.
enum : uint16_t {
  kWeightNK = 1 << 0,     // GEMM: B is [N, K] (linear); else [K, N] (mm)
  kPackedK2 = 1 << 1,     // GEMM: A and B store two K elements per byte (FP4 x2)
  kBshd = 1 << 2,         // attention: [B, S, H, d] (else [B, H, S, d])
  kDecodeOnly = 1 << 3,   // attention: a decode kernel (the step's generation part)
  kSharedKV = 1 << 4,     // attention: V is part of K's cache (MLA latent cache)
  kKvHeadsAt1 = 1 << 5,   // attention: the cache's KV heads are dimension 1 (else -2)
  kNoCase = 1 << 6,       // pattern matched case-insensitively
  kStatsPerChannel = 1 << 7,  // norm: statistics per channel (batch norm)
  kStatsPerRow = 1 << 8,      // norm: per normalised row (layer, RMS)
  kStatsPerGroup = 1 << 9,    // norm: per (sample, group) (group norm)
  kStatsPerInstance = 1 << 10,// norm: per (sample, channel) (instance norm)
  kOneStat = 1 << 11,         // norm: one statistic (RMS: rstd), else two (mean, rstd)
  kNoStats = 1 << 12,         // norm: writes no statistics (inference kernels)
  kReturnsLikeA = 1 << 13,    // kMoved: also returns a tensor shaped like argument `a`
  kOutBf16 = 1 << 14,         // GEMM: the output is BF16 unless an output argument says
};

struct OpRule {
  std::string_view pattern;
  Match match;
  std::string_view kind;      // op_work.h kind:: ("gemm", "attention", ...; "" for kNoWork)
  Convention convention;
  ArgMap at;
  uint16_t flags;
  std::string_view source;    // where the convention and the argument layout come from
};

// The rule for an op name, or nullptr.
const OpRule* FindOpRule(std::string_view op);

// Every row, aten rows first (for documentation and tests).
std::span<const OpRule> AtenOpRules();
std::span<const OpRule> ServingOpRules();

}  // namespace qprof::work

#endif  // QPROF_ANALYSIS_WORK_OP_RULES_H_
