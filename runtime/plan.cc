#include "runtime/plan.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/registry/registry.h"
#include "kernels/registry/work_models.h"
#include "runtime/tp_shape.h"

namespace qprof::runtime {
namespace {

using kernels::KernelShape;

bool IsNativeFp4Arch(const std::string& arch) {
  // Block-scaled FP4 MMA: tcgen05 on sm_100a/sm_103a, mma.sync kind::mxf4nvf4 on sm_120a.
  return arch.rfind("sm_100", 0) == 0 || arch.rfind("sm_103", 0) == 0 ||
         arch.rfind("sm_120", 0) == 0 || arch.rfind("sm_121", 0) == 0;
}

class PlanBuilder {
 public:
  explicit PlanBuilder(proto::DecodePlan* plan) : plan_(plan) {}

  void Add(const std::string& id, const std::string& path, uint32_t layer,
           const KernelShape& shape) {
    const kernels::KernelInfo* info = kernels::KernelRegistry::Global().Find(id);
    proto::PlannedKernel* k = plan_->add_kernels();
    k->set_kernel_id(id);
    k->set_layer(layer);
    k->set_nvtx_path(path);
    k->set_launches(1);
    for (const auto& [key, v] : shape) (*k->mutable_shape())[key] = v;
    if (info == nullptr) return;  // registry test guarantees every planned id exists
    k->set_name(info->cuda_kernel_name.empty() ? info->id : info->cuda_kernel_name);
    k->set_role(info->role);
    k->set_pipe_class(info->gpu_pipe_class);
    k->set_format(info->format);
    if (info->work) *k->mutable_work() = info->work(shape);
    if (info->launch) *k->mutable_launch() = info->launch(shape);
  }

 private:
  proto::DecodePlan* plan_;
};

}  // namespace

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

std::string ResolveMoeBackend(const std::string& format, const std::string& requested,
                              const std::string& arch) {
  if (requested != "auto" && !requested.empty()) return requested;
  if (format == "mxfp4") return "slot_gemv";
  return IsNativeFp4Arch(arch) ? "fp4_mma" : "w4a16_mma";
}

KernelChoice ChooseKernels(const RunOptions& o) {
  KernelChoice k;
  k.moe_backend = ResolveMoeBackend(o.format, o.moe_backend, o.target_arch);
  k.moe_id = absl::StrCat("moe.", k.moe_backend, ".", o.format);
  std::string mla = o.mla_kernel;
  if (mla.empty() || mla == "auto") mla = k.moe_backend == "slot_gemv" ? "simt" : "mma";
  k.mla_id = absl::StrCat("attn.sparse_mla.", mla);
  return k;
}

absl::Status ValidateRunOptions(const RunOptions& o, const ModelConfig& c) {
  if (o.format != "mxfp4" && o.format != "nvfp4") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown format '", o.format, "' (formats: mxfp4, nvfp4)"));
  }
  const std::string& mb = o.moe_backend;
  if (mb != "auto" && mb != "slot_gemv" && mb != "w4a16_mma" && mb != "fp4_mma") {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown MoE backend '", mb, "' (auto, slot_gemv, w4a16_mma, fp4_mma)"));
  }
  if (o.mla_kernel != "auto" && o.mla_kernel != "simt" && o.mla_kernel != "mma") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown MLA kernel '", o.mla_kernel, "' (auto, simt, mma)"));
  }
  RETURN_IF_ERROR(ValidateModelConfig(c, o.format));
  if (o.batch < 1) return absl::InvalidArgumentError(absl::StrCat("batch ", o.batch, " < 1"));
  if (o.steps < 1) return absl::InvalidArgumentError(absl::StrCat("steps ", o.steps, " < 1"));
  if (o.context < 1) {
    return absl::InvalidArgumentError(absl::StrCat("context ", o.context, " < 1"));
  }
  if (int64_t{o.context} + o.steps > c.max_seq_len) {
    return absl::InvalidArgumentError(
        absl::StrCat("context ", o.context, " + steps ", o.steps, " exceeds max_seq_len ",
                     c.max_seq_len, " of model ", c.name));
  }
  if (o.layers < 0 || o.layers > c.n_layers) {
    return absl::InvalidArgumentError(
        absl::StrCat("layers ", o.layers, " outside 0..", c.n_layers, " of model ", c.name));
  }
  // The runtime's split (runtime/tp_shape.h): heads and routed experts divide by tp; the
  // shared expert splits when it can and otherwise runs on rank 0; the LM head is whole.
  return ValidateTensorParallel(c, o.tp);
}

