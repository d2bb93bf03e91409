#include "analysis/classify/name_rules.h"

#include <cctype>

namespace qprof::classify {

// THE TABLE. Read top to bottom; first row with an opinion wins, separately for class and
// role. Section order matters:
//   1. role-only rows for specific roles (router before experts, sparse MLA before dense
//      attention), so that a tensor-core GEMM inside an MoE gets role moe.experts;
//   2. communication and memory rows (class and role);
//   3. traps: kernels whose names suggest tensor cores but run on CUDA cores;
//   4. tensor-core families; 5. SIMT families; 6. role-only fallbacks.
const std::vector<NameRule>& NameRules() {
  static const auto* rules = new std::vector<NameRule>{
      // ---- 1. specific roles (no class opinion) ------------------------------------
      {"*topk*gating*", "", "moe.router", "MoE top-k gating"},
      {"*topk_softmax*", "", "moe.router", "MoE top-k softmax"},
      {"*grouped_topk*", "", "moe.router", "MoE grouped top-k"},
      {"*moe_align*", "", "moe.router", "MoE token alignment / sort by expert"},
      {"*router*", "", "moe.router", "router"},
      {"*moe*", "", "moe.experts", "MoE expert kernel"},
      {"*expert*", "", "moe.experts", "expert kernel"},
      {"*slot_gemv*", "", "moe.experts", "MoE slot GEMV"},
      {"*indexer*", "", "attn.indexer", "sparse-attention indexer"},
      {"*sparse*mla*", "", "attn.sparse_mla", "sparse MLA attention"},
      {"*mla*sparse*", "", "attn.sparse_mla", "sparse MLA attention"},
      // FlashInfer ships more than attention: its norm, sampling and activation kernels
      // say "flashinfer" too, so they come before the flash-attention rows (role and class).
      {"*flashinfer::norm::*", "simt", "norm", "FlashInfer norm kernel (CUDA cores, not attention)"},
      {"*flashinfer::sampling::*", "simt", "sampling", "FlashInfer sampling kernel (not attention)"},
      {"*flashinfer::activation::*", "simt", "elementwise", "FlashInfer activation kernel"},
      {"*flash*", "", "attn.dense", "flash attention"},
      {"*fmha*", "", "attn.dense", "fused multi-head attention"},
      {"*attention*", "", "attn.dense", "attention"},
      {"*attn*", "", "attn.dense", "attention"},
      {"*sdpa*", "", "attn.dense", "scaled dot-product attention"},
      {"*_mla*", "", "attn.dense", "MLA attention"},
      {"*rmsnorm*", "", "norm", "RMSNorm"},
      {"*rms_norm*", "", "norm", "RMSNorm"},
      {"*layer_norm*", "", "norm", "LayerNorm"},
      {"*layernorm*", "", "norm", "LayerNorm"},
      {"*group_norm*", "", "norm", "GroupNorm"},
      {"*groupnorm*", "", "norm", "GroupNorm"},
      {"*batch_norm*", "", "norm", "BatchNorm"},
      {"*batchnorm*", "", "norm", "BatchNorm"},
      {"*bn_fw*", "", "norm", "cuDNN BatchNorm forward"},
      {"*bn_bw*", "", "norm", "cuDNN BatchNorm backward"},
      {"*embedding*", "", "embedding", "embedding lookup"},
      {"*index_select*", "", "embedding", "index select (gather)"},
      {"*indexselect*", "", "embedding", "index select (gather)"},
      {"*sampling*", "", "sampling", "token sampling"},
      {"*sampler*", "", "sampling", "token sampler"},
      {"*argmax*", "", "sampling", "greedy sampling (argmax)"},
      {"*multinomial*", "", "sampling", "multinomial sampling"},
      {"*top_p*", "", "sampling", "top-p sampling"},
      // ---- 2. communication and memory ---------------------------------------------
      {"*nccl*", "comm", "comm", "NCCL collective kernel"},
      {"*cross_device_reduce*", "comm", "comm",
       "custom all-reduce across GPUs (a reduce kernel, but communication)"},
      {"*multimem_all_reduce*", "comm", "comm", "NVLS multimem all-reduce (communication)"},
      {"*all_reduce*", "comm", "comm", "all-reduce"},
      {"*allreduce*", "comm", "comm", "all-reduce"},
      {"*all_gather*", "comm", "comm", "all-gather"},
      {"*allgather*", "comm", "comm", "all-gather"},
      {"*reduce_scatter*", "comm", "comm", "reduce-scatter"},
      {"*reducescatter*", "comm", "comm", "reduce-scatter"},
      {"*all_to_all*", "comm", "comm", "all-to-all"},
      {"*alltoall*", "comm", "comm", "all-to-all"},
      {"*memcpy*", "memory", "memory", "memory copy"},
      {"*memset*", "memory", "memory", "memory set"},
      {"*copy_kernel*", "memory", "memory", "copy / dtype-cast kernel: moves bytes"},
      {"*catarraybatchedcopy*", "memory", "memory", "torch.cat copy"},
      {"*fillfunctor*", "memory", "memory", "fill (memset-like)"},
      {"*nchwtonhwc*", "memory", "memory", "layout transform copy"},
      {"*nhwctonchw*", "memory", "memory", "layout transform copy"},
      // ---- 3. traps: names that look like tensor cores but are not ------------------
      {"*xmma*ffma*", "simt", "gemm.dense",
       "xmma kernel with ffma in its name: FP32 FFMA on CUDA cores despite 'xmma'"},
      {"*gemm*_ffma*", "simt", "gemm.dense", "FFMA GEMM (CUDA cores)"},
      {"*sgemm*", "simt", "gemm.dense", "cuBLAS/cuDNN FP32 SIMT GEMM (sgemm)"},
      {"*dgemm*", "simt", "gemm.dense", "FP64 GEMM on CUDA cores"},
      {"*cgemm*", "simt", "gemm.dense", "complex FP32 GEMM on CUDA cores"},
      {"*scudnn*", "simt", "gemm.dense", "cuDNN FP32 SIMT convolution (scudnn)"},
      {"*_simt_*", "simt", "", "CUTLASS SIMT kernel"},
      {"*opclasssimt*", "simt", "", "CUTLASS OpClassSimt"},
      {"*mxfp4_slot_gemv*", "simt", "moe.experts",
       "MXFP4 slot GEMV: arithmetic E2M1 decode + FP32 FMA, no tensor-core dot"},
      // ---- 4. tensor-core families ---------------------------------------------------
      {"nvjet*", "tensor", "gemm.dense", "cuBLAS nvjet tensor-core GEMM"},
      {"sm*_xmma_*", "tensor", "gemm.dense", "cuBLAS/cuDNN xmma tensor-core kernel"},
      {"*xmma*", "tensor", "gemm.dense", "xmma tensor-core kernel"},
      {"*tensorop*", "tensor", "gemm.dense", "CUTLASS tensorop kernel"},
      {"*opclasstensorop*", "tensor", "gemm.dense", "CUTLASS OpClassTensorOp"},
      {"*16816gemm*", "tensor", "gemm.dense", "m16n8k16 MMA GEMM (s16816/h16816)"},
      {"*1688gemm*", "tensor", "gemm.dense", "m16n8k8 MMA GEMM (s1688/h1688)"},
      {"*16832gemm*", "tensor", "gemm.dense", "m16n8k32 integer MMA GEMM"},
      {"*884gemm*", "tensor", "gemm.dense", "Volta m8n8k4 HMMA GEMM"},
      {"*bmm_*e2m1*", "tensor", "gemm.dense", "TRT-LLM FP4 (E2M1) block-scaled bmm"},
      {"*marlin*", "tensor", "gemm.dense", "Marlin W4A16 (mma.sync BF16/FP16)"},
      {"*flash*", "tensor", "attn.dense", "flash attention (mma)"},
      {"*fmha*", "tensor", "attn.dense", "fused MHA (mma)"},
      {"*wgmma*", "tensor", "", "Hopper warpgroup MMA"},
      {"*tcgen05*", "tensor", "", "Blackwell tcgen05 MMA"},
      // ---- 5. SIMT families ----------------------------------------------------------
      {"gemv2t_kernel*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"gemv2n_kernel*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"gemvnsp*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"*splitkreduce*", "simt", "gemm.dense", "cuBLAS split-K reduction"},
      {"*elementwise_kernel*", "simt", "elementwise", "PyTorch elementwise kernel"},
      {"*reduce_kernel*", "simt", "elementwise", "PyTorch reduction kernel"},
      {"*softmax*", "simt", "elementwise", "softmax"},
      {"triton_poi_*", "simt", "elementwise", "Inductor pointwise Triton kernel"},
      {"triton_red_*", "simt", "elementwise", "Inductor reduction Triton kernel"},
      {"triton_per_*", "simt", "elementwise", "Inductor persistent reduction Triton kernel"},
      {"*rmsnorm*", "simt", "norm", "RMSNorm"},
      {"*rms_norm*", "simt", "norm", "RMSNorm"},
      {"*layer_norm*", "simt", "norm", "LayerNorm"},
      {"*layernorm*", "simt", "norm", "LayerNorm"},
      {"*bn_fw*", "simt", "norm", "cuDNN BatchNorm"},
      {"*bn_bw*", "simt", "norm", "cuDNN BatchNorm"},
      {"*multi_tensor_apply*", "simt", "elementwise", "fused optimizer (multi-tensor apply)"},
      {"*pool*", "simt", "other", "pooling"},
      {"*radixsort*", "simt", "other", "CUB radix sort"},
      {"*fft*", "simt", "other", "FFT"},
      {"*split_embedding*", "simt", "embedding", "FBGEMM table-batched embedding"},
      {"*index_select*", "memory", "embedding", "index select (gather: moves rows)"},
      {"*indexselect*", "memory", "embedding", "index select (gather: moves rows)"},
      {"cub::*", "simt", "other", "CUB device algorithm (scan, sort, reduce-by-key)"},
      {"*gemvx*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"gemmk1_kernel*", "simt", "gemm.dense", "cuBLAS k=1 GEMM (CUDA cores)"},
      {"*reducesplitk*", "simt", "gemm.dense", "split-K reduction of a GEMM"},
      {"*gammabeta*", "simt", "norm", "LayerNorm backward (gamma/beta)"},
      {"*dropout*", "simt", "elementwise", "dropout"},
      {"*distribution_elementwise*", "simt", "elementwise", "random number generation"},
      {"*argmax*", "simt", "sampling", "argmax"},
      // ---- 6. role-only fallbacks ----------------------------------------------------
      {"*gemm*", "", "gemm.dense", "GEMM (pipe not told by the name)"},
      {"*gemv*", "", "gemm.dense", "GEMV (pipe not told by the name)"},
      {"*matmul*", "", "gemm.dense", "matmul (pipe not told by the name)"},
      {"*conv*", "", "gemm.dense", "convolution (implicit GEMM)"},
      {"*copy*", "", "memory", "copy"},
      {"*silu*", "", "elementwise", "SiLU"},
      {"*gelu*", "", "elementwise", "GELU"},
      {"*rotary*", "", "elementwise", "rotary embedding"},
      {"*rope_*", "", "elementwise", "rotary embedding"},
      {"*_rope*", "", "elementwise", "rotary embedding"},
  };
  return *rules;
}

const std::vector<FormatRule>& FormatRules() {
  static const auto* rules = new std::vector<FormatRule>{
      {"*nvfp4*", "nvfp4"},
      {"*e2m1*ue4m3*", "nvfp4"},
      {"*ue4m3*e2m1*", "nvfp4"},
      {"*mxf4nvf4*", "fp4"},  // instruction kind shared by both FP4 formats
      {"*mxfp4*", "mxfp4"},
      {"*mxf4*", "mxfp4"},
      {"*e2m1*ue8m0*", "mxfp4"},
      {"*ue8m0*e2m1*", "mxfp4"},
      {"*e2m1*", "fp4"},      // block scaling not told by the name
      {"*fp4*", "fp4"},
      {"*e4m3*", "fp8"},
      {"*e5m2*", "fp8"},
      {"*fp8*", "fp8"},
      {"*qgmma*", "fp8"},
      {"*bf16*", "bf16"},
      {"*bfloat16*", "bf16"},
      {"*fp16*", "fp16"},
      {"*_f16*", "fp16"},
      {"*half*", "fp16"},
      {"*h16816gemm*", "fp16"},
      {"*h1688gemm*", "fp16"},
      {"*h884gemm*", "fp16"},
      {"*hgemm*", "fp16"},
      {"*int8*", "int8"},
      {"*i8816*", "int8"},
      {"*imma*", "int8"},
      {"*int4*", "int4"},
      {"*tf32*", "fp32"},
      {"*f32f32*", "fp32"},
      {"*sgemm*", "fp32"},
      {"*fp32*", "fp32"},
      {"*s1688gemm*", "fp32"},  // CUTLASS s1688: FP32 data via TF32 MMA
      {"*float*", "fp32"},
  };
  return *rules;
}

bool GlobMatch(std::string_view p, std::string_view t) {
  // Iterative glob with single-star backtracking: O(|p| * |t|) worst case.
  size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  auto eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  };
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || (p[pi] != '*' && eq(p[pi], t[ti])))) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

NameRuleMatch MatchNameRules(std::string_view name) {
  NameRuleMatch m;
  m.format = "unknown";
  for (const NameRule& r : NameRules()) {
    bool need_class = m.pipe_class.empty() && r.pipe_class[0] != '\0';
    bool need_role = m.role.empty() && r.role[0] != '\0';
    if (!need_class && !need_role) continue;
    if (!GlobMatch(r.pattern, name)) continue;
    if (need_class) {
      m.pipe_class = r.pipe_class;
      m.class_rule = r.pattern;
      m.class_why = r.why;
    }
    if (need_role) {
      m.role = r.role;
      m.role_rule = r.pattern;
    }
    if (!m.pipe_class.empty() && !m.role.empty()) break;
  }
  for (const FormatRule& r : FormatRules()) {
    if (GlobMatch(r.pattern, name)) {
      m.format = r.format;
      break;
    }
  }
  return m;
}

}  // namespace qprof::classify
