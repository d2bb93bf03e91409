#include "kernels/registry/registry.h"

#include <cstdio>
#include <string>
#include <utility>

#include "kernels/registry/entries.h"
#include "kernels/registry/launch_shapes.h"

namespace qprof::kernels {

std::string CudaNameForId(const std::string& id) {
  std::string name = "qprof_" + id;
  for (char& c : name) {
    if (c == '.') c = '_';
  }
  return name;
}

const KernelRegistry& KernelRegistry::Global() {
  static const KernelRegistry* const registry = [] {
    auto* r = new KernelRegistry();
    RegisterMoeKernels(*r);
    RegisterMlaKernels(*r);
    RegisterCommonKernels(*r);
    AttachLaunchShapes(*r);
    return r;
  }();
  return *registry;
}

void KernelRegistry::Register(KernelInfo info) {
  // Ids are fixed at build time; a duplicate is a programming error caught by the
  // registry test, so the later entry is dropped rather than ending the process.
  if (Find(info.id) != nullptr) {
    std::fprintf(stderr, "qprof: duplicate kernel id %s ignored\n", info.id.c_str());
    return;
  }
  kernels_.push_back(std::move(info));
}

void KernelRegistry::SetLaunch(std::string_view id,
                               std::function<proto::LaunchShape(const KernelShape&)> fn) {
  for (KernelInfo& k : kernels_) {
    if (k.id == id) k.launch = fn;
  }
}

const KernelInfo* KernelRegistry::Find(std::string_view id) const {
  for (const KernelInfo& k : kernels_) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

// Demangled names may carry a return type and namespaces ("void qprof::cuda::
// qprof_moe_slot_gemv_mxfp4_kernel<128>(...)"), so the CUDA name must start the name or
// follow a space or ':'. The longest matching name wins (qprof_gemm_dense vs a longer id).
const KernelInfo* KernelRegistry::FindByCudaName(std::string_view demangled_name) const {
  const KernelInfo* best = nullptr;
  for (const KernelInfo& k : kernels_) {
    if (k.cuda_kernel_name.empty()) continue;
    if (best && best->cuda_kernel_name.size() >= k.cuda_kernel_name.size()) continue;
    size_t pos = 0;
    while ((pos = demangled_name.find(k.cuda_kernel_name, pos)) != std::string_view::npos) {
      if (pos == 0 || demangled_name[pos - 1] == ' ' || demangled_name[pos - 1] == ':') {
        best = &k;
        break;
      }
      ++pos;
    }
  }
  return best;
}

}  // namespace qprof::kernels
