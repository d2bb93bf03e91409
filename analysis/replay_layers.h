// The layer model `--model-shape` gives graph replays that have no capture
// (importers/common/layer_model.h): the configuration's linear layers per decoder layer in
// execution order, in the layouts engines run them (fused QKV and gate/up, or apart), the LM
// head, and which kernels are GEMMs and which the MoE experts', told by the name rules
// (classify/name_rules.h: a tensor-pipe GEMM that is not a helper of its call, such as a
// split-K reduction; the moe.experts role).
//
//   dense layer   qkv_proj [(H + 2 Hkv) d, h] column-parallel, o_proj [h, H d] row-parallel,
//                 gate_up_proj [2 I, h] column, down_proj [h, I] row
//   MoE layer     qkv_proj, o_proj, the router gate [E, h] (whole on every GPU), the shared
//                 experts' gate_up and down when the model has them; the routed experts are
//                 one MoE call per layer (moe_work.h)
//   LM head       [vocab, h] column-parallel
// with h = hidden_size, H and Hkv the attention and key/value heads, d = head_dim, I the
// dense intermediate size, E the routed experts. The QKV and O projections carry a bias when
// the config says attention_bias, and the router when the architecture has one (gpt-oss).
#ifndef QPROF_ANALYSIS_REPLAY_LAYERS_H_
#define QPROF_ANALYSIS_REPLAY_LAYERS_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "analysis/importers/common/layer_model.h"
#include "analysis/work/model_shape.h"

namespace qprof {

// InvalidArgument naming what the config lacks (heads, layers, the MLP's size) when its
// layers cannot be laid out. `batch` and `tp` are --batch and --tp (0: from the trace).
absl::StatusOr<std::shared_ptr<const importers::LayerModel>> LayerModelFor(
    const work::ModelShape& m, uint32_t batch, uint32_t tp);

}  // namespace qprof

#endif  // QPROF_ANALYSIS_REPLAY_LAYERS_H_
