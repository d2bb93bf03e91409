// LoadCuptiLibrary() by dlopen at the first call (cupti_library.h): the library's soname
// through the loader's own search (LD_LIBRARY_PATH, the ld.so cache), then the file this
// build was linked against (QPROF_CUPTI_BUILD_PATH), as a CUDA install outside the loader's
// paths still has it. Kept loaded for good (RTLD_NODELETE): CUDA 13.0 crashes when libcupti
// is unloaded without cuptiFinalize.
#include <dlfcn.h>

#include <string>
#include <vector>

#include "profiler/cupti/cupti_library.h"

namespace qprof::profiler::cupti {
namespace {

void* OpenCupti(std::string* tried) {
  std::vector<std::string> candidates = {QPROF_CUPTI_SONAME, "libcupti.so"};
#ifdef QPROF_CUPTI_BUILD_PATH
  candidates.push_back(QPROF_CUPTI_BUILD_PATH);
#endif
  for (const std::string& c : candidates) {
    void* handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle != nullptr) return handle;
    const char* why = dlerror();
    *tried += (tried->empty() ? "" : "; ") + (why != nullptr ? std::string(why) : c);
  }
  return nullptr;
}

}  // namespace

const CuptiLibrary& LoadCuptiLibrary() {
  static const CuptiLibrary* const kLibrary = [] {
    auto* lib = new CuptiLibrary();
    std::string tried;
    void* handle = OpenCupti(&tried);
    if (handle == nullptr) {
      lib->error = "CUPTI (" QPROF_CUPTI_SONAME ") could not be loaded: " + tried;
      return lib;
    }
    std::string missing;
#define QPROF_CUPTI_ENTRY(name)                                                          \
  lib->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                \
  if (lib->name == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(#name);
    QPROF_CUPTI_FUNCTIONS(QPROF_CUPTI_ENTRY)
#undef QPROF_CUPTI_ENTRY
    if (!missing.empty()) {
      // An older libcupti than the headers: refuse it whole rather than call half of it.
      *lib = CuptiLibrary();
      lib->error = "the CUPTI found (" QPROF_CUPTI_SONAME ") lacks " + missing +
                   ": it is older than the CUDA this qprof was built with";
    }
    return lib;
  }();
  return *kLibrary;
}

}  // namespace qprof::profiler::cupti
