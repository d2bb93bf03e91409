#include "runtime/decode_step.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace qprof::runtime {
namespace {

using kernels::KernelShape;

// Appends the launches of one step, range by range.
class StepWriter {
 public:
  explicit StepWriter(std::vector<StepLaunch>* out) : out_(out) {}
  void Range(std::string range, uint32_t layer) {
    range_ = std::move(range);
    layer_ = layer;
  }
  void Add(StepOp op, const std::string& id, KernelShape shape) {
    out_->push_back({op, id, range_, layer_, std::move(shape)});
  }
  void Gemm(StepOp op, int64_t m, int64_t n, int64_t k) {
    Add(op, "gemm.dense", {{"m", m}, {"n", n}, {"k", k}});
  }

 private:
  std::vector<StepLaunch>* out_;
  std::string range_;
  uint32_t layer_ = kNoLayer;
};

// The expectations of the data-dependent shape keys (IsDataDependentKey).
struct Expected {
  int64_t context = 0;   // tokens scored per sequence (after this step's append)
  int64_t selected = 0;  // tokens attended per sequence
  int64_t unique = 0;    // distinct routed experts of this rank hit by the batch
  int64_t slots = 0;     // (token, expert) slots routed to this rank's experts
};

Expected Expect(const ModelArch& c, const StepDims& d) {
  // The step appends one token, then attends over len + 1 tokens.
  double ctx = 0, sel = 0;
  for (int len : d.lens) {
    ctx += len + 1;
    sel += std::min(len + 1, c.index_topk + c.window);
  }
  const int B = std::max(d.batch, 1), tp = std::max(d.slice.tp, 1);
  Expected e;
  e.context = std::llround(ctx / B);
  e.selected = std::llround(sel / B);
  // Uniform routing: each expert is equally likely, so a rank sees 1/tp of the distinct
  // experts and of the slots on average.
  e.unique = std::llround(ExpectedUniqueExperts(c.n_routed_experts, c.n_activated_experts,
                                                d.batch) / tp);
  e.slots = std::llround(static_cast<double>(d.batch) * c.n_activated_experts / tp);
  return e;
}

void AttentionHalf(const ModelArch& c, const StepDims& d, const Expected& e, StepWriter& w) {
  const int64_t B = d.batch, H = d.slice.heads(), dqk = c.d_qk(), dv = c.kv_lora_rank;
  w.Add(StepOp::kAttnNorm, "norm.rmsnorm", {{"rows", B}, {"cols", c.dim}});
  w.Gemm(StepOp::kWqA, B, c.q_lora_rank, c.dim);
  w.Add(StepOp::kQNorm, "norm.rmsnorm", {{"rows", B}, {"cols", c.q_lora_rank}});
  w.Gemm(StepOp::kWqB, B, H * dqk, c.q_lora_rank);
  w.Gemm(StepOp::kWkvA, B, dqk, c.dim);
  w.Add(StepOp::kKvNorm, "norm.rmsnorm", {{"rows", B}, {"cols", dv}});
  // Two launches: the query heads, then the one latent key.
  w.Add(StepOp::kRopeQ, "rope", {{"rows", B}, {"heads", H}, {"rope_dim", c.rope_dim}});
  w.Add(StepOp::kRopeK, "rope", {{"rows", B}, {"heads", 1}, {"rope_dim", c.rope_dim}});
  w.Gemm(StepOp::kWiQ, B, int64_t{c.index_n_heads} * c.index_head_dim, c.q_lora_rank);
  w.Gemm(StepOp::kWiK, B, c.index_head_dim, c.dim);
  w.Gemm(StepOp::kWiW, B, c.index_n_heads, c.dim);
  w.Add(StepOp::kKvAppend, "attn.kv_append",
        {{"batch", B}, {"d_qk", dqk}, {"index_dim", c.index_head_dim}});
  w.Add(StepOp::kIndexer, "attn.indexer",
        {{"batch", B}, {"context", e.context}, {"index_heads", c.index_n_heads},
         {"index_dim", c.index_head_dim}, {"selected", e.selected}});
  w.Add(StepOp::kSparseMla, d.mla_id,
        {{"batch", B}, {"heads", H}, {"selected", e.selected}, {"d_qk", dqk}, {"d_v", dv}});
  w.Gemm(StepOp::kWoA, B, c.o_lora_rank, H * dv);
  w.Gemm(StepOp::kWoB, B, c.dim, c.o_lora_rank);  // + residual
}

void MoeHalf(const ModelArch& c, const StepDims& d, const Expected& e, StepWriter& w) {
  const int64_t B = d.batch, k = c.n_activated_experts;
  const bool tp = d.slice.tp > 1;
  w.Add(StepOp::kFfnNorm, "norm.rmsnorm", {{"rows", B}, {"cols", c.dim}});
  w.Add(StepOp::kRouter, "moe.router",
        {{"tokens", B}, {"experts", c.n_routed_experts}, {"dim", c.dim}, {"topk", k}});
  if (tp) w.Add(StepOp::kLocalExpertIds, "tp.local_expert_ids", {{"ids", B * k}});
  KernelShape routed{{"tokens", B},      {"topk", k},
                     {"experts", d.slice.experts()}, {"dim", c.dim},
                     {"inter", c.moe_inter_dim},     {"unique_experts", e.unique}};
  if (tp) routed["slots"] = e.slots;
  w.Add(StepOp::kRoutedExperts, d.moe_id, routed);
  if (c.n_shared_experts > 0 && d.slice.shared_inter() > 0) {
    w.Add(StepOp::kSharedExpert, d.moe_id,
          {{"tokens", B}, {"topk", 1}, {"experts", 1}, {"dim", c.dim},
           {"inter", d.slice.shared_inter()}, {"unique_experts", 1}});
  }
}

}  // namespace

