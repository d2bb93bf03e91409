// The kernel registry: every kernel variant qprof ships, registered once with its
// metadata. Dispatch (runtime), the decode plan (runtime/plan), the classification of our
// own kernels (cli hands the registry to analysis as known kernels) and work models for
// achieved bandwidth and ceilings all read it; nothing else hard-codes these facts.
//
// A variant is one algorithm for one format (e.g. "moe.slot_gemv.mxfp4"); it may have a
// CPU implementation, a CUDA implementation, or both. The pipe class is the one the
// CUDA implementation uses on a GPU (the CPU implementation always runs on the host).
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

#include "proto/plan.pb.h"
#include "proto/trace.pb.h"

namespace qprof::kernels {

// Named dimensions of one launch, e.g. {"tokens": 16, "n": 2048, "k": 4096, "experts": 256}.
using KernelShape = std::map<std::string, int64_t>;

struct KernelInfo {
  std::string id;                // "moe.slot_gemv.mxfp4"
  std::string family;            // "moe.slot_gemv"
  std::string role;              // proto/vocabulary.h role::
  std::string format;            // "mxfp4", "nvfp4", "bf16", "fp32"
  std::string gpu_pipe_class;    // "simt" or "tensor" (or "memory", "comm")
  std::string compute_pipe;      // "simt_fp32", "tensor_bf16", "tensor_fp4", "none"
  std::string cuda_kernel_name;  // demangled-name prefix of the CUDA kernel; "" if none
  std::string min_arch;          // "sm_80", "sm_120a", ... ("" = any)
  bool has_cpu = false;
  bool has_cuda = false;
  std::string description;
  // Bytes that must cross memory and FLOPs on compute_pipe for one launch of `shape`.
  std::function<proto::WorkModel(const KernelShape&)> work;
  // How one launch of `shape` runs on a GPU (grid, block, loads in flight per thread), for
  // the model's latency and issue terms; empty when not stated (launch_shapes.h).
  std::function<proto::LaunchShape(const KernelShape&)> launch;
};

class KernelRegistry {
 public:
  // The registry of every shipped kernel. Built on first use; immutable after.
  static const KernelRegistry& Global();

  void Register(KernelInfo info);  // id must be unique (checked)
  // Sets KernelInfo::launch of the entry `id` (launch_shapes.cc); ignored if absent.
  void SetLaunch(std::string_view id, std::function<proto::LaunchShape(const KernelShape&)> fn);
  const KernelInfo* Find(std::string_view id) const;
  // The variant whose cuda_kernel_name is a prefix of `demangled_name`, or nullptr.
  const KernelInfo* FindByCudaName(std::string_view demangled_name) const;
  const std::vector<KernelInfo>& All() const { return kernels_; }

 private:
  std::vector<KernelInfo> kernels_;
};

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_REGISTRY_H_
