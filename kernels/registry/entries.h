// One Register function per kernel family; registry.cc calls them all once.
#ifndef QPROF_KERNELS_REGISTRY_ENTRIES_H_
#define QPROF_KERNELS_REGISTRY_ENTRIES_H_

#include <string>

#include "kernels/registry/registry.h"

namespace qprof::kernels {

// "qprof_" + id with dots replaced by underscores: the name prefix of our CUDA kernels
// (kernels/*/cuda name their __global__ functions this way, optionally with a suffix).
std::string CudaNameForId(const std::string& id);

void RegisterMoeKernels(KernelRegistry& registry);
void RegisterMlaKernels(KernelRegistry& registry);
void RegisterCommonKernels(KernelRegistry& registry);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_ENTRIES_H_
