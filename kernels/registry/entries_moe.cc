// MoE expert kernels: the slot GEMV (SIMT), the two tensor-core paths (CUDA) and the CPU
// grouped kernel that stands in for the tensor-core paths on the host.
#include <string>

#include "kernels/registry/entries.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {

void RegisterMoeKernels(KernelRegistry& r) {
  for (std::string fmt : {"mxfp4", "nvfp4"}) {
    {
      KernelInfo k;
      k.id = "moe.slot_gemv." + fmt;
      k.family = "moe.slot_gemv";
      k.role = std::string(role::kMoeExperts);
      k.format = fmt;
      k.gpu_pipe_class = std::string(pipe::kSimt);
      k.compute_pipe = std::string(compute_pipe::kSimtFp32);
      k.cuda_kernel_name = CudaNameForId(k.id);
      k.min_arch = "sm_80";
      k.has_cpu = true;
      k.has_cuda = true;
      k.description = "one (token, expert) slot per program; FP4 decoded per slot, FP32 FMA, "
                      "no reuse across the batch";
      k.work = [fmt](const KernelShape& s) {
        return MoeWork(s, fmt, /*reuse=*/false, std::string(compute_pipe::kSimtFp32));
      };
      r.Register(std::move(k));
    }
    {
      KernelInfo k;
      k.id = "moe.w4a16_mma." + fmt;
      k.family = "moe.w4a16_mma";
      k.role = std::string(role::kMoeExperts);
      k.format = fmt;
      k.gpu_pipe_class = std::string(pipe::kTensor);
      k.compute_pipe = std::string(compute_pipe::kTensorBf16);
      k.cuda_kernel_name = CudaNameForId(k.id);
      k.min_arch = "sm_80";
      k.has_cpu = true;  // runs moe.grouped on the host
      k.has_cuda = true;
      k.description = "slots grouped by expert; FP4 dequantised to BF16 in registers once per "
                      "tile, mma.sync m16n8k16 BF16 (Marlin-style); CPU: moe.grouped";
      k.work = [fmt](const KernelShape& s) {
        return MoeWork(s, fmt, /*reuse=*/true, std::string(compute_pipe::kTensorBf16));
      };
      r.Register(std::move(k));
    }
    {
      KernelInfo k;
      k.id = "moe.fp4_mma." + fmt;
      k.family = "moe.fp4_mma";
      k.role = std::string(role::kMoeExperts);
      k.format = fmt;
      k.gpu_pipe_class = std::string(pipe::kTensor);
      k.compute_pipe = std::string(compute_pipe::kTensorFp4);
      k.cuda_kernel_name = CudaNameForId(k.id);
      k.min_arch = "sm_120a";  // block-scaled mma.sync; tcgen05 on sm_100a
      k.has_cpu = true;  // runs moe.grouped on the host
      k.has_cuda = true;
      k.description = "slots grouped by expert; native block-scaled FP4 MMA "
                      "(kind::mxf4nvf4 on sm_120a, tcgen05 on sm_100a); CPU: moe.grouped";
      k.work = [fmt](const KernelShape& s) {
        return MoeWork(s, fmt, /*reuse=*/true, std::string(compute_pipe::kTensorFp4));
      };
      r.Register(std::move(k));
    }
    {
      KernelInfo k;
      k.id = "moe.grouped." + fmt;
      k.family = "moe.grouped";
      k.role = std::string(role::kMoeExperts);
      k.format = fmt;
      k.gpu_pipe_class = std::string(pipe::kTensor);  // what it stands in for on a GPU
      k.compute_pipe = std::string(compute_pipe::kSimtFp32);
      k.cuda_kernel_name = "";  // CPU only
      k.has_cpu = true;
      k.has_cuda = false;
      k.description = "CPU: slots grouped by expert, each expert tile dequantised once and "
                      "reused for all its tokens (host counterpart of the MMA paths)";
      k.work = [fmt](const KernelShape& s) {
        return MoeWork(s, fmt, /*reuse=*/true, std::string(compute_pipe::kSimtFp32));
      };
      r.Register(std::move(k));
    }
  }
  KernelInfo router;
  router.id = "moe.router";
  router.family = "moe.router";
  router.role = std::string(role::kMoeRouter);
  router.format = "bf16";
  router.gpu_pipe_class = std::string(pipe::kSimt);
  router.compute_pipe = std::string(compute_pipe::kSimtFp32);
  router.cuda_kernel_name = CudaNameForId(router.id);
  router.has_cpu = true;
  router.has_cuda = true;
  router.description = "gate projection, sigmoid scores, top-k with renormalisation and "
                       "route scale";
  router.work = RouterWork;
  r.Register(std::move(router));
}

}  // namespace qprof::kernels
