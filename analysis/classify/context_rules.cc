#include "analysis/classify/context_rules.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/classify/name_rules.h"
#include "proto/vocabulary.h"

namespace qprof::classify {

// THE TABLE. First matching row per frame; the innermost frame with a strong match decides.
// Order inside the table matters where one frame name could match two rows: the router
// rows come before the expert rows ("select_experts" is routing), sparse attention before
// dense attention, and collectives before everything.
const std::vector<ContextRule>& ContextRules() {
  static const auto* rules = new std::vector<ContextRule>{
      // ---- collectives -------------------------------------------------------------
      {"nccl:*", "comm", false, "torch.distributed collective (record_param_comms)"},
      {"c10d::*", "comm", false, "torch.distributed c10d collective op"},
      {"*all_reduce*", "comm", false, "all-reduce"},
      {"*allreduce*", "comm", false, "all-reduce"},
      {"*all_gather*", "comm", false, "all-gather"},
      {"*allgather*", "comm", false, "all-gather"},
      {"*reduce_scatter*", "comm", false, "reduce-scatter"},
      {"*reducescatter*", "comm", false, "reduce-scatter"},
      {"*all_to_all*", "comm", false, "all-to-all (expert-parallel dispatch/combine)"},
      {"*alltoall*", "comm", false, "all-to-all (expert-parallel dispatch/combine)"},
      {"*deep_ep*", "comm", false, "DeepEP expert-parallel dispatch/combine"},
      {"*deepep*", "comm", false, "DeepEP expert-parallel dispatch/combine"},
      // ---- MoE: routing first, then the experts --------------------------------------
      {"*select_experts*", "moe.router", false, "MoE top-k expert selection (vLLM/SGLang select_experts)"},
      {"*grouped_topk*", "moe.router", false, "MoE grouped top-k routing"},
      {"*fused_topk*", "moe.router", false, "MoE fused top-k routing"},
      {"*topk_softmax*", "moe.router", false, "MoE top-k softmax routing"},
      {"*moe_align*", "moe.router", false, "MoE token alignment by expert"},
      {"*router*", "moe.router", false, "MoE router"},
      {"*moegate*", "moe.router", false, "MoE gate module (DeepSeek MoEGate)"},
      {"*triton_kernels/routing.py(*", "moe.router", false, "triton_kernels routing (gpt-oss MoE)"},
      {"*matmul_ogs*", "moe.experts", false, "triton_kernels matmul_ogs: the MoE experts' GEMM"},
      {"*m_grouped*", "moe.experts", false, "DeepGEMM m-grouped GEMM entry point (one GEMM per expert)"},
      {"*moe_forward*", "moe.experts", false, "MoE layer entry point (vllm::moe_forward custom op)"},
      {"*fused_moe*", "moe.experts", false, "fused MoE entry point (vLLM/SGLang fused_moe)"},
      {"*fusedmoe*", "moe.experts", false, "FusedMoE layer"},
      {"*fused_experts*", "moe.experts", false, "fused expert computation"},
      {"*trtllm*moe*", "moe.experts", false, "TensorRT-LLM / FlashInfer MoE kernel entry point"},
      {"*moe*trtllm*", "moe.experts", false, "TensorRT-LLM / FlashInfer MoE kernel entry point"},
      {"*cutlass*moe*", "moe.experts", false, "CUTLASS MoE entry point (cutlass_moe_fp4, ...)"},
      {"*moe*cutlass*", "moe.experts", false, "CUTLASS MoE entry point"},
      {"*cutlass_fp4_group_mm*", "moe.experts", false, "CUTLASS FP4 grouped GEMM of the MoE experts"},
      {"*marlin*moe*", "moe.experts", false, "Marlin MoE entry point (fused_marlin_moe)"},
      {"*moe*marlin*", "moe.experts", false, "Marlin MoE entry point"},
      {"*moe_runner*", "moe.experts", false, "MoE runner (SGLang MoeRunner)"},
      {"*moerunner*", "moe.experts", false, "MoE runner (SGLang MoeRunner)"},
      {"*slot_gemv*", "moe.experts", false, "MoE slot GEMV path"},
      {"*experts*", "moe.experts", false, "experts module or call"},
      // ---- attention: sparse MLA and the indexer before dense attention --------------
      {"*indexer*", "attn.indexer", false, "sparse-attention indexer (top-k token selection)"},
      {"*sparse*mla*", "attn.sparse_mla", false, "sparse MLA attention"},
      {"*mla*sparse*", "attn.sparse_mla", false, "sparse MLA attention"},
      {"*sparse*decode*", "attn.sparse_mla", false, "sparse attention decode"},
      {"*sparse*attn*", "attn.sparse_mla", false, "sparse attention backend"},
      {"*sparse*attention*", "attn.sparse_mla", false, "sparse attention backend"},
      {"*nsa_backend*", "attn.sparse_mla", false, "native sparse attention backend"},
      {"*unified_attention*", "attn.dense", false, "attention op (vllm::unified_attention)"},
      {"*scaled_dot_product*", "attn.dense", false, "scaled dot-product attention op"},
      {"*flash_attn*", "attn.dense", false, "flash-attention op"},
      {"*flash_attention*", "attn.dense", false, "flash-attention op"},
      {"*efficient_attention*", "attn.dense", false, "memory-efficient attention op"},
      {"*paged_attention*", "attn.dense", false, "paged attention op"},
      {"*attn_backend*", "attn.dense", false, "attention backend"},
      {"*attnbackend*", "attn.dense", false, "attention backend"},
      {"*flash_mla*", "attn.dense", false, "FlashMLA decode"},
      {"*flashmla*", "attn.dense", false, "FlashMLA decode"},
      {"*mla_decode*", "attn.dense", false, "MLA decode"},
      {"*batchdecodewithpagedkvcache*", "attn.dense", false, "FlashInfer decode wrapper"},
      {"*batchmlapagedattention*", "attn.dense", false, "FlashInfer MLA decode wrapper"},
      // ---- other model parts -----------------------------------------------------------
      {"*rmsnorm*", "norm", false, "RMSNorm"},
      {"*rms_norm*", "norm", false, "RMSNorm"},
      {"*layernorm*", "norm", false, "LayerNorm"},
      {"*layer_norm*", "norm", false, "LayerNorm"},
      {"*groupnorm*", "norm", false, "GroupNorm"},
      {"*group_norm*", "norm", false, "GroupNorm"},
      {"*batchnorm*", "norm", false, "BatchNorm"},
      {"*batch_norm*", "norm", false, "BatchNorm"},
      // Up- and down-sampling layers (diffusers' upsampling.py, Upsample2D) resize images.
      {"*upsampl*", "elementwise", false, "upsampling layer (resizes images, not token sampling)"},
      {"*downsampl*", "elementwise", false, "downsampling layer (resizes images, not token sampling)"},
      {"*sampler*", "sampling", false, "token sampler"},
      {"*sampling*", "sampling", false, "token sampling"},
      {"*multinomial*", "sampling", false, "multinomial sampling"},
      {"*top_k_top_p*", "sampling", false, "top-k / top-p sampling"},
      {"*argmax*", "sampling", false, "greedy sampling (argmax)"},
      {"*rotary*", "elementwise", false, "rotary position embedding (not a lookup)"},
      // The LM head projects hidden states onto the vocabulary: a GEMM, whose module
      // (vLLM's ParallelLMHead subclasses VocabParallelEmbedding) or caller says so.
      {"*lmhead*", "gemm.dense", false, "LM head: the vocabulary projection (a GEMM)"},
      {"*lm_head*", "gemm.dense", false, "LM head: the vocabulary projection (a GEMM)"},
      {"*logits_processor*", "gemm.dense", false,
       "vLLM LogitsProcessor: the LM head's vocabulary projection (a GEMM)"},
      {"*logitsprocessor*", "gemm.dense", false,
       "vLLM LogitsProcessor: the LM head's vocabulary projection (a GEMM)"},
      {"*compute_logits*", "gemm.dense", false, "compute_logits: the LM head's vocabulary projection"},
      {"*embedding*", "embedding", false, "embedding lookup"},
      {"*embed_tokens*", "embedding", false, "token embedding"},
      // ---- the framework's plain ops: weak -----------------------------------------------
      {"aten::mm", "gemm.dense", true, "plain matrix multiply (aten::mm)"},
      {"aten::addmm", "gemm.dense", true, "plain matrix multiply (aten::addmm)"},
      {"aten::bmm", "gemm.dense", true, "plain batched matrix multiply (aten::bmm)"},
      {"aten::baddbmm", "gemm.dense", true, "plain batched matrix multiply (aten::baddbmm)"},
      {"aten::matmul", "gemm.dense", true, "plain matrix multiply (aten::matmul)"},
      {"aten::linear", "gemm.dense", true, "plain linear layer (aten::linear)"},
      {"aten::_scaled_mm", "gemm.dense", true, "plain scaled (FP8) matrix multiply"},
      {"aten::_grouped_mm", "gemm.dense", true, "plain grouped matrix multiply"},
      {"aten::conv*", "gemm.dense", true, "convolution (implicit GEMM)"},
      {"aten::cudnn_convolution*", "gemm.dense", true, "cuDNN convolution"},
      {"aten::miopen_convolution*", "gemm.dense", true, "MIOpen convolution"},
      {"aten::_convolution*", "gemm.dense", true, "convolution (implicit GEMM)"},
  };
  return *rules;
}

std::string_view FrameKey(std::string_view name) {
  for (std::string_view mark : {", op_id = ", ", seq = ", ", sizes = "}) {
    size_t pos = name.find(mark);
    if (pos != std::string_view::npos) name = name.substr(0, pos);
  }
  return name;
}

std::vector<Frame> FramesOf(const proto::Activity& a, const proto::LaunchContextStats& stacks) {
  std::vector<Frame> out;
  const uint32_t id = a.launch_context().stack();
  if (id != 0 && id < static_cast<uint32_t>(stacks.stacks_size())) {
    for (uint32_t f : stacks.stacks(static_cast<int>(id)).frames()) {
      if (f >= static_cast<uint32_t>(stacks.frames_size())) continue;
      const proto::LaunchFrame& fr = stacks.frames(static_cast<int>(f));
      out.push_back({fr.name(), fr.kind(), !fr.input_dims().empty()});
    }
    return out;
  }
  if (!a.nvtx_path().empty()) {
    for (absl::string_view part : absl::StrSplit(a.nvtx_path(), '/', absl::SkipEmpty())) {
      out.push_back({std::string(part), "nvtx"});
    }
  }
  return out;
}

namespace {

const ContextRule* FirstRule(std::string_view key) {
  static const auto* globs = [] {
    auto* g = new std::vector<PrefilteredGlob>();
    for (const ContextRule& r : ContextRules()) g->emplace_back(r.pattern);
    return g;
  }();
  std::string lowered(key);
  absl::AsciiStrToLower(&lowered);
  const std::vector<ContextRule>& rules = ContextRules();
  for (size_t i = 0; i < rules.size(); ++i) {
    if ((*globs)[i].Match(key, lowered)) return &rules[i];
  }
  return nullptr;
}

std::string FormatOfFrame(std::string_view key) {
  // Plain substrings, as the globs "*mxfp4*" ... were.
  std::string k(key);
  absl::AsciiStrToLower(&k);
  if (absl::StrContains(k, "mxfp4") || absl::StrContains(k, "mxf4")) {
    return std::string(format::kMxfp4);
  }
  if (absl::StrContains(k, "nvfp4")) return std::string(format::kNvfp4);
  if (absl::StrContains(k, "fp8")) return std::string(format::kFp8);
  return "";
}

bool IsPythonFrame(const Frame& f) { return f.kind == "python_function"; }

// How a frame reads in a report: Python frames without their directories
// ("sparse_decode.py(88): sparse_decode_fwd (python)"), others with their kind.
std::string DisplayFrame(const Frame& f) {
  std::string_view name = FrameKey(f.name);
  if (IsPythonFrame(f)) {
    size_t paren = name.find('(');
    size_t slash = name.rfind('/', paren == std::string_view::npos ? name.size() : paren);
    if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
    return absl::StrCat(std::string(name), " (python)");
  }
  return absl::StrCat(std::string(name), " (", f.kind, ")");
}

}  // namespace

namespace {

// What one frame's key matches: the first context rule and the format it names. Stacks
// share their frames (a trace has thousands of stacks over a few hundred frame names), so
// each key is matched against the rules once per thread, not once per stack it appears in.
struct FrameMatch {
  const ContextRule* rule = nullptr;
  std::string format;
};

const FrameMatch& MatchFrame(std::string_view key) {
  thread_local absl::flat_hash_map<std::string, FrameMatch> memo;
  auto it = memo.find(absl::string_view(key.data(), key.size()));
  if (it != memo.end()) return it->second;
  if (memo.size() >= 65536) memo.clear();  // bounded: keys are frame names, few per trace
  FrameMatch m;
  m.rule = FirstRule(key);
  m.format = FormatOfFrame(key);
  return memo.emplace(std::string(key), std::move(m)).first->second;
}

// The launching op: the innermost cpu_op frame, or the innermost emit_nvtx range (which
// carries ", sizes = " when shapes were recorded). Whether it is a GEMM or convolution with
// shapes: a weak row (the plain GEMM and convolution ops) on a frame that has them.
bool LaunchedByGemmWithShapes(const std::vector<Frame>& frames) {
  for (size_t i = frames.size(); i-- > 0;) {
    const Frame& f = frames[i];
    const bool nvtx_op = f.kind == "nvtx" && f.name.find(", op_id = ") != std::string::npos;
    if (f.kind != "cpu_op" && !nvtx_op) continue;
    const bool shapes = f.has_shapes || f.name.find(", sizes = [") != std::string::npos;
    const ContextRule* r = MatchFrame(FrameKey(f.name)).rule;
    return shapes && r != nullptr && r->weak;
  }
  return false;
}

}  // namespace

bool IsGemmRole(std::string_view role) {
  for (std::string_view r : {role::kGemmDense, role::kMoeExperts, role::kMoeRouter, role::kAttnDense,
                             role::kAttnSparseMla, role::kAttnIndexer}) {
    if (role == r) return true;
  }
  return false;
}

ContextVerdict MatchContext(const std::vector<Frame>& frames) {
  ContextVerdict v;
  v.gemm_op = LaunchedByGemmWithShapes(frames);
  const ContextRule* weak = nullptr;
  const Frame* weak_frame = nullptr;
  const Frame* decided = nullptr;
  std::string passed_over;  // the first frame whose role the GEMM op ruled out
  for (size_t i = frames.size(); i-- > 0;) {
    const Frame& f = frames[i];
    const FrameMatch& m = MatchFrame(FrameKey(f.name));
    if (v.format.empty()) v.format = m.format;
    if (decided != nullptr) continue;
    const ContextRule* r = m.rule;
    if (r == nullptr) continue;
    if (r->weak) {
      if (weak == nullptr) { weak = r; weak_frame = &f; }
      continue;
    }
    if (v.gemm_op && !IsGemmRole(r->role)) {
      if (passed_over.empty()) {
        passed_over = absl::StrCat(" (frame '", std::string(FrameKey(f.name)), "' says ", r->role,
                                   ", but the op that launched the kernel is a GEMM or "
                                   "convolution with shapes)");
      }
      continue;
    }
    decided = &f;
    v.role = r->role;
    v.rule = r->pattern;
    v.why = r->why;
  }
  if (decided == nullptr && weak != nullptr) {
    decided = weak_frame;
    v.role = weak->role;
    v.rule = weak->pattern;
    v.why = weak->why;
    // A GEMM op that overruled a frame is no weak guess: the op is the evidence.
    v.weak = passed_over.empty();
  }
  v.why += passed_over;
  if (decided != nullptr) {
    v.frame = std::string(FrameKey(decided->name));
    v.frame_kind = decided->kind;
  }
  // Innermost meaningful frame for display: the deciding frame, else the innermost
  // operator / annotation / NVTX frame, else the innermost Python frame.
  const Frame* shown = decided;
  for (size_t i = frames.size(); shown == nullptr && i-- > 0;) {
    if (!IsPythonFrame(frames[i])) shown = &frames[i];
  }
  if (shown == nullptr && !frames.empty()) shown = &frames.back();
  if (shown != nullptr) v.innermost = DisplayFrame(*shown);
  return v;
}

bool ContextRoleWins(const ContextVerdict& v, std::string_view name_role) {
  if (v.role.empty() || v.role == name_role) return false;
  if (v.weak) return name_role.empty() || name_role == role::kOther;
  // A kernel a GEMM or convolution op launched does that op's work: a name that reads like
  // another role ("patch_embed") does not move it out of the op's roles.
  if (v.gemm_op && !IsGemmRole(name_role) && name_role != role::kComm) return true;
  // Roles that are a function of the kernel itself stay.
  for (std::string_view keep : {role::kComm, role::kMoeRouter, role::kAttnIndexer, role::kNorm,
                                role::kSampling, role::kEmbedding}) {
    if (name_role == keep) return false;
  }
  // A dense-attention name inside a sparse-attention context is the sparse kernel; inside
  // anything else it stays attention. An expert kernel stays one unless a router frame
  // launched it.
  if (name_role == role::kAttnDense) return v.role.rfind("attn.", 0) == 0;
  if (name_role == role::kMoeExperts) return v.role == role::kMoeRouter;
  if (name_role == role::kAttnSparseMla) return false;
  return true;  // gemm.dense, elementwise, memory, other, none
}

}  // namespace qprof::classify