const char* StepOpName(StepOp op) {
  switch (op) {
    case StepOp::kEmbed: return "embed";
    case StepOp::kAttnNorm: return "attn_norm";
    case StepOp::kWqA: return "wq_a";
    case StepOp::kQNorm: return "q_norm";
    case StepOp::kWqB: return "wq_b";
    case StepOp::kWkvA: return "wkv_a";
    case StepOp::kKvNorm: return "kv_norm";
    case StepOp::kRopeQ: return "rope_q";
    case StepOp::kRopeK: return "rope_k";
    case StepOp::kWiQ: return "wi_q";
    case StepOp::kWiK: return "wi_k";
    case StepOp::kWiW: return "wi_w";
    case StepOp::kKvAppend: return "kv_append";
    case StepOp::kIndexer: return "indexer";
    case StepOp::kSparseMla: return "sparse_mla";
    case StepOp::kWoA: return "wo_a";
    case StepOp::kWoB: return "wo_b";
    case StepOp::kAllReduce: return "all_reduce";
    case StepOp::kFfnNorm: return "ffn_norm";
    case StepOp::kRouter: return "router";
    case StepOp::kLocalExpertIds: return "local_expert_ids";
    case StepOp::kRoutedExperts: return "routed_experts";
    case StepOp::kSharedExpert: return "shared_expert";
    case StepOp::kFinalNorm: return "final_norm";
    case StepOp::kLmHead: return "lm_head";
    case StepOp::kArgmax: return "argmax";
  }
  return "?";
}

bool IsDataDependentKey(const std::string& kernel_id, const std::string& key) {
  if (kernel_id == "attn.indexer") return key == "context" || key == "selected";
  if (kernel_id.rfind("attn.sparse_mla.", 0) == 0) return key == "selected";
  if (kernel_id.rfind("moe.", 0) == 0) return key == "unique_experts" || key == "slots";
  return false;
}

std::vector<StepLaunch> DescribeDecodeStep(const ModelArch& c, const StepDims& d) {
  std::vector<StepLaunch> out;
  StepWriter w(&out);
  const Expected e = Expect(c, d);
  const bool tp = d.slice.tp > 1;
  // The runtime sums the FP32 hidden state over ranks (4 bytes per value).
  const kernels::KernelShape all_reduce{{"bytes", int64_t{d.batch} * c.dim * 4},
                                        {"ranks", d.slice.tp}};
  w.Range("embed", kNoLayer);
  w.Add(StepOp::kEmbed, "embedding", {{"rows", d.batch}, {"dim", c.dim}, {"vocab", c.vocab_size}});
  for (int l = 0; l < d.layers; ++l) {
    const uint32_t L = static_cast<uint32_t>(l);
    w.Range(absl::StrCat("layer ", l, "/attn"), L);
    AttentionHalf(c, d, e, w);
    if (tp) {
      w.Range(absl::StrCat("layer ", l, "/comm"), L);
      w.Add(StepOp::kAllReduce, "comm.allreduce", all_reduce);
    }
    w.Range(absl::StrCat("layer ", l, "/moe"), L);
    MoeHalf(c, d, e, w);
    if (tp) {
      w.Range(absl::StrCat("layer ", l, "/comm"), L);
      w.Add(StepOp::kAllReduce, "comm.allreduce", all_reduce);
    }
  }
  w.Range("head", kNoLayer);
  w.Add(StepOp::kFinalNorm, "norm.rmsnorm", {{"rows", d.batch}, {"cols", c.dim}});
  w.Add(StepOp::kLmHead, "gemm.lm_head", {{"m", d.batch}, {"n", c.vocab_size}, {"k", c.dim}});
  w.Add(StepOp::kArgmax, "sampling.argmax", {{"rows", d.batch}, {"cols", c.vocab_size}});
  return out;
}

std::vector<int> ContextLengths(int context, int batch) {
  std::vector<int> lens(std::max(batch, 0));
  for (int b = 0; b < batch; ++b) {
    int64_t drop = batch > 1 ? int64_t{context} / 2 * b / (batch - 1) : 0;
    lens[b] = std::max<int>(1, context - static_cast<int>(drop));
  }
  return lens;
}

double ExpectedUniqueExperts(int experts, int topk, int tokens) {
  if (experts <= 0) return 0;
  double miss = std::pow(1.0 - static_cast<double>(topk) / experts, tokens);
  return experts * (1.0 - miss);
}

std::vector<std::string> SplitRange(const std::string& path) {
  if (path.empty()) return {};
  return absl::StrSplit(path, '/');
}

}  // namespace qprof::runtime
