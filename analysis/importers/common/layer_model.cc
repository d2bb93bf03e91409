#include "analysis/importers/common/layer_model.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/importers/common/graph_capture_pairing.h"

namespace qprof::importers {
namespace {

std::string Names(const std::vector<ModelLinear>& layout) {
  std::vector<std::string> n;
  for (const ModelLinear& l : layout) n.push_back(l.name);
  return absl::StrJoin(n, ", ");
}

// The place of the first kernel name that differs between the repeats of a layout: the
// GEMM index in the replay, or -1 when every repeat launches the same names.
int64_t FirstDifference(const std::vector<std::string_view>& names,
                        const std::vector<uint32_t>& gemms, size_t per_layer, int64_t layers) {
  for (int64_t p = 1; p < layers; ++p) {
    for (size_t j = 0; j < per_layer; ++j) {
      const size_t at = static_cast<size_t>(p) * per_layer + j;
      if (names[gemms[at]] != names[gemms[j]]) return static_cast<int64_t>(at);
    }
  }
  return -1;
}

ModelledCall Linear(const ModelLinear& l, const std::string& where, uint32_t tokens, uint32_t tp,
                    const std::string& dtype, uint32_t kernel) {
  const int64_t t = static_cast<int64_t>(std::max<uint32_t>(tp, 1));
  const int64_t in = l.split == ModelLinear::kRow ? l.in / t : l.in;
  const int64_t out = l.split == ModelLinear::kColumn ? l.out / t : l.out;
  ModelledCall c;
  c.layer = absl::StrCat(where, l.name);
  const std::string ty = absl::StrCat("\"", dtype, "\"");
  if (l.bias) {
    // addmm(bias, input, weight^T): FLOPs and bytes count the bias as PyTorch's addmm does.
    c.op = "aten::addmm";
    c.dims = absl::StrCat("[[", out, "],[", tokens, ",", in, "],[", in, ",", out, "]]");
    c.types = absl::StrCat("[", ty, ",", ty, ",", ty, "]");
  } else {
    c.op = "aten::mm";
    c.dims = absl::StrCat("[[", tokens, ",", in, "],[", in, ",", out, "]]");
    c.types = absl::StrCat("[", ty, ",", ty, "]");
  }
  c.kernels.push_back(kernel);
  return c;
}

}  // namespace

ModelledReplay ModelReplay(const LayerModel& m, const std::vector<std::string_view>& names,
                           uint32_t tokens, uint32_t tp) {
  ModelledReplay r;
  if (tokens == 0) {
    r.refused = "tokens per step unknown: no step range names the batch (pass --batch N)";
    return r;
  }
  std::vector<uint32_t> gemms, moe;
  std::vector<LayerModel::Kernel> kind(names.size());
  for (uint32_t i = 0; i < names.size(); ++i) {
    kind[i] = m.classify ? m.classify(names[i]) : LayerModel::Kernel::kOther;
    if (kind[i] == LayerModel::Kernel::kGemm) gemms.push_back(i);
    if (kind[i] == LayerModel::Kernel::kMoe) moe.push_back(i);
  }
  const std::vector<ModelLinear>* layout = nullptr;
  bool head = false;
  std::vector<std::string> tried;
  for (const auto& l : m.layouts) {
    if (l.empty()) continue;
    const size_t body = static_cast<size_t>(m.layers) * l.size();
    for (const bool with_head : {true, false}) {
      if (with_head && m.lm_head.out == 0) continue;
      if (gemms.size() != body + (with_head ? 1 : 0)) continue;
      const int64_t differ = FirstDifference(names, gemms, l.size(), m.layers);
      if (differ >= 0) {
        tried.push_back(absl::StrCat("as ", m.layers, " layers of ", l.size(), " (", Names(l),
                                     ") the kernel names do not repeat (GEMM ", differ + 1,
                                     " differs from GEMM ", differ % static_cast<int64_t>(l.size()) + 1, ")"));
        continue;
      }
      layout = &l;
      head = with_head;
      break;
    }
    if (layout != nullptr) break;
  }
  if (layout == nullptr) {
    std::vector<std::string> counts;
    for (const auto& l : m.layouts) counts.push_back(absl::StrCat(l.size()));
    r.refused = absl::StrCat(
        "the replay's ", gemms.size(), " GEMM kernels are not ", m.layers, " layers of ",
        absl::StrJoin(counts, " or "), " linear layers", m.lm_head.out > 0 ? " (+ the LM head)" : "",
        " as ", m.source, " gives them (a graph of part of a step, as vLLM's piecewise pieces, or "
        "another layer layout)", tried.empty() ? "" : "; " + absl::StrJoin(tried, "; "));
    return r;
  }
  const size_t g = layout->size();
  r.layout = absl::StrCat(m.layers, " layers x (", Names(*layout), ")", head ? " + lm_head" : "",
                          ", ", tokens, " tokens per step");
  // The layer index stays out of the call's name: the launches of one linear in every layer
  // are one work entry of their kernel's row.
  for (int64_t p = 0; p < m.layers; ++p) {
    const std::string where;
    for (size_t j = 0; j < g; ++j) {
      r.calls.push_back(Linear((*layout)[j], where, tokens, tp, m.dtype,
                               gemms[static_cast<size_t>(p) * g + j]));
    }
    if (m.experts <= 0) continue;
    // This layer's experts: the MoE kernels before the next layer's first GEMM.
    const uint32_t begin = gemms[static_cast<size_t>(p) * g];
    const uint32_t end = p + 1 < m.layers ? gemms[static_cast<size_t>(p + 1) * g]
                                          : static_cast<uint32_t>(names.size());
    ModelledCall c;
    c.layer = absl::StrCat(where, "mlp.experts");
    c.op = kModelledMoeOp;
    const std::string ty = absl::StrCat("\"", m.dtype, "\"");
    c.dims = absl::StrCat("[[", tokens, ",", m.hidden, "],[", tokens, ",", m.experts, "]]");
    c.types = absl::StrCat("[", ty, ",", ty, "]");
    for (uint32_t i : moe) {
      if (i >= begin && i < end) c.kernels.push_back(i);
    }
    if (!c.kernels.empty()) r.calls.push_back(std::move(c));
  }
  if (head) r.calls.push_back(Linear(m.lm_head, "", tokens, tp, m.dtype, gemms.back()));
  return r;
}

ReplayModeller::ReplayModeller(const LayerModel* model, uint32_t tp, std::string tp_source,
                               LaunchStackTable* table, proto::GraphCaptureJoin* stats)
    : model_(model), tp_(std::max<uint32_t>(tp, 1)), tp_source_(std::move(tp_source)),
      table_(table), kernel_sets_(table->stats()), stats_(stats) {}

ReplayModeller::Cached ReplayModeller::Resolve(const std::vector<ReplayKernel>& ordered,
                                               uint32_t tokens) {
  Cached c;
  c.pairing.assign(ordered.size(), ReplayPairing{});
  std::vector<std::string_view> names;
  names.reserve(ordered.size());
  for (const ReplayKernel& k : ordered) names.push_back(k.name);
  ModelledReplay r = ModelReplay(*model_, names, tokens, tp_);
  if (!r.refused.empty()) {
    c.refused = std::move(r.refused);
    return c;
  }
  if (layout_.empty()) layout_ = r.layout;
  std::vector<std::pair<std::string_view, std::string_view>> set;
  for (const ModelledCall& call : r.calls) {
    const uint32_t layer = table_->Frame(call.layer, "model_layer");
    const uint32_t op = table_->Frame(call.op, "cpu_op", PackShapes(call.dims, call.types, ""));
    const uint32_t stack = table_->Stack({layer, op}, 0);
    uint32_t kernels = 0;
    if (call.kernels.size() > 1 || call.op == kModelledMoeOp) {
      set.clear();
      for (uint32_t i : call.kernels) set.emplace_back(ordered[i].name, call.op);
      kernels = kernel_sets_.Intern(&set);
    }
    for (uint32_t i : call.kernels) {
      c.pairing[i] = {stack, kernels, kernels};
      ++c.modelled;
    }
  }
  return c;
}

void ReplayModeller::Model(const std::vector<ReplayKernel>& kernels,
                           std::vector<ReplayPairing>* out) {
  out->assign(kernels.size(), ReplayPairing{});
  if (kernels.empty()) return;
  const uint32_t tokens = model_->batch > 0 ? model_->batch : kernels[0].step_batch;
  const internal::LaneOrder lo = internal::OrderByLane(kernels);
  std::string key(reinterpret_cast<const char*>(&tokens), sizeof(tokens));
  for (uint32_t n : lo.lanes) key.append(reinterpret_cast<const char*>(&n), sizeof(n));
  for (uint32_t i : lo.order) {
    key.append(reinterpret_cast<const char*>(&kernels[i].name_key), sizeof(uint32_t));
  }
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    std::vector<ReplayKernel> ordered;
    ordered.reserve(kernels.size());
    for (uint32_t i : lo.order) ordered.push_back(kernels[i]);
    it = cache_.emplace(std::move(key), Resolve(ordered, tokens)).first;
  }
  const Cached& c = it->second;
  if (!c.refused.empty()) {
    ++refusals_[c.refused];
    return;
  }
  for (size_t pos = 0; pos < lo.order.size(); ++pos) (*out)[lo.order[pos]] = c.pairing[pos];
  stats_->set_modelled_replays(stats_->modelled_replays() + 1);
  stats_->set_modelled_kernels(stats_->modelled_kernels() + c.modelled);
}

void ReplayModeller::Finish() {
  stats_->set_model_source(absl::StrCat(
      model_->source, layout_.empty() ? "" : ": " + layout_, "; tensor parallel ", tp_, " (",
      tp_source_, ")"));
  for (const auto& [why, n] : refusals_) {
    stats_->add_model_notes(absl::StrCat(n, n == 1 ? " replay" : " replays", " not modelled: ", why));
  }
}

}  // namespace qprof::importers
