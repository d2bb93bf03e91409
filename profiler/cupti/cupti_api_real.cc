// RealCuptiApi: each method is the libcupti function of the same name, called through the
// process's table of them (cupti_library.h: linked in, or opened at the first call). The
// driver calls are looked up in libcuda.so.1 with dlsym, only once the process has loaded
// the driver itself (RTLD_NOLOAD): linking libcuda would make the collector unusable on
// machines without a GPU, and loading it ourselves could initialise CUDA behind the
// program's back.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <mutex>

#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/cupti_library.h"

namespace qprof::profiler::cupti {
namespace {

// The driver's entry points, resolved once the driver is loaded.
struct DriverEntries {
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*device_get_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*device_total_mem)(size_t*, CUdevice) = nullptr;
};

// The entry `Entry` of the process's libcupti, called; CUPTI_ERROR_NOT_INITIALIZED when
// libcupti could not be loaded (GetResultString then says why).
template <auto Entry, typename... Args>
CUptiResult Call(Args... args) {
  const auto fn = LoadCuptiLibrary().*Entry;
  return fn != nullptr ? fn(args...) : CUPTI_ERROR_NOT_INITIALIZED;
}

class RealApi final : public CuptiApi {
 public:
  CUptiResult GetVersion(uint32_t* v) override { return Call<&CuptiLibrary::cuptiGetVersion>(v); }
  CUptiResult GetResultString(CUptiResult r, const char** s) override {
    const CuptiLibrary& lib = LoadCuptiLibrary();
    if (lib.cuptiGetResultString == nullptr) {
      *s = lib.error.c_str();  // the library is missing: that is the error to tell
      return CUPTI_SUCCESS;
    }
    return lib.cuptiGetResultString(r, s);
  }
  CUptiResult GetErrorMessage(CUptiResult r, const char** s) override {
    const CuptiLibrary& lib = LoadCuptiLibrary();
    if (lib.cuptiGetErrorMessage == nullptr) {
      *s = lib.error.c_str();
      return CUPTI_SUCCESS;
    }
    return lib.cuptiGetErrorMessage(r, s);
  }

  // dladdr(&cuptiActivityEnable) would name the executable in a non-PIE program (the
  // address of an imported function there is the program's own PLT slot). The address
  // dlsym returns from libcupti's own handle is inside libcupti.
  std::string LibraryPath() override {
    LoadCuptiLibrary();  // opened by now, if it is opened at first use
    for (const char* soname : {"libcupti.so.13", "libcupti.so"}) {
      void* handle = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD);
      if (handle == nullptr) continue;
      std::string path;
      Dl_info info;
      void* sym = dlsym(handle, "cuptiActivityEnable");
      if (sym != nullptr && dladdr(sym, &info) != 0 && info.dli_fname != nullptr) {
        char resolved[PATH_MAX];
        path = realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
      }
      dlclose(handle);
      if (!path.empty()) return path;
    }
    return "";
  }

  CUptiResult Subscribe(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* user,
                        CUpti_SubscriberParams* p) override {
    return Call<&CuptiLibrary::cuptiSubscribe_v2>(s, cb, user, p);
  }
  CUptiResult Unsubscribe(CUpti_SubscriberHandle s) override { return Call<&CuptiLibrary::cuptiUnsubscribe>(s); }
  CUptiResult EnableDomain(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d) override {
    return Call<&CuptiLibrary::cuptiEnableDomain>(e, s, d);
  }
  CUptiResult EnableCallback(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                             CUpti_CallbackId c) override {
    return Call<&CuptiLibrary::cuptiEnableCallback>(e, s, d, c);
  }

  CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                        CUpti_BuffersCallbackCompleteFunc c) override {
    return Call<&CuptiLibrary::cuptiActivityRegisterCallbacks>(r, c);
  }
  CUptiResult ActivityEnable(CUpti_ActivityKind k) override { return Call<&CuptiLibrary::cuptiActivityEnable>(k); }
  CUptiResult ActivityDisable(CUpti_ActivityKind k) override { return Call<&CuptiLibrary::cuptiActivityDisable>(k); }
  CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId c, uint8_t e) override {
    return Call<&CuptiLibrary::cuptiActivityEnableRuntimeApi>(c, e);
  }
  CUptiResult ActivityEnableDriverApi(CUpti_CallbackId c, uint8_t e) override {
    return Call<&CuptiLibrary::cuptiActivityEnableDriverApi>(c, e);
  }
  CUptiResult ActivityFlushAll(uint32_t flag) override { return Call<&CuptiLibrary::cuptiActivityFlushAll>(flag); }
  CUptiResult ActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t* d) override {
    return Call<&CuptiLibrary::cuptiActivityGetNumDroppedRecords>(c, s, d);
  }
  CUptiResult ActivityGetNextRecord(uint8_t* b, size_t n, CUpti_Activity** r) override {
    return Call<&CuptiLibrary::cuptiActivityGetNextRecord>(b, n, r);
  }
  CUptiResult GetTimestamp(uint64_t* t) override { return Call<&CuptiLibrary::cuptiGetTimestamp>(t); }
  CUptiResult GetDeviceId(CUcontext c, uint32_t* d) override { return Call<&CuptiLibrary::cuptiGetDeviceId>(c, d); }
  CUptiResult GetGraphNodeId(CUgraphNode n, uint64_t* id) override {
    return Call<&CuptiLibrary::cuptiGetGraphNodeId>(n, id);
  }
  CUptiResult GetGraphId(CUgraph g, uint32_t* id) override { return Call<&CuptiLibrary::cuptiGetGraphId>(g, id); }
  CUptiResult GetGraphExecId(CUgraphExec e, uint32_t* id) override {
    return Call<&CuptiLibrary::cuptiGetGraphExecId>(e, id);
  }

  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerInitialize>(p);
  }
  CUptiResult ProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerDeInitialize>(p);
  }
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override {
    return Call<&CuptiLibrary::cuptiDeviceGetChipName>(p);
  }
  CUptiResult ProfilerGetCounterAvailability(
      CUpti_Profiler_GetCounterAvailability_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerGetCounterAvailability>(p);
  }
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostInitialize>(p);
  }
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostDeinitialize>(p);
  }
  CUptiResult HostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostGetBaseMetrics>(p);
  }
  CUptiResult HostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostGetSubMetrics>(p);
  }
  CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostConfigAddMetrics>(p);
  }
  CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostGetConfigImageSize>(p);
  }
  CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostGetConfigImage>(p);
  }
  CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostGetNumOfPasses>(p);
  }
  CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override {
    return Call<&CuptiLibrary::cuptiProfilerHostEvaluateToGpuValues>(p);
  }
  CUptiResult RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerEnable>(p);
  }
  CUptiResult RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerDisable>(p);
  }
  CUptiResult RangeProfilerGetCounterDataSize(
      CUpti_RangeProfiler_GetCounterDataSize_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerGetCounterDataSize>(p);
  }
  CUptiResult RangeProfilerCounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerCounterDataImageInitialize>(p);
  }
  CUptiResult RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerSetConfig>(p);
  }
  CUptiResult RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerStart>(p);
  }
  CUptiResult RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerStop>(p);
  }
  CUptiResult RangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerPushRange>(p);
  }
  CUptiResult RangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerPopRange>(p);
  }
  CUptiResult RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerDecodeData>(p);
  }
  CUptiResult RangeProfilerGetCounterDataInfo(
      CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerGetCounterDataInfo>(p);
  }
  CUptiResult RangeProfilerCounterDataGetRangeInfo(
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) override {
    return Call<&CuptiLibrary::cuptiRangeProfilerCounterDataGetRangeInfo>(p);
  }

  bool DriverPresent() override {
    void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    return handle != nullptr;  // kept loaded: CUDA will load it anyway
  }
  CUresult CtxGetCurrent(CUcontext* ctx) override {
    const DriverEntries* d = Driver();
    return d->ctx_get_current ? d->ctx_get_current(ctx) : CUDA_ERROR_NOT_INITIALIZED;
  }
  CUresult DeviceGetCount(int* n) override {
    const DriverEntries* d = Driver();
    return d->device_get_count ? d->device_get_count(n) : CUDA_ERROR_NOT_INITIALIZED;
  }
  CUresult DeviceGetName(char* name, int len, CUdevice dev) override {
    const DriverEntries* d = Driver();
    return d->device_get_name ? d->device_get_name(name, len, dev) : CUDA_ERROR_NOT_INITIALIZED;
  }
  CUresult DeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice dev) override {
    const DriverEntries* d = Driver();
    return d->device_get_attribute ? d->device_get_attribute(v, a, dev)
                                   : CUDA_ERROR_NOT_INITIALIZED;
  }
  CUresult DeviceTotalMem(size_t* bytes, CUdevice dev) override {
    const DriverEntries* d = Driver();
    return d->device_total_mem ? d->device_total_mem(bytes, dev) : CUDA_ERROR_NOT_INITIALIZED;
  }

 private:
  // Resolved at the first call that finds the driver loaded; until then, empty entries.
  const DriverEntries* Driver() {
    std::lock_guard<std::mutex> lock(mu_);
    if (resolved_) return &entries_;
    void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) return &entries_;
    auto get = [handle](const char* name) { return dlsym(handle, name); };
    entries_.ctx_get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(get("cuCtxGetCurrent"));
    entries_.device_get_count = reinterpret_cast<CUresult (*)(int*)>(get("cuDeviceGetCount"));
    entries_.device_get_name =
        reinterpret_cast<CUresult (*)(char*, int, CUdevice)>(get("cuDeviceGetName"));
    entries_.device_get_attribute =
        reinterpret_cast<CUresult (*)(int*, CUdevice_attribute, CUdevice)>(get("cuDeviceGetAttribute"));
    entries_.device_total_mem =
        reinterpret_cast<CUresult (*)(size_t*, CUdevice)>(get("cuDeviceTotalMem_v2"));
    resolved_ = true;
    return &entries_;
  }

  std::mutex mu_;
  bool resolved_ = false;
  DriverEntries entries_;
};

}  // namespace

CuptiApi& RealCuptiApi() {
  static RealApi* api = new RealApi();  // never destroyed: CUPTI may call back at exit
  return *api;
}

}  // namespace qprof::profiler::cupti
