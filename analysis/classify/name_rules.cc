#include "analysis/classify/name_rules.h"

#include <cctype>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"

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
      // ---- 0. generated kernels: names that list the ops fused into them ------------
      // Inductor names a Triton kernel after the ops it fused, so its name can hold any
      // family's word ("flash", "all_reduce", "moe", "fmha"): the class comes from these rows,
      // before every row that reads a word. The words still name the ops it fused, so the
      // role rows below may read them ("moe_forward": part of the MoE layer); a kernel whose
      // words name no role is elementwise (section 6), and the launch context refines it.
      {"triton_poi_*", "simt", "",
       "Inductor pointwise Triton kernel (its name lists the fused ops, not a kernel family)"},
      {"triton_red_*", "simt", "",
       "Inductor reduction Triton kernel (its name lists the fused ops, not a kernel family)"},
      {"triton_per_*", "simt", "",
       "Inductor persistent-reduction Triton kernel (its name lists the fused ops)"},
      {"triton_tem_fused_*mm*", "tensor", "gemm.dense", "Inductor Triton template matmul (tl.dot)"},
      // ---- 0. kernel families of the serving stacks (class and role) ---------------
      // Each row names its family; the tests hold a real or faithfully synthetic name of
      // each (tests/analysis/name_rules_test.cc). These come first because the generic
      // rows below would give them a role by a word in their name ("matmul", "flash").
      // triton_kernels (OpenAI; vLLM and SGLang run gpt-oss's MXFP4 MoE through it).
      {"_p_matmul_ogs_*", "tensor", "moe.experts",
       "triton_kernels persistent matmul_ogs: the MoE experts' gather/scatter GEMM (tl.dot)"},
      {"_matmul_ogs_*", "tensor", "moe.experts",
       "triton_kernels matmul_ogs: the MoE experts' gather/scatter GEMM (tl.dot)"},
      {"_finalize_matmul*", "simt", "moe.experts",
       "triton_kernels finalize: scatter and weighted sum of the top-k expert outputs"},
      {"_topk_forward*", "simt", "moe.router", "triton_kernels routing: top-k of the router logits"},
      {"_combined_routing_*", "simt", "moe.router",
       "triton_kernels routing: expert histogram and gather/scatter indices"},
      {"_sum_bitmatrix_rows*", "simt", "moe.router",
       "triton_kernels routing: tokens per expert from the routing bitmatrix"},
      // Newer triton_kernels call the same GEMM `_matmul_<layout>_...`: a tensor-core GEMM
      // that serves dense layers and experts alike, so the launch context tells the role.
      {"_p_matmul_???_*", "tensor", "", "triton_kernels persistent matmul (tl.dot)"},
      {"_matmul_???_*", "tensor", "", "triton_kernels matmul (tl.dot)"},
      // TensorRT-LLM / FlashInfer MoE (trtllm_fp4_block_scale_moe, trtllm_fp8_*_moe, CUTLASS
      // fused MoE): routing, the experts' batched GEMMs (trtllm-gen `bmm_<A>_<B>_<acc>_...`),
      // the permutation and the finalize that sums the top-k outputs.
      {"*finalizemoerouting*", "simt", "moe.experts",
       "TensorRT-LLM MoE finalize: un-permute and weighted sum of the top-k expert outputs"},
      {"*finalize::finalizekernel*", "simt", "moe.experts",
       "trtllm-gen MoE finalize: weighted sum of the top-k expert outputs"},
      {"*routingindices*", "simt", "moe.router", "TensorRT-LLM MoE routing (routingIndices*Kernel)"},
      {"*routinginitexpertcounts*", "simt", "moe.router", "TensorRT-LLM MoE routing: expert counts"},
      {"*routingrenormalize::*", "simt", "moe.router", "TensorRT-LLM MoE routing (renormalize)"},
      {"*routingdeepseek::*", "simt", "moe.router", "TensorRT-LLM MoE routing (DeepSeek groups)"},
      {"*routingllama4::*", "simt", "moe.router", "TensorRT-LLM MoE routing (Llama 4)"},
      {"*expertprefixsum*", "simt", "moe.router", "TensorRT-LLM MoE routing: prefix sums per expert"},
      {"*buildexpertmaps*", "simt", "moe.router", "TensorRT-LLM MoE routing: token/expert maps"},
      {"*expandinputrows*", "memory", "moe.experts",
       "TensorRT-LLM MoE: permutes token rows into expert order (moves bytes)"},
      {"*doactivationkernel*", "simt", "moe.experts",
       "TensorRT-LLM MoE: activation between the two expert GEMMs"},
      {"bmm_*e2m1*", "tensor", "moe.experts",
       "trtllm-gen FP4 (E2M1) batched GEMM: the experts' GEMM of the TensorRT-LLM / FlashInfer "
       "FP4 block-scale MoE"},
      // FP8/BF16 trtllm-gen batched GEMMs serve the MoE and the MLA BMMs alike.
      {"bmm_*", "tensor", "gemm.dense",
       "trtllm-gen batched GEMM (bmm_<A>_<B>_<acc>): MoE experts or MLA BMM, the launch "
       "context tells"},
      // SGLang / vLLM MoE.
      {"*fused_moe_kernel*", "tensor", "moe.experts",
       "Triton fused MoE GEMM (vLLM/SGLang fused_moe_kernel, tl.dot)"},
      {"*moe_align_block_size*", "simt", "moe.router",
       "MoE token alignment: sorts tokens by expert into GEMM blocks"},
      {"*count_and_sort_expert_tokens*", "simt", "moe.router", "MoE token sort by expert"},
      {"*moe_sum*", "simt", "moe.experts", "sum of the top-k expert outputs (moe_sum)"},
      {"*moe_fused_gate*", "simt", "moe.router", "MoE fused gate (SGLang): biased grouped top-k"},
      {"*marlin_moe*", "tensor", "moe.experts", "Marlin MoE: W4A16/W8A16 expert GEMM (mma.sync)"},
      {"*moe_wna16*", "tensor", "moe.experts", "Marlin MoE: W4A16/W8A16 expert GEMM (mma.sync)"},
      // CUTLASS grouped GEMM (cutlass_fp4_group_mm, cutlass_moe_mm): one GEMM per expert;
      // the class comes from its mainloop below.
      {"*groupproblemshape*", "", "moe.experts",
       "CUTLASS grouped GEMM (GroupProblemShape): one GEMM per expert (cutlass_fp4_group_mm)"},
      // DeepGEMM: GemmType (deep_gemm/common/types.hpp) is a template value the demangler
      // prints as a number: 1 m-grouped contiguous, 2 m-grouped masked, 3 k-grouped
      // contiguous, 5/6 their psum layouts: one GEMM per expert. 0 normal, 4 batched.
      {"deep_gemm::*mqa_logits*", "tensor", "attn.indexer",
       "DeepGEMM MQA logits: the sparse-attention indexer's scores (DeepSeek V3.2/V4)"},
      {"deep_gemm::*(deep_gemm::gemmtype)1*", "tensor", "moe.experts",
       "DeepGEMM m-grouped contiguous GEMM: one GEMM per expert"},
      {"deep_gemm::*(deep_gemm::gemmtype)2*", "tensor", "moe.experts",
       "DeepGEMM m-grouped masked GEMM: one GEMM per expert"},
      {"deep_gemm::*(deep_gemm::gemmtype)3*", "tensor", "moe.experts",
       "DeepGEMM k-grouped contiguous GEMM: one GEMM per expert"},
      {"deep_gemm::*(deep_gemm::gemmtype)5*", "tensor", "moe.experts",
       "DeepGEMM m-grouped contiguous GEMM (psum layout): one GEMM per expert"},
      {"deep_gemm::*(deep_gemm::gemmtype)6*", "tensor", "moe.experts",
       "DeepGEMM k-grouped contiguous GEMM (psum layout): one GEMM per expert"},
      {"deep_gemm::*", "tensor", "gemm.dense", "DeepGEMM GEMM (wgmma / tcgen05)"},
      // DeepEP: expert-parallel all-to-all (dispatch, combine and their notify kernels), in
      // its public namespace (deep_ep::) and DeepSeek's in-house one (dpsk::ep::). The layout
      // kernel only counts tokens per rank and expert: it communicates nothing.
      {"*ep::*get_dispatch_layout*", "simt", "moe.router",
       "DeepEP dispatch layout: counts the tokens each rank and expert receives (no communication)"},
      {"deep_ep::*", "comm", "comm", "DeepEP expert-parallel dispatch/combine (communication)"},
      {"dpsk::ep::*", "comm", "comm",
       "DeepEP in DeepSeek's in-house spelling (dpsk::ep::internode dispatch, combine, "
       "notify_dispatch, cached_notify): expert-parallel all-to-all"},
      // DeepSeek's in-house grouped GEMMs (dpsk::grouped_gemm::cuda::<recipe>::GemmKernel in a
      // CUTLASS device_kernel; fp8_ptp128c = FP8 with per-token and per-128-channel scales,
      // m_grouped = grouped along M, one group per expert) and their helpers.
      {"*dpsk::grouped_gemm::*::gemmkernel*", "tensor", "moe.experts",
       "DeepSeek grouped GEMM (dpsk::grouped_gemm, CUTLASS wgmma): one GEMM per expert"},
      {"*dpsk::grouped_gemm::*transpose*", "memory", "moe.experts",
       "DeepSeek grouped GEMM helper: transposes the FP8 operands (moves bytes)"},
      {"*dpsk::grouped_gemm::*", "simt", "moe.experts",
       "DeepSeek grouped GEMM helper (TMA descriptors, layouts)"},
      // DeepSeek's in-house training kernels (namespace cuda::): FP8 casts with per-token or
      // per-channel scales (some fused with SwiGLU or a transpose), SwiGLU, the MoE's token
      // maps and the top-k sum. None issues an MMA.
      {"cuda::per_token_cast*", "simt", "elementwise",
       "DeepSeek training kernel: FP8 cast with per-token scales (elementwise)"},
      {"cuda::per_channel_cast*", "simt", "elementwise",
       "DeepSeek training kernel: FP8 cast with per-channel scales, fused with a transpose"},
      {"cuda::cast_back*", "simt", "elementwise", "DeepSeek training kernel: FP8 back to BF16"},
      {"cuda::swiglu*", "simt", "elementwise",
       "DeepSeek training kernel: SwiGLU forward/backward (some fused with the FP8 cast)"},
      {"cuda::batched_transpose*", "memory", "memory", "DeepSeek training kernel: transpose (moves bytes)"},
      {"cuda::reduce_fused*", "simt", "moe.experts",
       "DeepSeek training kernel: weighted sum of the top-k expert outputs"},
      {"cuda::expand_to_fused*", "memory", "moe.experts",
       "DeepSeek training kernel: copies token rows and their scales into expert order"},
      {"cuda::topk_sum_and_topk_idx*", "simt", "moe.router",
       "DeepSeek training kernel: group-limited top-k routing"},
      {"cuda::get_fused_mapping*", "simt", "moe.router", "DeepSeek training kernel: token/expert maps"},
      {"cuda::clean_and_count_expert*", "simt", "moe.router",
       "DeepSeek training kernel: tokens per expert"},
      {"cuda::unique_group_indices*", "simt", "moe.router",
       "DeepSeek training kernel: expert groups of the routed tokens"},
      {"cuda::aux_fi*", "simt", "moe.router",
       "DeepSeek training kernel: per-expert load fractions of the auxiliary balance loss"},
      // Attention decode kernels.
      {"*flash_fwd_mla_combine*", "simt", "attn.dense", "FlashMLA split-KV combine (a reduction)"},
      {"*flash_fwd_splitkv_mla*", "tensor", "", "FlashMLA decode (wgmma / tcgen05)"},
      {"*flashinfer::batchdecodewithpagedkvcache*", "simt", "attn.dense",
       "FlashInfer decode kernel (use_tensor_cores=False): dot products on CUDA cores"},
      {"*flashinfer::singledecodewithkvcache*", "simt", "attn.dense",
       "FlashInfer decode kernel: dot products on CUDA cores"},
      {"*flashinfer::*mergestate*", "simt", "attn.dense",
       "FlashInfer merge of split-KV attention states (a reduction)"},
      {"*flashinfer::mla::*", "tensor", "attn.dense", "FlashInfer MLA decode (mma)"},
      {"*flashinfer::batchprefill*", "tensor", "attn.dense",
       "FlashInfer prefill kernel (mma; also decode with use_tensor_cores=True)"},
      {"*paged_attention_ll4mi*mfma*", "tensor", "attn.dense",
       "ROCm paged attention (ll4mi) on MFMA matrix cores"},
      {"*paged_attention*reduce*", "simt", "attn.dense", "paged attention: reduction of the partitions"},
      {"*paged_attention_v1_kernel*", "simt", "attn.dense",
       "vLLM paged attention v1: dot products on CUDA cores"},
      {"*paged_attention_v2_kernel*", "simt", "attn.dense",
       "vLLM paged attention v2: dot products on CUDA cores"},
      {"kernel_unified_attention_*", "tensor", "attn.dense", "vLLM Triton unified attention (tl.dot)"},
      {"reduce_segments*", "simt", "attn.dense", "vLLM unified attention: reduction of the 3D segments"},
      {"*fmhareduction*", "simt", "attn.dense", "TensorRT-LLM FMHA: reduction of the split-KV results"},
      // Triton attention kernels with plain names: ROCm's flash attention (vLLM's ROCm
      // triton_flash_attention and aotriton call it attn_fwd), the Triton tutorial's
      // _attn_fwd, SageAttention's INT8 kernel and its quantiser.
      {"attn_fwd", "tensor", "attn.dense",
       "ROCm Triton flash-attention forward (attn_fwd: tl.dot on the matrix cores)"},
      {"_attn_fwd", "tensor", "attn.dense", "Triton fused-attention forward (_attn_fwd: tl.dot)"},
      {"sage_fwd", "tensor", "attn.dense",
       "SageAttention forward (Triton): INT8 Q.K^T and FP16 P.V with tl.dot"},
      {"sage_quant_kernel", "simt", "attn.dense",
       "SageAttention: quantises Q and K to INT8 per block before sage_fwd (elementwise)"},
      // Kernels of attention that are not attention math, although their names say "flash":
      // the KV-cache writes (the layout is called "flash"), index preparation, FlashAttention's
      // own prologues, combines and conversions.
      {"*reshape_and_cache*", "memory", "attn.dense",
       "vLLM reshape_and_cache(_flash): writes the step's K and V into the paged KV cache "
       "(moves bytes; 'flash' names the cache layout)"},
      {"*concat_and_cache_mla*", "memory", "attn.dense", "vLLM MLA KV-cache write (moves bytes)"},
      {"*store_kvcache*", "memory", "attn.dense", "SGLang store_kvcache: writes K and V into the cache"},
      {"create_flashinfer_kv_indices*", "simt", "attn.dense",
       "SGLang Triton helper: FlashInfer's KV page indices (index arithmetic, not attention)"},
      {"*get_mla_metadata*", "simt", "attn.dense", "FlashMLA scheduler metadata (index arithmetic)"},
      {"*prepare_varlen_num_blocks*", "simt", "attn.dense",
       "FlashAttention 3 scheduler prologue: blocks per sequence (index arithmetic)"},
      {"*flashattnbwdpreprocess*", "simt", "attn.dense",
       "FlashAttention 3 backward preprocess: rowsum(dO * O), elementwise"},
      {"*flashattnbwdpostprocess*", "simt", "attn.dense",
       "FlashAttention 3 backward postprocess: converts the FP32 dQ accumulator"},
      {"*flashattnfwdcombine*", "simt", "attn.dense", "FlashAttention 3 split-KV combine (a reduction)"},
      {"*flash_fwd_splitkv_combine*", "simt", "attn.dense", "FlashAttention 2 split-KV combine (a reduction)"},
      {"*flash_bwd_dot_do_o*", "simt", "attn.dense", "FlashAttention 2 backward: rowsum(dO * O)"},
      {"*flash_bwd_convert_d*", "simt", "attn.dense", "FlashAttention 2 backward: converts dQ/dK/dV"},
      {"*flash_bwd_clear_dkvaccum*", "memory", "attn.dense", "FlashAttention 2 backward: zeroes an accumulator"},
      // AMD (ROCm) libraries: MFMA matrix-core kernels. hipBLASLt/Tensile names carry the
      // MatrixInstruction as _MI<M>x<N>x<B>_; composable_kernel's XDL kernels are MFMA;
      // aiter's assembly kernels (fmoe, mla, pa) are hand-written MFMA.
      {"cijk_*_mi?x*", "tensor", "gemm.dense", "hipBLASLt/Tensile GEMM with an MFMA MatrixInstruction (MI)"},
      {"cijk_*_mi??x*", "tensor", "gemm.dense", "hipBLASLt/Tensile GEMM with an MFMA MatrixInstruction (MI)"},
      {"cijk_*", "", "gemm.dense", "hipBLASLt/Tensile GEMM (no MatrixInstruction in the name)"},
      {"*aiter*fmoe*", "tensor", "moe.experts", "aiter assembly fused MoE (MFMA)"},
      {"*aiter*mla*", "tensor", "attn.dense", "aiter MLA decode (MFMA)"},
      {"*aiter*pa_*", "tensor", "attn.dense", "aiter assembly paged attention (MFMA)"},
      {"*ck_tile::*fmha*", "tensor", "attn.dense", "composable_kernel ck_tile FMHA (MFMA)"},
      {"*ck_tile::*gemm*", "tensor", "gemm.dense", "composable_kernel ck_tile GEMM (MFMA)"},
      {"*ck_tile::*flatmm*", "tensor", "gemm.dense", "composable_kernel ck_tile flat GEMM (MFMA)"},
      {"*gemm*_xdl*", "tensor", "gemm.dense", "composable_kernel XDL GEMM (MFMA)"},
      {"*_xdl_*", "tensor", "", "composable_kernel XDL kernel (MFMA)"},
      {"ck::tensor_operation::*xdl*", "tensor", "gemm.dense",
       "composable_kernel device op on XDL (MFMA): GEMM or implicit-GEMM convolution"},
      {"ck::tensor_operation::*wmma*", "tensor", "gemm.dense",
       "composable_kernel device op on WMMA matrix cores: GEMM or convolution"},
      // MIOpen (PyTorch's convolutions, norms and tensor ops on ROCm). Its implicit-GEMM
      // convolutions are named igemm_<fwd|bwd|wrw>_gtc<x>_<layout>_<type>_...: gtcx is the
      // XDLOPS (MFMA) generation; bwd is the data gradient, wrw the weight gradient.
      {"igemm_???_gtcx*", "tensor", "gemm.dense",
       "MIOpen implicit-GEMM convolution on XDLOPS (MFMA): forward, backward data (bwd) or "
       "backward weights (wrw)"},
      {"igemm_???_gtc_*", "", "gemm.dense",
       "MIOpen implicit-GEMM convolution without XDLOPS (the pipe is not told by the name)"},
      {"batched_transpose_*", "memory", "memory",
       "MIOpen batched transpose (NCHW <-> NHWC around its convolutions): moves bytes"},
      {"transpose_nchw2cnhw*", "memory", "memory", "MIOpen layout transpose: moves bytes"},
      {"transpose_cnhw2nchw*", "memory", "memory", "MIOpen layout transpose: moves bytes"},
      {"im2d2col*", "memory", "memory",
       "MIOpen im2col: unfolds the input for a GEMM convolution (moves bytes)"},
      {"im3d2col*", "memory", "memory",
       "MIOpen im2col: unfolds the input for a GEMM convolution (moves bytes)"},
      {"subtensorop*", "simt", "elementwise",
       "MIOpen tensor op (SubTensorOpWithScalar1d, SubTensorOpWithCastTensor1d, ...): sets, "
       "scales or casts a sub-tensor elementwise; not a tensor-core kernel"},
      {"op?dtensor*", "simt", "elementwise", "MIOpen tensor op (Op1dTensorGeneric, Op2dTensorLite, ...): elementwise"},
      {"optensor*", "simt", "elementwise", "MIOpen tensor op (OpTensorFwdBias, ...): elementwise"},
      {"miopenbatchnorm*", "simt", "norm",
       "MIOpen batch normalisation (MIOpenBatchNormFwdTrainSpatial*, MIOpenBatchNormBwdSpatial)"},
      {"rocprim::*", "simt", "other", "rocPRIM device algorithm (scan, sort, reduce, partition)"},
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
      // Rotary position embedding is arithmetic on Q and K, not a lookup: before *embedding*.
      {"*rotary*", "simt", "elementwise", "rotary position embedding (elementwise on Q and K)"},
      {"*embedding*", "", "embedding", "embedding lookup"},
      {"*index_select*", "", "embedding", "index select (gather)"},
      {"*indexselect*", "", "embedding", "index select (gather)"},
      // Up- and down-sampling of images and features is no token sampling.
      {"*upsampl*", "", "elementwise", "upsampling (image or feature resize)"},
      {"*downsampl*", "", "elementwise", "downsampling (image or feature resize)"},
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
      {"rccl*", "comm", "comm", "RCCL collective kernel"},
      // Collectives of other libraries (custom all-reduce of TensorRT-LLM, FlashInfer, torch
      // symmetric memory) name a kernel after the collective: the collective's word followed
      // by the kernel's ("oneShotAllReduceKernel", "two_shot_all_reduce_kernel"). A word
      // alone is an op name (a Triton kernel fused from an all-reduce mask is elementwise).
      {"*all_reduce*kernel*", "comm", "comm", "all-reduce kernel"},
      {"*allreduce*kernel*", "comm", "comm", "all-reduce kernel"},
      {"*all_gather*kernel*", "comm", "comm", "all-gather kernel"},
      {"*allgather*kernel*", "comm", "comm", "all-gather kernel"},
      {"*reduce_scatter*kernel*", "comm", "comm", "reduce-scatter kernel"},
      {"*reducescatter*kernel*", "comm", "comm", "reduce-scatter kernel"},
      {"*all_to_all*kernel*", "comm", "comm", "all-to-all kernel"},
      {"*alltoall*kernel*", "comm", "comm", "all-to-all kernel"},
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
      // FBGEMM and TorchRec sparse-feature kernels: "fbgemm" and "pooled" are not a GEMM and
      // a pooling layer.
      {"*permute_pooled_embs*", "memory", "embedding",
       "FBGEMM permute of pooled embeddings (moves rows)"},
      {"fbgemm_gpu::*permute*", "memory", "embedding", "FBGEMM sparse-feature permute (moves rows)"},
      {"fbgemm_gpu::*", "simt", "embedding", "FBGEMM sparse-feature / embedding helper"},
      {"bounds_check_indices_kernel*", "simt", "embedding", "FBGEMM table-batched embedding: index bounds check"},
      {"linearize_index_kernel*", "simt", "embedding", "FBGEMM table-batched embedding: linearised indices"},
      {"recat_copy_async_kernel*", "memory", "embedding", "TorchRec: re-concatenates embedding outputs (moves bytes)"},
      // Helpers of cuBLAS and cuDNN that are not the GEMM or convolution itself.
      {"dot_kernel<*cublas*", "simt", "gemm.dense", "cuBLAS dot-product helper (CUDA cores)"},
      {"reduce_1block_kernel<*cublas*", "simt", "gemm.dense", "cuBLAS reduction helper (CUDA cores)"},
      {"cask_cudnn*::computeoffsetskernel*", "simt", "gemm.dense",
       "cuDNN convolution prologue: input offsets of the implicit GEMM"},
      {"cudnn::cnn::*", "simt", "gemm.dense", "cuDNN convolution helper (weight-gradient reduction)"},
      {"*epilogue::impl::globalkernel*", "simt", "gemm.dense",
       "cuBLASLt epilogue kernel (bias, GELU or bias gradient of a GEMM that did not fuse it)"},
      // ---- 4. tensor-core families ---------------------------------------------------
      {"nvjet*", "tensor", "gemm.dense", "cuBLAS nvjet tensor-core GEMM"},
      {"sm*_xmma_*", "tensor", "gemm.dense", "cuBLAS/cuDNN xmma tensor-core kernel"},
      {"*xmma*", "tensor", "gemm.dense", "xmma tensor-core kernel"},
      // CUTLASS spells its tensor-core kernels cutlass_<arch>_tensorop_... (and cuDNN's copies
      // cutlass_tensorop_...): MIOpen's elementwise SubTensorOp* is no such kernel.
      {"*cutlass*tensorop*", "tensor", "gemm.dense", "CUTLASS tensorop kernel"},
      {"*opclasstensorop*", "tensor", "gemm.dense", "CUTLASS OpClassTensorOp"},
      {"*16816gemm*", "tensor", "gemm.dense", "m16n8k16 MMA GEMM (s16816/h16816)"},
      {"*1688gemm*", "tensor", "gemm.dense", "m16n8k8 MMA GEMM (s1688/h1688)"},
      {"*16832gemm*", "tensor", "gemm.dense", "m16n8k32 integer MMA GEMM"},
      {"*884gemm*", "tensor", "gemm.dense", "Volta m8n8k4 HMMA GEMM"},
      {"*marlin*", "tensor", "gemm.dense", "Marlin W4A16 (mma.sync BF16/FP16)"},
      // FlashAttention's math kernels by their own names (the traps above hold the kernels
      // of attention that only say "flash").
      {"*flash_fwd*", "tensor", "attn.dense", "FlashAttention forward (flash_fwd_kernel, splitkv: mma)"},
      {"*flash_bwd*", "tensor", "attn.dense", "FlashAttention backward (mma)"},
      {"*flash::flashattn*", "tensor", "attn.dense",
       "FlashAttention 3 (flash::FlashAttnFwdSm90, FlashAttnBwdSm90, ...: wgmma)"},
      {"*flash::compute_attn*", "tensor", "attn.dense",
       "FlashAttention 3 forward, early spelling (flash::compute_attn_ws: wgmma)"},
      {"*flash_mla*", "tensor", "", "FlashMLA decode kernel (wgmma / tcgen05)"},
      {"*fmha*", "tensor", "attn.dense", "fused MHA (mma)"},
      {"*mainloopsm*", "tensor", "", "CUTLASS 3 SM90/SM100 mainloop (wgmma / tcgen05)"},
      {"matmul_kernel_persistent*", "tensor", "gemm.dense", "Triton persistent matmul (tl.dot)"},
      {"*wgmma*", "tensor", "", "Hopper warpgroup MMA"},
      {"*tcgen05*", "tensor", "", "Blackwell tcgen05 MMA"},
      // ---- 5. SIMT families ----------------------------------------------------------
      {"gemv2t_kernel*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"gemv2n_kernel*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"gemvnsp*", "simt", "gemm.dense", "cuBLAS GEMV (CUDA cores)"},
      {"*splitkreduce*", "simt", "gemm.dense", "cuBLAS split-K reduction"},
      // PyTorch's own kernels by functor, before the generic elementwise row: a gather by
      // index moves rows; batch and group norm have their kernels of their own.
      {"at::native::index_elementwise_kernel*", "memory", "", "PyTorch indexing (gathers rows by index)"},
      {"at::native::*gather_kernel*", "memory", "", "PyTorch gather (moves rows)"},
      {"at::native::*indexfunc*", "memory", "", "PyTorch index_add / index_copy (moves rows)"},
      {"at::native::*upsample*", "memory", "elementwise", "PyTorch upsampling (copies pixels)"},
      {"at::native::batch_norm_*", "simt", "norm",
       "PyTorch batch norm (collect statistics, transform input, backward)"},
      {"at::native::*rowwisemomentscudakernel*", "simt", "norm",
       "PyTorch group norm: mean and variance per group"},
      {"at::native::*computefusedparamscudakernel*", "simt", "norm",
       "PyTorch group norm: per-channel scale and bias"},
      {"at::native::*computebackwardfusedparamscudakernel*", "simt", "norm", "PyTorch group norm backward"},
      {"at::native::*computeinternalgradientscudakernel*", "simt", "norm",
       "PyTorch group norm backward: per-channel gradient sums"},
      {"*elementwise_kernel*", "simt", "elementwise", "PyTorch elementwise kernel"},
      {"*reduce_kernel*", "simt", "elementwise", "PyTorch reduction kernel"},
      {"*softmax*", "simt", "elementwise", "softmax"},
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
      // Norms are reductions and elementwise arithmetic on CUDA cores.
      {"*groupnorm*", "simt", "norm", "GroupNorm"},
      {"*group_norm*", "simt", "norm", "GroupNorm"},
      {"*batchnorm*", "simt", "norm", "BatchNorm"},
      {"*batch_norm*", "simt", "norm", "BatchNorm"},
      {"*instancenorm*", "simt", "norm", "InstanceNorm"},
      {"*instance_norm*", "simt", "norm", "InstanceNorm"},
      // Activations, quantisation of activations and the serving stacks' small helpers.
      {"*act_and_mul_kernel*", "simt", "elementwise",
       "activation times gate (vLLM / SGLang act_and_mul_kernel: SiLU or GELU(x) * y)"},
      {"vllm::*quant*kernel*", "simt", "elementwise",
       "vLLM activation quantisation (scaled FP8 / INT8 per tensor or token): elementwise"},
      {"tensorrt_llm::kernels::quantize_with_block_size*", "simt", "elementwise",
       "TensorRT-LLM activation quantisation to FP4/FP8 with block scales"},
      {"*resolve_future_token_ids*", "simt", "other",
       "SGLang scheduler: resolves the token ids of the overlapped step"},
      {"*clamp_position_kernel*", "simt", "other", "SGLang scheduler: positions of the batch"},
      {"compute_position_kernel*", "simt", "other", "SGLang scheduler: positions of the batch"},
      {"_copy_*", "memory", "memory", "Triton copy helper (_copy_tensor_kernel, _copy_page_indices_kernel)"},
      // BLAS-1 axpy (the nsys MPI sample's saxpy, cuBLAS's axpy kernels): one FMA per element.
      {"saxpy", "simt", "elementwise", "BLAS-1 axpy, y = a*x + y: one FMA per element on CUDA cores"},
      {"*axpy_kernel*", "simt", "elementwise", "BLAS-1 axpy kernel (cuBLAS): one FMA per element"},
      // The fallback for PyTorch's own kernels: elementwise, reduction and index functors
      // run on CUDA cores (copies, fills and gathers matched above as memory).
      {"at::native::*", "simt", "elementwise", "PyTorch ATen native kernel (CUDA cores)"},
      // ---- 6. role-only fallbacks ----------------------------------------------------
      // Inductor kernels whose fused ops named no role above: elementwise, before the
      // generic words below ("_to_copy" is a dtype cast, "addmm" a GEMM's epilogue).
      {"triton_poi_*", "", "elementwise", "Inductor pointwise Triton kernel"},
      {"triton_red_*", "", "elementwise", "Inductor reduction Triton kernel"},
      {"triton_per_*", "", "elementwise", "Inductor persistent-reduction Triton kernel"},
      {"*gemm*", "", "gemm.dense", "GEMM (pipe not told by the name)"},
      {"*gemv*", "", "gemm.dense", "GEMV (pipe not told by the name)"},
      {"*matmul*", "", "gemm.dense", "matmul (pipe not told by the name)"},
      {"*conv*", "", "gemm.dense", "convolution (implicit GEMM)"},
      {"*copy*", "", "memory", "copy"},
      {"*silu*", "", "elementwise", "SiLU"},
      {"*gelu*", "", "elementwise", "GELU"},
      {"*rope_*", "", "elementwise", "rotary embedding"},
      {"*_rope*", "", "elementwise", "rotary embedding"},
  };
  return *rules;
}

