// MoE expert kernels: the slot GEMV (SIMT), the two tensor-core paths (CUDA), the CPU
// grouped kernel that stands in for the tensor-core paths on the host, and the router.
//
// `auto` (kernels/registry/dispatch.h) takes the lowest auto_preference of a format that
// has code for the target GPU. The preferences are the rule of the story this tool was
// built for: MXFP4 checkpoints are served by the SIMT slot GEMV (that is how the
// deployment ran them, and what `qprof run` must reproduce), NVFP4 by native FP4 tensor
// cores where a kernel for them exists, else by the BF16 tensor-core path.
#include <string>
#include <vector>

#include "kernels/registry/entries.h"
#include "kernels/registry/work_models.h"
#include "proto/vocabulary.h"

namespace qprof::kernels {
namespace {

// One MoE path ("moe.<path>.<fmt>").
struct MoePath {
  const char* path;
  std::string_view pipe_class;
  std::string_view compute;
  bool reuse;                  // weights read once per unique expert (grouped) or per slot
  std::vector<std::string> archs;
  int multiple;                // dim and inter (kernels::cuda::CheckMoeCuda)
  int mxfp4_preference, nvfp4_preference;
  const char* description;
  // The CUDA kernels of one call: name suffix and the MoeWork terms it moves.
  std::vector<std::pair<const char*, unsigned>> launches;
};

const std::vector<MoePath>& MoePaths() {
  static const std::vector<MoePath>* const paths = new std::vector<MoePath>{
      {"slot_gemv", pipe::kSimt, compute_pipe::kSimtFp32, /*reuse=*/false, {"sm_80+"}, 32, 0,
       2,
       "one (token, expert) slot per program; FP4 decoded per slot, FP32 FMA, no reuse "
       "across the batch",
       {{"_w13", kMoeIds | kMoeInput | kMoeGateUp},
        {"_w2", kMoeDown | kMoeHiddenRead},
        {"_combine", kMoeOutput}}},
      {"w4a16_mma", pipe::kTensor, compute_pipe::kTensorBf16, /*reuse=*/true, {"sm_80+"}, 256, 1,
       1,
       "slots grouped by expert; FP4 dequantised to BF16 in registers once per tile, mma.sync "
       "m16n8k16 BF16 (Marlin-style); CPU: moe.grouped",
       {{"_align", kMoeIds},
        {"_permute_bf16", kMoeInput},
        {"_w13", kMoeGateUp},
        {"_w2", kMoeDown | kMoeHiddenRead},
        {"_combine", kMoeOutput}}},
      // Block-scaled mma.sync kind::mxf4nvf4 exists on sm_120a only; sm_100a would need a
      // tcgen05 kernel, which qprof does not have, so it is not claimed.
      {"fp4_mma", pipe::kTensor, compute_pipe::kTensorFp4, /*reuse=*/true, {"sm_120a"}, 128, 2,
       0,
       "slots grouped by expert; native block-scaled FP4 MMA (mma.sync kind::mxf4nvf4 "
       "m16n8k64, sm_120a); CPU: moe.grouped",
       {{"_align", kMoeIds},
        {"_quant_act", kMoeInput},
        {"_w13", kMoeGateUp},
        {"_quant_act", kMoeHiddenRead},
        {"_w2", kMoeDown},
        {"_combine", kMoeOutput}}},
  };
  return *paths;
}

KernelInfo MoeVariant(const MoePath& m, const std::string& fmt) {
  KernelInfo k;
  k.id = std::string("moe.") + m.path + "." + fmt;
  k.family = std::string("moe.") + m.path;
  k.role = std::string(role::kMoeExperts);
  k.format = fmt;
  k.gpu_pipe_class = std::string(m.pipe_class);
  k.compute_pipe = std::string(m.compute);
  k.cuda_kernel_name = CudaNameForId(k.id);
  k.cuda_archs = m.archs;
  k.has_cpu = true;
  k.has_cuda = true;
  // The slot path has a CPU kernel of its own; the MMA paths run the grouped one.
  k.cpu_stand_in = m.reuse ? "moe.grouped." + fmt : "";
  k.auto_preference = fmt == "mxfp4" ? m.mxfp4_preference : m.nvfp4_preference;
  k.shape_multiples = {{"dim", m.multiple}, {"inter", m.multiple}};
  k.description = m.description;
  const std::string compute(m.compute);
  k.work = [fmt, reuse = m.reuse, compute](const KernelShape& s) {
    return MoeWork(s, fmt, reuse, compute);
  };
  for (const auto& [suffix, terms] : m.launches) {
    k.cuda_launches.push_back(
        {k.cuda_kernel_name + suffix, false, CudaLaunch::When::kAlways, MoePart(fmt, m.reuse, compute, terms)});
  }
  return k;
}

}  // namespace

void RegisterMoeKernels(KernelRegistry& r) {
  for (const std::string fmt : {"mxfp4", "nvfp4"}) {
    for (const MoePath& m : MoePaths()) r.Register(MoeVariant(m, fmt));
    KernelInfo k;
    k.id = "moe.grouped." + fmt;
    k.family = "moe.grouped";
    k.role = std::string(role::kMoeExperts);
    k.format = fmt;
    k.gpu_pipe_class = std::string(pipe::kTensor);  // what it stands in for on a GPU
    k.compute_pipe = std::string(compute_pipe::kSimtFp32);
    k.has_cpu = true;  // CPU only: no cuda_kernel_name, archs or launches
    k.description = "CPU: slots grouped by expert, each expert tile dequantised once and "
                    "reused for all its tokens (host counterpart of the MMA paths)";
    k.work = [fmt](const KernelShape& s) {
      return MoeWork(s, fmt, /*reuse=*/true, std::string(compute_pipe::kSimtFp32));
    };
    r.Register(std::move(k));
  }
  KernelInfo router;
  router.id = "moe.router";
  router.family = "moe.router";
  router.role = std::string(role::kMoeRouter);
  router.format = "bf16";
  router.gpu_pipe_class = std::string(pipe::kSimt);
  router.compute_pipe = std::string(compute_pipe::kSimtFp32);
  router.cuda_kernel_name = CudaNameForId(router.id);
  router.cuda_archs = {"sm_80+"};
  router.has_cpu = true;
  router.has_cuda = true;
  router.description = "gate projection, sigmoid scores, top-k with renormalisation and "
                       "route scale";
  router.work = RouterWork;
  router.cuda_launches = {{"qprof_moe_router_gemm", false, CudaLaunch::When::kAlways, RouterPart(/*gate=*/true)},
                          {"qprof_moe_router_topk", false, CudaLaunch::When::kAlways, RouterPart(/*gate=*/false)}};
  r.Register(std::move(router));
}

}  // namespace qprof::kernels
