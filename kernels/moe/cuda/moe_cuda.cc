#include "kernels/moe/cuda/moe_cuda.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"

namespace qprof::kernels::cuda {
namespace {

// The common pieces, then the path's own (MoeCudaPath::layout).
MoeWorkspace Layout(const MoeParams& p, const MoeCudaPath& path, void* base) {
  MoeWorkspaceCarver c(base);
  MoeWorkspace w;
  w.slot_out = c.Take<float>(static_cast<size_t>(p.tokens) * p.topk * p.dim);
  path.layout(p, &c, &w);
  w.bytes = c.used();
  return w;
}

absl::Status Need(bool ok, const std::string& what) {
  return ok ? absl::OkStatus()
            : absl::InvalidArgumentError(absl::StrCat("MoE CUDA launch: ", what));
}

}  // namespace

const std::vector<const MoeCudaPath*>& MoeCudaPaths() {
  static const std::vector<const MoeCudaPath*>* const paths =
      new std::vector<const MoeCudaPath*>{&SlotGemvPath(), &W4a16MmaPath(), &Fp4MmaPath()};
  return *paths;
}

absl::StatusOr<const MoeCudaPath*> FindMoeCudaPath(const std::string& name) {
  std::string names;
  for (const MoeCudaPath* path : MoeCudaPaths()) {
    if (name == path->name) return path;
    absl::StrAppend(&names, names.empty() ? "" : ", ", path->name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown MoE CUDA path '", name, "' (paths: ", names, ")"));
}

absl::Status CheckMoeCuda(const MoeParams& p, const MoeCudaPath& path) {
  RETURN_IF_ERROR(Need(p.tokens > 0 && p.topk > 0 && p.experts > 0 && p.dim > 0 && p.inter > 0,
                       "tokens, topk, experts, dim, inter must be positive"));
  RETURN_IF_ERROR(Need(p.x && p.topk_ids && p.topk_weights && p.out, "x, topk_ids, topk_weights "
                       "and out must be set"));
  RETURN_IF_ERROR(Need(p.w13.packed && p.w13.scales && p.w2.packed && p.w2.scales,
                       "w13/w2 packed and scales must be set"));
  if (p.format == Fp4Format::kNvfp4)
    RETURN_IF_ERROR(Need(p.w13.scale2 && p.w2.scale2, "NVFP4 needs w13.scale2 and w2.scale2"));
  RETURN_IF_ERROR(Need(p.tokens <= 65535 && static_cast<int64_t>(p.tokens) * p.topk <= 65535,
                       "tokens * topk must be <= 65535"));
  RETURN_IF_ERROR(Need(p.dim % path.multiple == 0 && p.inter % path.multiple == 0,
                       absl::StrCat(path.name, " needs dim and inter multiples of ",
                                    path.multiple)));
  if (!path.grouped) {
    // The slot path stages x in 48 KB of shared memory.
    return Need(p.dim <= 10240 && p.inter <= 10240,
                absl::StrCat(path.name, " stages x in 48 KB of shared memory: dim, inter <= 10240"));
  }
  return Need(p.tokens * p.topk <= 8192 && p.experts <= 1024,
              "grouped MoE paths need tokens*topk <= 8192 and experts <= 1024");
}

size_t MoeCudaWorkspaceBytes(const MoeParams& p, const MoeCudaPath& path) {
  return Layout(p, path, nullptr).bytes;
}

absl::Status LaunchMoeCuda(const MoeParams& p, const MoeCudaPath& path, void* workspace,
                           size_t workspace_bytes, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckMoeCuda(p, path));
  const MoeWorkspace w = Layout(p, path, workspace);
  if (workspace == nullptr || workspace_bytes < w.bytes) {
    return absl::InvalidArgumentError(absl::StrCat("MoE CUDA launch: workspace of ",
                                                   workspace_bytes, " bytes, need ", w.bytes));
  }
  if (path.only_sm != 0) {
    int arch = 0;
    RETURN_IF_ERROR(CurrentDeviceArch(&arch));
    if (arch != path.only_sm) {
      return absl::FailedPreconditionError(absl::StrCat(
          path.name, " needs an sm_", path.only_sm, " GPU (built for sm_", path.only_sm,
          "a only); this device is sm_", arch));
    }
  }
  const MoeGroupKernels* group = FindMoeGroupKernels(path.name, p.format);
  if (group == nullptr) {
    return absl::InternalError(absl::StrCat("no combine kernel for MoE path ", path.name));
  }
  RETURN_IF_ERROR(path.launch(p, w, stream));
  return LaunchMoeCombine(p, *group, w.slot_out, stream);
}

}  // namespace qprof::kernels::cuda
