// Where `--tp N > 1` looks for NCCL. The CUDA backend opens libnccl.so.2 with dlopen only
// when a run asks for more than one rank, so `--tp 1` (and every other command) never
// needs NCCL at all: qprof and the GPU tests have no link-time dependency on it, and the
// device check need not carry its 200+ MB. Plain C++ (tests/runtime/rank_group_test.cc).
#ifndef QPROF_RUNTIME_CUDA_HOST_NCCL_SEARCH_H_
#define QPROF_RUNTIME_CUDA_HOST_NCCL_SEARCH_H_

#include <string>
#include <vector>

namespace qprof::runtime::cuda {

// The paths to try, in order: `env_path` alone when set (QPROF_NCCL_LIBRARY: the user's
// choice is not second-guessed); else "libnccl.so.2" (dlopen's own search: LD_LIBRARY_PATH,
// the executable's RPATH, the ld.so cache, /lib, /usr/lib), the CUDA toolkit folder found
// at configure time (`build_dir`), the standard toolkit folders, and the NCCL wheel of
// Python environments (nvidia-nccl-cu13 installs site-packages/nvidia/nccl/lib/
// libnccl.so.2), found with glob under /opt, /usr/local/lib, /usr/lib and $VIRTUAL_ENV.
// Duplicates removed.
std::vector<std::string> NcclLibraryCandidates(const char* env_path, const std::string& build_dir,
                                               const char* virtual_env);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_HOST_NCCL_SEARCH_H_
