// RealCuptiApi: each method is the libcupti function of the same name. The driver calls
// are looked up in libcuda.so.1 with dlsym, only once the process has loaded the driver
// itself (RTLD_NOLOAD): linking libcuda would make the collector unusable on machines
// without a GPU, and loading it ourselves could initialise CUDA behind the program's back.
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <mutex>

#include "profiler/cupti/cupti_api.h"

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

class RealApi final : public CuptiApi {
 public:
  CUptiResult GetVersion(uint32_t* v) override { return cuptiGetVersion(v); }
  CUptiResult GetResultString(CUptiResult r, const char** s) override {
    return cuptiGetResultString(r, s);
  }
  CUptiResult GetErrorMessage(CUptiResult r, const char** s) override {
    return cuptiGetErrorMessage(r, s);
  }

  // dladdr(&cuptiActivityEnable) would name the executable in a non-PIE program (the
  // address of an imported function there is the program's own PLT slot). The address
  // dlsym returns from libcupti's own handle is inside libcupti.
  std::string LibraryPath() override {
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
    return cuptiSubscribe_v2(s, cb, user, p);
  }
  CUptiResult Unsubscribe(CUpti_SubscriberHandle s) override { return cuptiUnsubscribe(s); }
  CUptiResult EnableDomain(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d) override {
    return cuptiEnableDomain(e, s, d);
  }
  CUptiResult EnableCallback(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                             CUpti_CallbackId c) override {
    return cuptiEnableCallback(e, s, d, c);
  }

  CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                        CUpti_BuffersCallbackCompleteFunc c) override {
    return cuptiActivityRegisterCallbacks(r, c);
  }
  CUptiResult ActivityEnable(CUpti_ActivityKind k) override { return cuptiActivityEnable(k); }
  CUptiResult ActivityDisable(CUpti_ActivityKind k) override { return cuptiActivityDisable(k); }
  CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId c, uint8_t e) override {
    return cuptiActivityEnableRuntimeApi(c, e);
  }
  CUptiResult ActivityEnableDriverApi(CUpti_CallbackId c, uint8_t e) override {
    return cuptiActivityEnableDriverApi(c, e);
  }
  CUptiResult ActivityFlushAll(uint32_t flag) override { return cuptiActivityFlushAll(flag); }
  CUptiResult ActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t* d) override {
    return cuptiActivityGetNumDroppedRecords(c, s, d);
  }
  CUptiResult ActivityGetNextRecord(uint8_t* b, size_t n, CUpti_Activity** r) override {
    return cuptiActivityGetNextRecord(b, n, r);
  }
  CUptiResult GetTimestamp(uint64_t* t) override { return cuptiGetTimestamp(t); }
  CUptiResult GetDeviceId(CUcontext c, uint32_t* d) override { return cuptiGetDeviceId(c, d); }
  CUptiResult GetGraphNodeId(CUgraphNode n, uint64_t* id) override {
    return cuptiGetGraphNodeId(n, id);
  }
  CUptiResult GetGraphId(CUgraph g, uint32_t* id) override { return cuptiGetGraphId(g, id); }
  CUptiResult GetGraphExecId(CUgraphExec e, uint32_t* id) override {
    return cuptiGetGraphExecId(e, id);
  }

  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override {
    return cuptiProfilerInitialize(p);
  }
  CUptiResult ProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) override {
    return cuptiProfilerDeInitialize(p);
  }
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override {
    return cuptiDeviceGetChipName(p);
  }
  CUptiResult ProfilerGetCounterAvailability(
      CUpti_Profiler_GetCounterAvailability_Params* p) override {
    return cuptiProfilerGetCounterAvailability(p);
  }
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override {
    return cuptiProfilerHostInitialize(p);
  }
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override {
    return cuptiProfilerHostDeinitialize(p);
  }
  CUptiResult HostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) override {
    return cuptiProfilerHostGetBaseMetrics(p);
  }
  CUptiResult HostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params* p) override {
    return cuptiProfilerHostGetSubMetrics(p);
  }
  CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override {
    return cuptiProfilerHostConfigAddMetrics(p);
  }
  CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override {
    return cuptiProfilerHostGetConfigImageSize(p);
  }
  CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) override {
    return cuptiProfilerHostGetConfigImage(p);
  }
  CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override {
    return cuptiProfilerHostGetNumOfPasses(p);
  }
  CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override {
    return cuptiProfilerHostEvaluateToGpuValues(p);
  }
  CUptiResult RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) override {
    return cuptiRangeProfilerEnable(p);
  }
  CUptiResult RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) override {
    return cuptiRangeProfilerDisable(p);
  }
  CUptiResult RangeProfilerGetCounterDataSize(
      CUpti_RangeProfiler_GetCounterDataSize_Params* p) override {
    return cuptiRangeProfilerGetCounterDataSize(p);
  }
  CUptiResult RangeProfilerCounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) override {
    return cuptiRangeProfilerCounterDataImageInitialize(p);
  }
  CUptiResult RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override {
    return cuptiRangeProfilerSetConfig(p);
  }
  CUptiResult RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) override {
    return cuptiRangeProfilerStart(p);
  }
  CUptiResult RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) override {
    return cuptiRangeProfilerStop(p);
  }
  CUptiResult RangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) override {
    return cuptiRangeProfilerPushRange(p);
  }
  CUptiResult RangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) override {
    return cuptiRangeProfilerPopRange(p);
  }
  CUptiResult RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) override {
    return cuptiRangeProfilerDecodeData(p);
  }
  CUptiResult RangeProfilerGetCounterDataInfo(
      CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override {
    return cuptiRangeProfilerGetCounterDataInfo(p);
  }
  CUptiResult RangeProfilerCounterDataGetRangeInfo(
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) override {
    return cuptiRangeProfilerCounterDataGetRangeInfo(p);
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