absl::StatusOr<proto::DecodePlan> PlanDecodeForConfig(const RunOptions& o,
                                                      const ModelConfig& c) {
  RETURN_IF_ERROR(ValidateRunOptions(o, c));
  const KernelChoice choice = ChooseKernels(o);
  const int layers = o.layers > 0 ? o.layers : c.n_layers;
  const int B = o.batch, tp = o.tp;
  // Rank 0's share, exactly as the CUDA runtime slices it (runtime/tp_shape.h): its heads,
  // its routed experts (whole, all of their intermediate width), its columns of the shared
  // expert (all of them when the split does not fit the kernel's granule). Every rank
  // computes the whole LM head and every logit.
  ASSIGN_OR_RETURN(const TpSlice rank0,
                   MakeTpSlice(c, o.format == "mxfp4" ? kernels::Fp4Format::kMxfp4
                                                      : kernels::Fp4Format::kNvfp4,
                               tp, 0, MoeInterGranule(choice.moe_backend)));
  const int heads = tp > 1 ? rank0.heads() : c.n_heads;
  const int local_experts = tp > 1 ? rank0.experts() : c.n_routed_experts;
  const int shared_inter =
      tp > 1 ? rank0.shared_inter() : c.moe_inter_dim * std::max(1, c.n_shared_experts);
  const int vocab = c.vocab_size;
  const int E = c.n_routed_experts, k = c.n_activated_experts;
  const int dqk = c.d_qk(), dv = c.kv_lora_rank;
  std::vector<int> lens = ContextLengths(o.context, B);

  // Step 0 appends one token, then attends over len + 1 tokens.
  double ctx = 0, sel = 0;
  for (int len : lens) {
    ctx += len + 1;
    sel += std::min(len + 1, c.index_topk + c.window);
  }
  const int64_t avg_ctx = std::llround(ctx / B), avg_sel = std::llround(sel / B);
  // Distinct experts hit, and slots routed, among this rank's experts (uniform routing:
  // each expert is equally likely, so a rank sees 1/tp of both on average).
  const int64_t unique = std::llround(ExpectedUniqueExperts(E, k, B) / tp);
  const int64_t local_slots = std::llround(static_cast<double>(B) * k / tp);

  proto::DecodePlan plan;
  plan.set_model(c.name);
  plan.set_format(o.format);
  plan.set_moe_backend(choice.moe_backend);
  plan.set_batch(B);
  for (int len : lens) plan.add_context_lengths(len);
  plan.set_tp(tp);
  plan.set_layers(layers);
  PlanBuilder add(&plan);
  const std::string step = "decode/step 0";
  // The runtime sums the FP32 hidden state over ranks (4 bytes per value).
  const int64_t allreduce_bytes = int64_t{B} * c.dim * 4;

  add.Add("embedding", step + "/embed", kNoLayer,
          {{"rows", B}, {"dim", c.dim}, {"vocab", c.vocab_size}});
  for (int l = 0; l < layers; ++l) {
    const std::string attn = absl::StrCat(step, "/layer ", l, "/attn");
    const std::string comm = absl::StrCat(step, "/layer ", l, "/comm");
    const std::string moe = absl::StrCat(step, "/layer ", l, "/moe");
    const uint32_t L = l;
    auto gemm = [&](const std::string& path, int n, int kk) {
      add.Add("gemm.dense", path, L, {{"m", B}, {"n", n}, {"k", kk}});
    };
    add.Add("norm.rmsnorm", attn, L, {{"rows", B}, {"cols", c.dim}});
    gemm(attn, c.q_lora_rank, c.dim);                           // wq_a
    add.Add("norm.rmsnorm", attn, L, {{"rows", B}, {"cols", c.q_lora_rank}});
    gemm(attn, heads * dqk, c.q_lora_rank);                     // wq_b
    gemm(attn, dqk, c.dim);                                     // wkv_a
    add.Add("norm.rmsnorm", attn, L, {{"rows", B}, {"cols", dv}});
    // Two launches: the query heads, then the one latent key.
    add.Add("rope", attn, L, {{"rows", B}, {"heads", heads}, {"rope_dim", c.rope_dim}});
    add.Add("rope", attn, L, {{"rows", B}, {"heads", 1}, {"rope_dim", c.rope_dim}});
    gemm(attn, c.index_n_heads * c.index_head_dim, c.q_lora_rank);  // wi_q
    gemm(attn, c.index_head_dim, c.dim);                        // wi_k
    gemm(attn, c.index_n_heads, c.dim);                         // wi_w
    add.Add("attn.kv_append", attn, L,
            {{"batch", B}, {"d_qk", dqk}, {"index_dim", c.index_head_dim}});
    add.Add("attn.indexer", attn, L,
            {{"batch", B}, {"context", avg_ctx}, {"index_heads", c.index_n_heads},
             {"index_dim", c.index_head_dim}, {"selected", avg_sel}});
    add.Add(choice.mla_id, attn, L,
            {{"batch", B}, {"heads", heads}, {"selected", avg_sel}, {"d_qk", dqk},
             {"d_v", dv}});
    gemm(attn, c.o_lora_rank, heads * dv);                      // wo_a
    gemm(attn, c.dim, c.o_lora_rank);                           // wo_b (+ residual)
    if (tp > 1) {
      add.Add("comm.allreduce", comm, L, {{"bytes", allreduce_bytes}, {"ranks", tp}});
    }
    add.Add("norm.rmsnorm", moe, L, {{"rows", B}, {"cols", c.dim}});
    add.Add("moe.router", moe, L,
            {{"tokens", B}, {"experts", E}, {"dim", c.dim}, {"topk", k}});
    if (tp > 1) add.Add("tp.local_expert_ids", moe, L, {{"ids", int64_t{B} * k}});
    KernelShape routed{{"tokens", B}, {"topk", k}, {"experts", local_experts}, {"dim", c.dim},
                       {"inter", c.moe_inter_dim}, {"unique_experts", unique}};
    if (tp > 1) routed["slots"] = local_slots;
    add.Add(choice.moe_id, moe, L, routed);
    if (c.n_shared_experts > 0 && shared_inter > 0) {
      add.Add(choice.moe_id, moe, L,
              {{"tokens", B}, {"topk", 1}, {"experts", 1}, {"dim", c.dim},
               {"inter", shared_inter}, {"unique_experts", 1}});
    }
    if (tp > 1) {
      add.Add("comm.allreduce", comm, L, {{"bytes", allreduce_bytes}, {"ranks", tp}});
    }
  }
  const std::string head = step + "/head";
  add.Add("norm.rmsnorm", head, kNoLayer, {{"rows", B}, {"cols", c.dim}});
  add.Add("gemm.lm_head", head, kNoLayer, {{"m", B}, {"n", vocab}, {"k", c.dim}});
  add.Add("sampling.argmax", head, kNoLayer, {{"rows", B}, {"cols", vocab}});

  double expert_bytes = 0, dense_bytes = 0, kv_bytes = 0;
  for (const proto::PlannedKernel& pk : plan.kernels()) {
    if (pk.role() == "moe.experts") {
      expert_bytes += pk.work().weight_bytes();
    } else {
      dense_bytes += pk.work().weight_bytes();
    }
    kv_bytes += pk.work().kv_bytes();
  }
  plan.set_active_expert_weight_bytes(expert_bytes);
  plan.set_dense_weight_bytes(dense_bytes);
  plan.set_kv_bytes(kv_bytes);

  plan.add_notes(absl::StrFormat(
      "moe backend %s (requested %s, target arch '%s'); sparse MLA %s", choice.moe_backend,
      o.moe_backend, o.target_arch, choice.mla_id));
  plan.add_notes(absl::StrFormat(
      "unique routed experts per layer assumed %d of %d: E*(1-(1-k/E)^B) for uniform routing "
      "(k=%d, B=%d)%s; slot paths read expert weights once per (token, slot)",
      unique, local_experts, k, B, tp > 1 ? absl::StrFormat(", divided by tp %d", tp) : ""));
  plan.add_notes(absl::StrFormat(
      "attended tokens per sequence: min(len+1, index_topk %d + window %d), averaged: %d; "
      "an upper bound (the window may overlap the top-k)",
      c.index_topk, c.window, avg_sel));
  if (tp > 1) {
    plan.add_notes(absl::StrFormat(
        "tp %d, rank 0's share as the CUDA runtime slices it: %d of %d heads, routed experts "
        "%d..%d of %d (whole; expected %d slots routed to them), shared expert columns %d of "
        "%d%s; LM head, norms, indexer and latent KV replicated; FP32 all-reduce of the "
        "hidden state after attention and after the MoE (range .../comm)",
        tp, heads, c.n_heads, rank0.expert_begin, rank0.expert_end - 1, E, local_slots,
        shared_inter, c.moe_inter_dim * std::max(1, c.n_shared_experts),
        rank0.shared_split ? "" : " (not split: the kernel's granule does not divide it)"));
  }
  if (layers != c.n_layers) {
    plan.add_notes(absl::StrFormat("layer subset: %d of %d layers", layers, c.n_layers));
  }
  return plan;
}

absl::StatusOr<proto::DecodePlan> PlanDecode(const RunOptions& options) {
  ASSIGN_OR_RETURN(ModelConfig c, LoadModelConfig(options.model));
  return PlanDecodeForConfig(options, c);
}

}  // namespace qprof::runtime
