// The kernel registry: every kernel variant qprof ships, registered once with its
// metadata. Dispatch (kernels/registry/dispatch.h: validation, `auto`, the CLI's choices),
// the decode plan (runtime/plan), the CUDA decoder's launch list, the classification of our
// own kernels (cli hands the registry to analysis as known kernels) and work models for
// achieved bandwidth and ceilings all read it; nothing else hard-codes these facts.
//
// A variant is one algorithm for one format (e.g. "moe.slot_gemv.mxfp4"); it may have a
// CPU implementation, a CUDA implementation, or both. The pipe class is the one the
// CUDA implementation uses on a GPU (the CPU implementation always runs on the host).
// A call of a variant (one launch of the decode step) may launch several CUDA kernels
// (cuda_launches); each states its part of the call's work, so a measured GPU trace gets
// achieved bandwidth per kernel (runtime/work_join.h).
//
// Registration is explicit (no static initialisers): registry.cc calls one Register
// function per kernel family (kernels/moe, kernels/mla, kernels/common).
#ifndef QPROF_KERNELS_REGISTRY_REGISTRY_H_
#define QPROF_KERNELS_REGISTRY_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "proto/trace.pb.h"

namespace qprof::kernels {

// Named dimensions of one launch, e.g. {"tokens": 16, "n": 2048, "k": 4096, "experts": 256}.
using KernelShape = std::map<std::string, int64_t>;

using WorkFn = std::function<proto::WorkModel(const KernelShape&)>;

// One CUDA kernel that a call of a variant launches, in launch order.
struct CudaLaunch {
  // When the kernel runs; when it does not, its part of the work belongs to the call's
  // first kernel (which then does that part itself).
  enum class When {
    kAlways,
    kSplitK,            // the launcher split the work over blocks (small batches): a
                        // combine kernel merges the partial results
    kDeviceCollective,  // the collective runs on the GPU (NCCL); a host all-reduce
                        // launches no kernel
  };
  std::string name;             // the kernel's name: exact for our extern "C" kernels
  bool name_is_prefix = false;  // a library kernel whose name varies (NCCL's algorithm)
  When when = When::kAlways;
  WorkFn work;                  // this kernel's part of the call's work (the parts sum to it)
};

struct KernelInfo {
  std::string id;                // "moe.slot_gemv.mxfp4"
  std::string family;            // "moe.slot_gemv"
  std::string role;              // proto/vocabulary.h role::
  std::string format;            // "mxfp4", "nvfp4", "bf16", "fp32"
  std::string gpu_pipe_class;    // "simt" or "tensor" (or "memory", "comm")
  std::string compute_pipe;      // "simt_fp32", "tensor_bf16", "tensor_fp4", "none"
  std::string cuda_kernel_name;  // demangled-name prefix of the CUDA kernels; "" if none
  // The GPU architectures the CUDA implementation has real code for: "sm_80+" (that
  // compute capability and later, within the build's targets) or an exact family-specific
  // target ("sm_120a": that compute capability only). Empty without a CUDA implementation.
  std::vector<std::string> cuda_archs;
  // The kernel that runs this variant on the host CPU (a CPU trace's args.cpu_kernel):
  // the variant itself ("" when it has a CPU kernel of its own under its id), or a stand-in
  // ("moe.grouped.nvfp4" for the MMA paths). Meaningless when !has_cpu.
  std::string cpu_stand_in;
  bool has_cpu = false;
  bool has_cuda = false;
  // `auto` picks, among the variants of a role and format that run on the target, the
  // lowest preference (MoE paths: see entries_moe.cc for the rule and its reason).
  int auto_preference = 0;
  // Shape keys the CUDA implementation needs in multiples (e.g. {"inter", 256}): the
  // tensor-parallel split keeps slices in these granules (runtime/tp_shape.h).
  std::map<std::string, int> shape_multiples;
  std::string description;
  // Bytes that must cross memory and FLOPs on compute_pipe for one call of `shape`.
  WorkFn work;
  // The CUDA kernels one call launches (empty without a CUDA implementation).
  std::vector<CudaLaunch> cuda_launches;
};

class KernelRegistry {
 public:
  // The registry of every shipped kernel. Built on first use; immutable after.
  static const KernelRegistry& Global();

  void Register(KernelInfo info);  // id must be unique (checked)
  const KernelInfo* Find(std::string_view id) const;
  // The variant whose cuda_kernel_name is a prefix of `demangled_name`, or nullptr.
  const KernelInfo* FindByCudaName(std::string_view demangled_name) const;
  const std::vector<KernelInfo>& All() const { return kernels_; }

 private:
  std::vector<KernelInfo> kernels_;
};

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_REGISTRY_H_
