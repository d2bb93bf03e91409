// Sparse MLA decode (SIMT and tensor-core variants), the indexer and the KV append.
#include <string>

#include "kernels/registry/entries.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {

void RegisterMlaKernels(KernelRegistry& r) {
  struct Variant {
    const char* id;
    std::string_view pipe_class;
    std::string_view compute;
    const char* description;
    bool split_k;  // small batches: token tiles split over blocks, merged by a combine kernel
  };
  for (const Variant& v :
       {Variant{"attn.sparse_mla.simt", pipe::kSimt, compute_pipe::kSimtFp32,
                "sparse MLA decode over selected tokens in latent space, FP32 FMA tiles", false},
        Variant{"attn.sparse_mla.mma", pipe::kTensor, compute_pipe::kTensorBf16,
                "sparse MLA decode over selected tokens in latent space, mma.sync BF16", true}}) {
    KernelInfo k;
    k.id = v.id;
    k.family = "attn.sparse_mla";
    k.role = std::string(role::kAttnSparseMla);
    k.format = "bf16";
    k.gpu_pipe_class = std::string(v.pipe_class);
    k.compute_pipe = std::string(v.compute);
    k.cuda_kernel_name = CudaNameForId(k.id);
    k.cuda_archs = {"sm_80+"};
    k.has_cpu = true;
    k.has_cuda = true;
    k.cpu_stand_in = "sparse_mla_decode_cpu";  // one CPU kernel for both variants
    k.description = v.description;
    std::string compute(v.compute);
    k.work = [compute](const KernelShape& s) { return SparseMlaWork(s, compute); };
    if (v.split_k) {
      k.cuda_launches = {
          {k.cuda_kernel_name, false, CudaLaunch::When::kAlways, SparseMlaPart(compute, /*output_only=*/false)},
          {k.cuda_kernel_name + "_combine", false, CudaLaunch::When::kSplitK,
           SparseMlaPart(compute, /*output_only=*/true)}};
    } else {
      k.cuda_launches = {{k.cuda_kernel_name, false, CudaLaunch::When::kAlways, k.work}};
    }
    r.Register(std::move(k));
  }
  KernelInfo idx;
  idx.id = "attn.indexer";
  idx.family = "attn.indexer";
  idx.role = std::string(role::kAttnIndexer);
  idx.format = "bf16";
  idx.gpu_pipe_class = std::string(pipe::kSimt);
  idx.compute_pipe = std::string(compute_pipe::kSimtFp32);
  idx.cuda_kernel_name = CudaNameForId(idx.id);
  idx.cuda_archs = {"sm_80+"};
  idx.has_cpu = true;
  idx.has_cuda = true;
  idx.cuda_launches = {{"qprof_attn_indexer_score", false, CudaLaunch::When::kAlways, IndexerPart(/*score=*/true)},
                       {"qprof_attn_indexer_topk", false, CudaLaunch::When::kAlways, IndexerPart(/*score=*/false)}};
  idx.description = "index heads score every cached token (sum_h w_h relu(q_h . k_t)); "
                    "top index_topk kept plus the recent window";
  idx.work = IndexerWork;
  r.Register(std::move(idx));

  KernelInfo app;
  app.id = "attn.kv_append";
  app.family = "attn.kv_append";
  app.role = std::string(role::kMemory);
  app.format = "bf16";
  app.gpu_pipe_class = std::string(pipe::kMemory);
  app.compute_pipe = std::string(compute_pipe::kNone);
  app.cuda_kernel_name = CudaNameForId(app.id);
  app.cuda_archs = {"sm_80+"};
  app.has_cpu = true;
  app.has_cuda = true;
  app.description = "writes the step's latent KV row and index key into the caches (BF16)";
  app.work = KvAppendWork;
  app.cuda_launches = {{app.cuda_kernel_name, false, CudaLaunch::When::kAlways, KvAppendWork}};
  r.Register(std::move(app));
}

}  // namespace qprof::kernels
