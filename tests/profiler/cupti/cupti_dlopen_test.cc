// libcupti opened at the first call (profiler/cupti/cupti_library.h), as the qprof command
// gets it: nothing is loaded before the seam is used, the first call loads the real library
// (offline calls work without a GPU), and the library path the collector hands to NVTX
// names it. This program links no libcupti (checked: /proc/self/maps has none at first).
#include <dlfcn.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/cupti_library.h"

namespace qprof::profiler::cupti {
namespace {

bool CuptiLoaded() {
  for (const char* soname : {"libcupti.so.13", "libcupti.so"}) {
    void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
    if (h != nullptr) {
      dlclose(h);
      return true;
    }
  }
  return false;
}

// The libraries mapped into this process (/proc/self/maps): what the loader brought in.
std::string Maps() {
  std::ifstream f("/proc/self/maps");
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

TEST(CuptiDlopen, LoadedAtTheFirstCallOnly) {
  // Before any call: the program started without libcupti.
  ASSERT_FALSE(CuptiLoaded()) << "libcupti was loaded before the first call";
  EXPECT_EQ(Maps().find("libcupti"), std::string::npos);
  uint32_t version = 0;
  const CUptiResult rc = RealCuptiApi().GetVersion(&version);
  if (rc != CUPTI_SUCCESS) {
    const char* why = "";
    RealCuptiApi().GetResultString(rc, &why);
    GTEST_SKIP() << "no libcupti on this machine: " << why;
  }
  EXPECT_GT(version, 0u);
  EXPECT_TRUE(CuptiLoaded());
  EXPECT_TRUE(LoadCuptiLibrary().error.empty()) << LoadCuptiLibrary().error;
  const std::string path = RealCuptiApi().LibraryPath();
  EXPECT_NE(path.find("libcupti.so"), std::string::npos) << path;
  // An offline call of the profiler host API (no GPU needed) goes through the table too.
  CUpti_Profiler_Host_Initialize_Params p = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  p.pChipName = "GH100";
  if (RealCuptiApi().HostInitialize(&p) == CUPTI_SUCCESS) {
    CUpti_Profiler_Host_Deinitialize_Params d = {
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    d.pHostObject = p.pHostObject;
    EXPECT_EQ(RealCuptiApi().HostDeinitialize(&d), CUPTI_SUCCESS);
  }
}

}  // namespace
}  // namespace qprof::profiler::cupti
