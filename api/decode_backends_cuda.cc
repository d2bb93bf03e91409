// The backend list of a build with CUDA (see decode_backends.h).
#include <memory>
#include <vector>

#include "api/decode_backends.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda/cuda_backend.h"

namespace qprof::api {

std::vector<std::unique_ptr<runtime::DecodeBackend>> MakeDecodeBackends() {
  std::vector<std::unique_ptr<runtime::DecodeBackend>> out;
  out.push_back(runtime::cuda::MakeCudaBackend());
  out.push_back(runtime::MakeCpuBackend());
  return out;
}

}  // namespace qprof::api
