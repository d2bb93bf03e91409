// Launch shapes of our CUDA kernels (KernelInfo::launch), read off their launchers: grid,
// block, dynamic shared memory, and the global loads a thread keeps in flight before their
// first use (the unrolled loads of each kernel's main loop). The model turns them into a
// memory-level-parallelism bound (bytes in flight / memory latency) and an issue rate
// (SMs that have blocks x issue width). A family without a shape here gets no such term.
// When a launcher changes its grid or its loads, its function here must change with it.
#ifndef QPROF_KERNELS_REGISTRY_LAUNCH_SHAPES_H_
#define QPROF_KERNELS_REGISTRY_LAUNCH_SHAPES_H_

#include "kernels/registry/registry.h"

namespace qprof::kernels {

// Sets KernelInfo::launch on the registered families that have a stated shape.
void AttachLaunchShapes(KernelRegistry& r);

}  // namespace qprof::kernels

#endif  // QPROF_KERNELS_REGISTRY_LAUNCH_SHAPES_H_
