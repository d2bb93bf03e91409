#include "kernels/moe/cuda/moe_cuda.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/cuda/cuda_status.h"
#include "kernels/moe/cuda/moe_cuda_internal.h"

namespace qprof::kernels::cuda {
namespace {

constexpr size_t kAlign = 256;
size_t Round(size_t b) { return (b + kAlign - 1) / kAlign * kAlign; }

// Carves the workspace into the pieces a path needs, in a fixed order.
struct Carve {
  char* base;
  size_t used = 0;
  template <typename T>
  T* Take(size_t count) {
    T* p = reinterpret_cast<T*>(base ? base + used : nullptr);
    used += Round(count * sizeof(T));
    return p;
  }
};

struct Pieces {
  MoeGrouping g{};
  float* hidden = nullptr;        // slot_gemv: [slots, inter] fp32
  float* slot_out = nullptr;      // [slots, dim]
  uint16_t* act = nullptr;        // w4a16: [slots, dim] bf16
  uint16_t* hidden_bf16 = nullptr;  // w4a16: [slots, inter]
  Fp4ActBuffers fp4{};
  size_t bytes = 0;
};

Pieces Layout(const MoeParams& p, MoeCudaPath path, void* ws) {
  Carve c{static_cast<char*>(ws)};
  Pieces r;
  const size_t slots = static_cast<size_t>(p.tokens) * p.topk;
  r.slot_out = c.Take<float>(slots * p.dim);
  if (path == MoeCudaPath::kSlotGemv) {
    r.hidden = c.Take<float>(slots * p.inter);
  } else {
    r.g.sorted_slots = c.Take<int32_t>(slots);
    r.g.expert_offsets = c.Take<int32_t>(p.experts + 1);
    r.g.active_experts = c.Take<int32_t>(p.experts);
    r.g.num_active = c.Take<int32_t>(1);
    if (path == MoeCudaPath::kW4a16Mma) {
      r.act = c.Take<uint16_t>(slots * p.dim);
      r.hidden_bf16 = c.Take<uint16_t>(slots * p.inter);
    } else {
      const size_t kmax = p.dim > p.inter ? p.dim : p.inter;
      r.fp4.packed = c.Take<uint8_t>(slots * kmax / 2);
      r.fp4.scales = c.Take<uint8_t>(slots * kmax / 16);
      r.fp4.scale2 = c.Take<float>(slots);
      r.fp4.hidden = c.Take<float>(slots * p.inter);
    }
  }
  r.bytes = c.used;
  return r;
}

absl::Status Need(bool ok, const char* what) {
  return ok ? absl::OkStatus()
            : absl::InvalidArgumentError(absl::StrCat("MoE CUDA launch: ", what));
}

}  // namespace

const char* MoeCudaPathName(MoeCudaPath path) {
  switch (path) {
    case MoeCudaPath::kSlotGemv: return "slot_gemv";
    case MoeCudaPath::kW4a16Mma: return "w4a16_mma";
    case MoeCudaPath::kFp4Mma: return "fp4_mma";
  }
  return "?";
}

absl::Status CheckMoeCuda(const MoeParams& p, MoeCudaPath path) {
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
  switch (path) {
    case MoeCudaPath::kSlotGemv:
      RETURN_IF_ERROR(Need(p.dim % 32 == 0 && p.inter % 32 == 0,
                           "slot_gemv needs dim and inter multiples of 32"));
      RETURN_IF_ERROR(Need(p.dim <= 10240 && p.inter <= 10240,
                           "slot_gemv stages x in 48 KB of shared memory: dim, inter <= 10240"));
      break;
    case MoeCudaPath::kW4a16Mma:
    case MoeCudaPath::kFp4Mma: {
      const int mult = path == MoeCudaPath::kW4a16Mma ? 256 : 128;
      RETURN_IF_ERROR(Need(p.dim % mult == 0 && p.inter % mult == 0,
                           path == MoeCudaPath::kW4a16Mma
                               ? "w4a16_mma needs dim and inter multiples of 256"
                               : "fp4_mma needs dim and inter multiples of 128"));
      RETURN_IF_ERROR(Need(p.tokens * p.topk <= 8192 && p.experts <= 1024,
                           "grouped MoE paths need tokens*topk <= 8192 and experts <= 1024"));
      break;
    }
  }
  return absl::OkStatus();
}

size_t MoeCudaWorkspaceBytes(const MoeParams& p, MoeCudaPath path) {
  return Layout(p, path, nullptr).bytes;
}

absl::Status LaunchMoeCuda(const MoeParams& p, MoeCudaPath path, void* workspace,
                           size_t workspace_bytes, cudaStream_t stream) {
  RETURN_IF_ERROR(CheckMoeCuda(p, path));
  const Pieces w = Layout(p, path, workspace);
  if (workspace == nullptr || workspace_bytes < w.bytes) {
    return absl::InvalidArgumentError(absl::StrCat("MoE CUDA launch: workspace of ",
                                                   workspace_bytes, " bytes, need ", w.bytes));
  }
  const bool nv = p.format == Fp4Format::kNvfp4;
  switch (path) {
    case MoeCudaPath::kSlotGemv:
      RETURN_IF_ERROR(nv ? LaunchSlotGemvNvfp4(p, w.hidden, w.slot_out, stream)
                         : LaunchSlotGemvMxfp4(p, w.hidden, w.slot_out, stream));
      break;
    case MoeCudaPath::kW4a16Mma:
      RETURN_IF_ERROR(LaunchMoeAlign(p, 1, w.g, stream));
      RETURN_IF_ERROR(LaunchMoePermuteBf16(p, 1, w.g, w.act, stream));
      RETURN_IF_ERROR(nv ? LaunchW4a16Nvfp4(p, w.g, w.act, w.hidden_bf16, w.slot_out, stream)
                         : LaunchW4a16Mxfp4(p, w.g, w.act, w.hidden_bf16, w.slot_out, stream));
      break;
    case MoeCudaPath::kFp4Mma: {
      int arch = 0;
      RETURN_IF_ERROR(CurrentDeviceArch(&arch));
      if (arch != 120) {
        return absl::FailedPreconditionError(absl::StrCat(
            "fp4_mma needs an sm_120 GPU (block-scaled mma.sync, built for sm_120a); this "
            "device is sm_", arch));
      }
      RETURN_IF_ERROR(LaunchMoeAlign(p, 2, w.g, stream));
      RETURN_IF_ERROR(nv ? LaunchFp4MmaNvfp4(p, w.g, w.fp4, w.slot_out, stream)
                         : LaunchFp4MmaMxfp4(p, w.g, w.fp4, w.slot_out, stream));
      break;
    }
  }
  return LaunchMoeCombine(p, static_cast<int>(path), w.slot_out, stream);
}

}  // namespace qprof::kernels::cuda
