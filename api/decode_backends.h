// The decode backends of this build, for `qprof run`: the CPU backend always, the CUDA
// backend when the build has CUDA. Which list a build gets is decided by the build
// (api/CMakeLists.txt compiles decode_backends_cuda.cc or decode_backends_cpu.cc), so no
// source file tests for CUDA with the preprocessor and runtime/ links no backend it does
// not run.
#ifndef QPROF_API_DECODE_BACKENDS_H_
#define QPROF_API_DECODE_BACKENDS_H_

#include <memory>
#include <vector>

#include "runtime/decode_backend.h"

namespace qprof::api {

// In the order `--backend auto` tries them: the GPU first, then the host CPU.
std::vector<std::unique_ptr<runtime::DecodeBackend>> MakeDecodeBackends();

}  // namespace qprof::api

#endif  // QPROF_API_DECODE_BACKENDS_H_
