// LoadCuptiLibrary() from the functions libcupti exports, linked in (cupti_library.h).
#include "profiler/cupti/cupti_library.h"

namespace qprof::profiler::cupti {

const CuptiLibrary& LoadCuptiLibrary() {
  static const CuptiLibrary* const kLibrary = [] {
    auto* lib = new CuptiLibrary();
#define QPROF_CUPTI_ENTRY(name) lib->name = &::name;
    QPROF_CUPTI_FUNCTIONS(QPROF_CUPTI_ENTRY)
#undef QPROF_CUPTI_ENTRY
    return lib;
  }();
  return *kLibrary;
}

}  // namespace qprof::profiler::cupti
