// The decode step, described once: every launch of one step in order, with its operation,
// its registry id, its range and its shape. Three readers execute or count this one list:
//   - the decode plan (runtime/plan.cc) adds each launch's registry work model;
//   - the CPU decoder (runtime/cpu_decoder.cc) runs each operation with the CPU kernels
//     and records it under its range (checking the shape against the weights it holds);
//   - the CUDA decoder (runtime/cuda/cuda_decoder.cc) launches each operation's CUDA
//     kernels under NVTX ranges, or lists them without a GPU (CudaDecoder::LaunchList).
// So the three cannot drift apart; tests/runtime/decode_step_test.cc holds them to it
// launch for launch.
//
// Per step: embedding; per layer RMSNorm, q = wq_b(norm(wq_a h)), kv = wkv_a h with the
// latent normalised, rope on the query heads then on the one latent key (two launches),
// the indexer projections, append of the latent KV row and the index key to the caches,
// indexer top-k (+ window), sparse MLA over the selected tokens in latent space,
// o = wo_b(wo_a attn) added to the residual; under tensor parallelism an all-reduce of the
// hidden state (range "comm"); RMSNorm, router top-k, (tp > 1: the expert-id remap),
// routed experts, the shared expert; (tp > 1: all-reduce); final norm, LM head, argmax.
//
// Ranges, below "decode/step N": "embed", "layer L/attn", "layer L/comm", "layer L/moe",
// "head". Under tensor parallelism the shapes are one rank's (runtime/tp_shape.h).
#ifndef QPROF_RUNTIME_DECODE_STEP_H_
#define QPROF_RUNTIME_DECODE_STEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/registry/registry.h"
#include "runtime/model_arch.h"
#include "runtime/tp_shape.h"

namespace qprof::runtime {

inline constexpr uint32_t kNoLayer = 0xFFFFFFFFu;

enum class StepOp {
  kEmbed,
  // The attention half of a layer.
  kAttnNorm, kWqA, kQNorm, kWqB, kWkvA, kKvNorm, kRopeQ, kRopeK, kWiQ, kWiK, kWiW,
  kKvAppend, kIndexer, kSparseMla, kWoA, kWoB,
  // Tensor parallel: the hidden state summed over ranks (after attention and after the MoE).
  kAllReduce,
  // The MoE half of a layer.
  kFfnNorm, kRouter, kLocalExpertIds, kRoutedExperts, kSharedExpert,
  // The head.
  kFinalNorm, kLmHead, kArgmax,
};
const char* StepOpName(StepOp op);  // "wq_a", "routed_experts", ...

struct StepLaunch {
  StepOp op;
  std::string kernel_id;       // registry id
  std::string range;           // below "decode/step N": "layer 3/moe"
  uint32_t layer = kNoLayer;
  kernels::KernelShape shape;  // see DataDependentKeys
};

// What the step's shapes depend on besides the model: batch, layers held, the kernel
// variants, this rank's share, and the cached tokens per sequence before the step.
struct StepDims {
  int batch = 0;
  int layers = 0;
  std::string moe_id;          // "moe.slot_gemv.mxfp4"
  std::string mla_id;          // "attn.sparse_mla.simt" | ".mma"
  TpSlice slice;               // tp 1: the whole model (MakeTpSlice(..., 1, 0))
  std::vector<int> lens;       // [batch] tokens cached per sequence at the start of the step
};

// Shape keys whose values depend on the data (the indexer's "context" and "selected", the
// experts' "unique_experts"): the description holds their expectation (mean context and
// selection over the batch; unique experts under uniform routing, ExpectedUniqueExperts),
// which the plan keeps and a decoder that knows the real values replaces.
bool IsDataDependentKey(const std::string& kernel_id, const std::string& key);

// The launches of one decode step, in order.
std::vector<StepLaunch> DescribeDecodeStep(const ModelArch& arch, const StepDims& dims);

// Context length of each sequence at the start of decode: spread evenly from `context`
// (sequence 0) down to context/2 (the last), so sequences differ as in real serving.
std::vector<int> ContextLengths(int context, int batch);

// Expected distinct experts hit by `tokens` tokens each picking top-k of E uniformly:
// E * (1 - (1 - k/E)^tokens). A modelling assumption, stated in the plan's notes.
double ExpectedUniqueExperts(int experts, int topk, int tokens);

// Calls push(name) and pop() so that the open ranges go from path `from` to path `to`
// ("layer 0/attn" -> "layer 0/moe" pops "attn" and pushes "moe"; "" is no range).
template <typename Push, typename Pop>
void SwitchRange(const std::string& from, const std::string& to, Push&& push, Pop&& pop);

// ---- implementation ----

std::vector<std::string> SplitRange(const std::string& path);

template <typename Push, typename Pop>
void SwitchRange(const std::string& from, const std::string& to, Push&& push, Pop&& pop) {
  const std::vector<std::string> a = SplitRange(from), b = SplitRange(to);
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  for (size_t i = a.size(); i > common; --i) pop();
  for (size_t i = common; i < b.size(); ++i) push(b[i]);
}

}  // namespace qprof::runtime

#endif  // QPROF_RUNTIME_DECODE_STEP_H_
