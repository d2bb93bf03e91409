// The shape parser and the work rules (analysis/work) from arbitrary bytes: the input is an
// op name, "Input Dims", "Input type" and "Concrete Inputs" separated by newlines (and the
// whole input as an emit_nvtx range name). Must return work or one error, never crash or
// hang; derived work is finite and non-negative, and an MoE call's model work too.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/work/launch_work.h"
#include "analysis/work/moe_work.h"
#include "analysis/work/op_work.h"

namespace {

void CheckWork(const qprof::work::OpWork& w) {
  for (double v : {w.flops, w.bytes, w.weight_bytes, w.weight_bits}) {
    if (!std::isfinite(v) || v < 0) __builtin_trap();
  }
}

// A step whose sums every attention rule can use.
const qprof::work::IterationAnnotation& Step() {
  static const auto* step = new qprof::work::IterationAnnotation(*qprof::work::ParseIterationAnnotation(
      "execute_40_context_1(sq8sk16sqsq64sqsk128)_generation_32(sq32sk4000sqsq32sqsk4000)"));
  return *step;
}

// One exact op name per convention of the op-rule table.
const std::vector<std::string>& OnePerConvention() {
  static const auto* ops = [] {
    auto* v = new std::vector<std::string>;
    bool seen[qprof::work::kConventions] = {};
    for (auto table : {qprof::work::AtenOpRules(), qprof::work::ServingOpRules()}) {
      for (const qprof::work::OpRule& r : table) {
        const auto c = static_cast<size_t>(r.convention);
        if (r.match != qprof::work::Match::kExact || seen[c]) continue;
        seen[c] = true;
        v->emplace_back(r.pattern);
      }
    }
    return v;
  }();
  return *ops;
}

void Derive(const qprof::work::OpCall& call) {
  qprof::work::OpWorkResult r = qprof::work::DeriveOpWork(call, qprof::work::OpContext{&Step()});
  if (r.outcome == qprof::work::Outcome::kWork) CheckWork(r.work);
  if (r.outcome == qprof::work::Outcome::kInvalid && r.error.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> parts;
  size_t from = 0;
  while (parts.size() < 4) {
    const size_t nl = bytes.find('\n', from);
    parts.push_back(bytes.substr(from, nl == std::string_view::npos ? nl : nl - from));
    if (nl == std::string_view::npos) break;
    from = nl + 1;
  }
  parts.resize(4);
  auto call = qprof::work::ParseKinetoOpCall(parts[0], parts[1], parts[2], parts[3]);
  if (call.ok()) {
    Derive(*call);
    // The same shapes under every convention of the op-rule table, and a few layouts more.
    std::vector<std::string> ops = OnePerConvention();
    for (const char* op : {"aten::addmm", "aten::linear", "aten::_scaled_mm", "_C::cutlass_scaled_fp4_mm",
                           "flash_attn::_flash_attn_varlen_forward", "aten::_efficient_attention_forward",
                           "aten::cudnn_convolution", "aten::native_group_norm", "_C::paged_attention_v2",
                           "sgl_kernel::fwd_kvcache_mla", "aten::add_", "_C::fused_add_rms_norm"}) {
      ops.emplace_back(op);
    }
    for (const std::string& op : ops) {
      qprof::work::OpCall c = *call;
      c.op = op;
      Derive(c);
    }
    // As an MoE call's token count on a small model.
    qprof::work::ModelShape m;
    m.hidden = 64;
    m.experts = 8;
    m.top_k = 2;
    m.moe_inter = 32;
    m.format = "mxfp4";
    m.bits_per_weight = 4.25;
    for (const auto& a : call->args) {
      if (a.IsTensor() && a.dims.size() == 2) {
        auto w = qprof::work::MoeCallWork(m, "vllm::moe_forward", static_cast<double>(a.dims[0]), 2, true);
        if (w.ok()) CheckWork(*w);
        break;
      }
    }
  }
  if (auto nvtx = qprof::work::ParseNvtxOpCall(bytes); nvtx && nvtx->ok()) {
    qprof::work::OpCall c = **nvtx;
    qprof::work::FillMissingDtypes(qprof::work::DtypeByName("bf16"), &c);
    Derive(c);
  }
  (void)qprof::work::ParseDims(bytes);
  (void)qprof::work::ParseIterationAnnotation(bytes);
  return 0;
}