const std::vector<FormatRule>& FormatRules() {
  static const auto* rules = new std::vector<FormatRule>{
      // vLLM's paged attention carries its KV-cache type as a template value in every
      // instantiation; 0 (kAuto) means no FP8 at all, so "fp8" in it says nothing.
      {"*(vllm::fp8kvcachedatatype)0*", "unknown"},
      {"*nvfp4*", "nvfp4"},
      {"*e2m1*ue4m3*", "nvfp4"},
      {"*ue4m3*e2m1*", "nvfp4"},
      {"*mxf4nvf4*", "fp4"},  // instruction kind shared by both FP4 formats
      {"*mxfp4*", "mxfp4"},
      {"*mxe2m1*", "mxfp4"},
      // DeepGEMM sm100_fp8_fp4_gemm: FP8 activations, MXFP4 weights (MmaKind::MXFP8FP4).
      {"*fp8_fp4*", "mxfp4"},
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
      // std::bfloat16_t in an Itanium-mangled name the demangler could not read (C++23's
      // DF16b is newer than some libstdc++ demanglers).
      {"_z*df16b*", "bf16"},
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
  // ASCII folding (absl's, inline): std::tolower is a locale-aware call per character, and
  // this loop runs over every frame and kernel name a trace has.
  auto eq = [](char a, char b) { return absl::ascii_tolower(static_cast<unsigned char>(a)) ==
                                        absl::ascii_tolower(static_cast<unsigned char>(b)); };
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

PrefilteredGlob::PrefilteredGlob(std::string_view lower_case_pattern)
    : pattern(lower_case_pattern) {
  size_t start = 0;
  for (size_t i = 0; i <= pattern.size(); ++i) {
    if (i == pattern.size() || pattern[i] == '*' || pattern[i] == '?') {
      if (i - start > literal.size()) {
        literal = std::string(pattern.substr(start, i - start));
        absl::AsciiStrToLower(&literal);  // as GlobMatch folds
      }
      start = i + 1;
    }
  }
}

bool PrefilteredGlob::Match(std::string_view text, std::string_view lowered) const {
  if (!literal.empty() && lowered.find(literal) == std::string_view::npos) return false;
  return GlobMatch(pattern, text);
}

namespace {

// The name and format tables' patterns, prefiltered once.
template <typename Rule>
std::vector<PrefilteredGlob> Prefiltered(const std::vector<Rule>& rules) {
  std::vector<PrefilteredGlob> out;
  out.reserve(rules.size());
  for (const Rule& r : rules) out.emplace_back(r.pattern);
  return out;
}

NameRuleMatch MatchNameRulesUncached(std::string_view name) {
  static const auto* name_globs = new std::vector<PrefilteredGlob>(Prefiltered(NameRules()));
  static const auto* format_globs = new std::vector<PrefilteredGlob>(Prefiltered(FormatRules()));
  std::string lowered(name);
  absl::AsciiStrToLower(&lowered);
  NameRuleMatch m;
  m.format = "unknown";
  const std::vector<NameRule>& rules = NameRules();
  for (size_t i = 0; i < rules.size(); ++i) {
    const NameRule& r = rules[i];
    bool need_class = m.pipe_class.empty() && r.pipe_class[0] != '\0';
    bool need_role = m.role.empty() && r.role[0] != '\0';
    if (!need_class && !need_role) continue;
    if (!(*name_globs)[i].Match(name, lowered)) continue;
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
  const std::vector<FormatRule>& formats = FormatRules();
  for (size_t i = 0; i < formats.size(); ++i) {
    if ((*format_globs)[i].Match(name, lowered)) {
      m.format = formats[i].format;
      break;
    }
  }
  return m;
}

}  // namespace

NameRuleMatch MatchNameRules(std::string_view name) {
  // A kernel's name is matched by the ingest (comm or not), the classifier and the role
  // table; names are long (templated kernels run to kilobytes) and the table has hundreds
  // of rows, so each distinct name is matched once per thread (bounded).
  thread_local absl::flat_hash_map<std::string, NameRuleMatch> memo;
  auto it = memo.find(absl::string_view(name.data(), name.size()));
  if (it != memo.end()) return it->second;
  if (memo.size() >= 65536) memo.clear();
  return memo.emplace(std::string(name), MatchNameRulesUncached(name)).first->second;
}

}  // namespace qprof::classify
