// Dense kernels of the decode step: norms, rope, BF16 projections, embedding, LM head,
// greedy sampling, and the tensor-parallel all-reduce.
#include <string>

#include "kernels/registry/entries.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {
namespace {

// A kernel of the decode step with one CUDA kernel per call, named after its id.
KernelInfo Basic(const char* id, std::string_view role, std::string_view pipe_class,
                 std::string_view compute, const char* description, WorkFn work) {
  KernelInfo k;
  k.id = id;
  k.family = id;
  k.role = std::string(role);
  k.format = "bf16";
  k.gpu_pipe_class = std::string(pipe_class);
  k.compute_pipe = std::string(compute);
  k.cuda_kernel_name = CudaNameForId(k.id);
  k.cuda_archs = {"sm_80+"};
  k.has_cpu = true;
  k.has_cuda = true;
  k.description = description;
  k.work = work;
  k.cuda_launches = {{k.cuda_kernel_name, false, CudaLaunch::When::kAlways, std::move(work)}};
  return k;
}

}  // namespace

void RegisterCommonKernels(KernelRegistry& r) {
  r.Register(Basic("norm.rmsnorm", role::kNorm, pipe::kSimt, compute_pipe::kSimtFp32,
                   "RMSNorm with a BF16 weight", RmsNormWork));
  r.Register(Basic("rope", role::kElementwise, pipe::kSimt, compute_pipe::kSimtFp32,
                   "rotary embedding of the query and key rope parts", RopeWork));
  r.Register(Basic("embedding", role::kEmbedding, pipe::kMemory, compute_pipe::kNone,
                   "token embedding lookup (BF16 table)", EmbeddingWork));
  r.Register(Basic("gemm.dense", role::kGemmDense, pipe::kTensor, compute_pipe::kTensorBf16,
                   "BF16 projection y = W x (q/kv/o low-rank, indexer projections)",
                   DenseGemmWork));
  r.Register(Basic("gemm.lm_head", role::kGemmDense, pipe::kTensor, compute_pipe::kTensorBf16,
                   "LM head projection to the vocabulary (BF16)", DenseGemmWork));
  r.Register(Basic("sampling.argmax", role::kSampling, pipe::kSimt, compute_pipe::kSimtFp32,
                   "greedy sampling: argmax over the vocabulary", ArgmaxWork));
  KernelInfo ar = Basic("comm.allreduce", role::kComm, pipe::kComm, compute_pipe::kNone,
                        "tensor-parallel all-reduce of the hidden state (NCCL)",
                        AllReduceWork);
  ar.has_cpu = false;
  ar.cuda_kernel_name = "ncclDevKernel_AllReduce";  // NCCL's kernel, not ours
  // NCCL names the kernel after the algorithm it picks (..._Sum_f32_RING_LL, ...).
  ar.cuda_launches = {{ar.cuda_kernel_name, /*name_is_prefix=*/true,
                       CudaLaunch::When::kDeviceCollective, AllReduceWork}};
  r.Register(std::move(ar));
  // Tensor parallel: the router's expert ids made local to a rank (runtime/cuda/tp_ops.cu).
  // Reads and writes one int32 per (token, slot): shape {"ids": tokens * topk}.
  KernelInfo remap = Basic("tp.local_expert_ids", role::kMoeRouter, pipe::kSimt,
                           compute_pipe::kNone,
                           "tensor parallel: routed expert ids made local to the rank (-1 = "
                           "another rank's expert)",
                           [](const KernelShape& s) {
                             proto::WorkModel w;
                             auto it = s.find("ids");
                             const double ids = it == s.end() ? 0.0 : static_cast<double>(it->second);
                             w.set_activation_bytes(8.0 * ids);
                             w.set_bytes(8.0 * ids);
                             w.set_compute_pipe(std::string(compute_pipe::kNone));
                             return w;
                           });
  remap.format = "int32";
  r.Register(std::move(remap));
}

}  // namespace qprof::kernels
