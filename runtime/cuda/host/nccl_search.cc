#include "runtime/cuda/host/nccl_search.h"

#include <glob.h>

#include <algorithm>

namespace qprof::runtime::cuda {
namespace {

constexpr char kSoname[] = "libnccl.so.2";

void Add(const std::string& p, std::vector<std::string>* out) {
  if (std::find(out->begin(), out->end(), p) == out->end()) out->push_back(p);
}

void AddGlob(const std::string& pattern, std::vector<std::string>* out) {
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) Add(g.gl_pathv[i], out);
  }
  globfree(&g);
}

}  // namespace

std::vector<std::string> NcclLibraryCandidates(const char* env_path, const std::string& build_dir,
                                               const char* virtual_env) {
  std::vector<std::string> out;
  if (env_path != nullptr && env_path[0] != '\0') return {env_path};
  Add(kSoname, &out);
  const std::string lib = std::string("/") + kSoname;
  if (!build_dir.empty()) Add(build_dir + lib, &out);
  for (const char* dir : {"/usr/local/cuda/lib64", "/usr/local/cuda/lib",
                          "/usr/local/cuda/targets/x86_64-linux/lib"}) {
    Add(dir + lib, &out);
  }
  const std::string wheel = "/nvidia/nccl/lib" + lib;
  if (virtual_env != nullptr && virtual_env[0] != '\0') {
    AddGlob(std::string(virtual_env) + "/lib/python3*/site-packages" + wheel, &out);
  }
  AddGlob("/opt/*/.venv/lib/python3*/site-packages" + wheel, &out);
  AddGlob("/opt/*/lib/python3*/site-packages" + wheel, &out);
  AddGlob("/usr/local/lib/python3*/dist-packages" + wheel, &out);
  AddGlob("/usr/local/lib/python3*/site-packages" + wheel, &out);
  AddGlob("/usr/lib/python3/dist-packages" + wheel, &out);
  return out;
}

}  // namespace qprof::runtime::cuda
