// Op calls for the GEMM and MoE kernels of a CUDA-graph replay that has no capture,
// modelled from the model's configuration (--model-shape) and the order the layers run in.
//
// A whole-step decode graph (vLLM FULL, SGLang decode) runs the decoder layers one after
// the other, each launching the same GEMMs in the same order, then the LM head. Given the
// replay's kernels in launch order (lane order, graph_capture.h) and what each kernel is by
// its name (GEMM, MoE experts, other: the caller's classification, from the name rules):
//  - the GEMMs must split into `layers` repeats of one of the layer's layouts (the linear
//    layers in execution order: fused QKV, O, fused gate/up, down for a dense layer; QKV,
//    O, the router and the shared experts for an MoE layer; the same with QKV or gate/up
//    apart), each repeat launching the same kernel names at the same places, then at most
//    one more: the LM head. Anything else is refused with the reason (the counts, the first
//    place where names differ), never guessed;
//  - the i-th GEMM of a layer is the i-th linear of the layout: an aten::mm of
//    [tokens, in] x [in, out] in the activations' type (aten::addmm with the bias where the
//    config says the projection has one), with `in` or `out` divided by the tensor-parallel
//    degree as the layer is split (column-parallel QKV, gate/up and LM head; row-parallel O
//    and down; the router whole);
//  - the MoE kernels between a layer's first GEMM and the next layer's are that layer's
//    experts: one call of `tokens` tokens, its work the MoE model's (moe_work.h), shared
//    among those kernels.
// Tokens per step are the --batch, else the batch the replay's step range names. A graph
// that holds part of a step (vLLM's piecewise pieces) has too few GEMMs for the layers and
// is refused: the capture trace is what pairs those.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_LAYER_MODEL_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_LAYER_MODEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analysis/importers/common/graph_capture.h"
#include "analysis/importers/common/launch_context.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

struct ModelLinear {
  std::string name;          // "self_attn.qkv_proj"
  int64_t out = 0, in = 0;   // features of the whole model, before tensor parallelism
  enum Split : uint8_t { kColumn, kRow, kWhole };
  Split split = kColumn;
  bool bias = false;
};

struct LayerModel {
  std::string source;        // "qwen3-8b.json (Qwen3ForCausalLM)"
  int64_t layers = 0;
  // The linear layers of one decoder layer in execution order, one list per accepted
  // layout, most fused first.
  std::vector<std::vector<ModelLinear>> layouts;
  ModelLinear lm_head;       // out = vocab (0: not modelled)
  int64_t hidden = 0;
  int64_t experts = 0;       // routed experts; 0 for a dense model
  uint32_t batch = 0;        // --batch; 0: the batch the replay's step names
  uint32_t tp = 0;           // --tp; 0: the trace's world size (distributedInfo), else 1
  std::string dtype = "c10::BFloat16";  // the activations' type, as Kineto names it
  enum class Kernel : uint8_t { kOther, kGemm, kMoe };
  std::function<Kernel(std::string_view)> classify;  // by kernel name
};

// The op name modelled MoE calls carry (an MoE entry point to the work rules).
inline constexpr char kModelledMoeOp[] = "fused_moe (modelled)";

struct ModelledCall {
  std::string layer;         // "self_attn.qkv_proj" (the same in every layer)
  std::string op;            // "aten::mm", "aten::addmm" or kModelledMoeOp
  std::string dims, types;   // Kineto "Input Dims" / "Input type" JSON
  std::vector<uint32_t> kernels;  // the positions (lane order) of the kernels it launched
};

struct ModelledReplay {
  std::vector<ModelledCall> calls;
  std::string refused;       // why nothing was modelled; "" when modelled
  std::string layout;        // "36 layers x (self_attn.qkv_proj, ...) + lm_head"
};

// `names`: the replay's kernels in lane order; `tokens` and `tp` as resolved for it.
ModelledReplay ModelReplay(const LayerModel& m, const std::vector<std::string_view>& names,
                           uint32_t tokens, uint32_t tp);

// Models the replays of one trace without a capture: call Model per graph launch (the
// kernels of those not paired with a capture), Finish once. Replays repeat, so results are
// cached per distinct replay (kernel names in lane order and tokens). The modelled calls are
// interned into the trace's tables: per call a stack of a "model_layer" frame (the layer)
// and a cpu_op frame with the modelled shapes, and for MoE calls the kernel set of the
// experts' kernels; the statistics go to GraphCaptureJoin's modelled_* fields.
class ReplayModeller {
 public:
  // `tp` resolved for the trace (--tp, else its world size, else 1) and where it came from.
  ReplayModeller(const LayerModel* model, uint32_t tp, std::string tp_source,
                 LaunchStackTable* table, proto::GraphCaptureJoin* stats);
  // `out` (per kernel, input order) gets the modelled call's stack and kernel set, or zeros.
  void Model(const std::vector<ReplayKernel>& kernels, std::vector<ReplayPairing>* out);
  void Finish();

 private:
  struct Cached {
    std::vector<ReplayPairing> pairing;  // lane order
    uint64_t modelled = 0;
    std::string refused;
  };
  Cached Resolve(const std::vector<ReplayKernel>& ordered, uint32_t tokens);

  const LayerModel* model_;
  uint32_t tp_;
  std::string tp_source_;
  LaunchStackTable* table_;
  KernelSetTable kernel_sets_;
  proto::GraphCaptureJoin* stats_;
  std::unordered_map<std::string, Cached> cache_;
  std::map<std::string, uint64_t> refusals_;  // replays per reason
  std::string layout_;                        // the first modelled replay's
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_LAYER_MODEL_H_
