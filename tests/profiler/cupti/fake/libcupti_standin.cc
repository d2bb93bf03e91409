// A stand-in libcupti.so.13 for `qprof record` end to end without a GPU: every CUPTI
// function libqprof_inject.so imports, answered by the scripted fake GPU (fake_cupti.h),
// one per process, made at the first call. Built with the real library's soname and
// symbol version (libcupti.so.13), so the dynamic loader takes it when its folder comes
// first in LD_LIBRARY_PATH.
//
// Faults come from the environment (the test sets them on the `qprof record` command):
//   QPROF_FAKE_CHIP        chip name for the range profiler (default GH100)
//   QPROF_FAKE_SUBSCRIBER  another CUPTI client holds the subscriber (its name)
//   QPROF_FAKE_COUNTERS    "denied": counters are admin-only
//   QPROF_FAKE_VERSION     cuptiGetVersion's answer (default 130001)
// The stand-in driver (libcuda_standin.cc) reaches the fake through qprofFakeGpuControl()
// and qprofFakeGpuApi() (virtual calls only, so it needs no copy of the fake's code).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tests/profiler/cupti/fake/fake_cupti.h"

using qprof::profiler::cupti::fake::FakeCupti;
using qprof::profiler::cupti::fake::FakeDevice;

namespace {

std::string Env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && v[0] != '\0' ? v : fallback;
}

FakeCupti* Make() {
  FakeDevice device;
  device.chip = Env("QPROF_FAKE_CHIP", "GH100");
  auto* gpu = new FakeCupti({device});  // never destroyed: CUPTI lives until exit
  gpu->pid = static_cast<uint32_t>(getpid());
  gpu->faults.other_subscriber = Env("QPROF_FAKE_SUBSCRIBER", "");
  gpu->faults.counters_denied = Env("QPROF_FAKE_COUNTERS", "") == "denied";
  gpu->faults.version = static_cast<uint32_t>(std::atol(Env("QPROF_FAKE_VERSION", "130001").c_str()));
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&Make), &info) != 0 && info.dli_fname != nullptr) {
    gpu->library_path = info.dli_fname;
    gpu->nvtx_requires_path = info.dli_fname;  // NVTX reaches "CUPTI" only through this file
  }
  return gpu;
}

FakeCupti* Gpu() {
  static FakeCupti* gpu = Make();
  return gpu;
}

}  // namespace

extern "C" {

void* qprofFakeGpuControl() {
  return static_cast<qprof::profiler::cupti::fake::FakeGpuControl*>(Gpu());
}
void* qprofFakeGpuApi() { return static_cast<qprof::profiler::cupti::CuptiApi*>(Gpu()); }

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* v) { return Gpu()->GetVersion(v); }
CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char** s) {
  return Gpu()->GetResultString(r, s);
}
CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult r, const char** s) {
  return Gpu()->GetErrorMessage(r, s);
}
CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* s, CUpti_CallbackFunc cb, void* u,
                                       CUpti_SubscriberParams* p) {
  return Gpu()->Subscribe(s, cb, u, p);
}
CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle s) { return Gpu()->Unsubscribe(s); }
CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d) {
  return Gpu()->EnableDomain(e, s, d);
}
CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t e, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                         CUpti_CallbackId c) {
  return Gpu()->EnableCallback(e, s, d, c);
}
CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                    CUpti_BuffersCallbackCompleteFunc c) {
  return Gpu()->ActivityRegisterCallbacks(r, c);
}
CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind k) { return Gpu()->ActivityEnable(k); }
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind k) { return Gpu()->ActivityDisable(k); }
CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId c, uint8_t e) {
  return Gpu()->ActivityEnableRuntimeApi(c, e);
}
CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId c, uint8_t e) {
  return Gpu()->ActivityEnableDriverApi(c, e);
}
CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t f) { return Gpu()->ActivityFlushAll(f); }
CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t* d) {
  return Gpu()->ActivityGetNumDroppedRecords(c, s, d);
}
CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* b, size_t n, CUpti_Activity** r) {
  return Gpu()->ActivityGetNextRecord(b, n, r);
}
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* t) { return Gpu()->GetTimestamp(t); }
CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext c, uint32_t* d) { return Gpu()->GetDeviceId(c, d); }
CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode n, uint64_t* id) {
  return Gpu()->GetGraphNodeId(n, id);
}
CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph g, uint32_t* id) { return Gpu()->GetGraphId(g, id); }
CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec e, uint32_t* id) {
  return Gpu()->GetGraphExecId(e, id);
}
CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
  return Gpu()->ProfilerInitialize(p);
}
CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) {
  return Gpu()->ProfilerDeInitialize(p);
}
CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  return Gpu()->DeviceGetChipName(p);
}
CUptiResult CUPTIAPI cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  return Gpu()->ProfilerGetCounterAvailability(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  return Gpu()->HostInitialize(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  return Gpu()->HostDeinitialize(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) {
  return Gpu()->HostGetBaseMetrics(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params* p) {
  return Gpu()->HostGetSubMetrics(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  return Gpu()->HostConfigAddMetrics(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  return Gpu()->HostGetConfigImageSize(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  return Gpu()->HostGetConfigImage(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  return Gpu()->HostGetNumOfPasses(p);
}
CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  return Gpu()->HostEvaluateToGpuValues(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  return Gpu()->RangeProfilerEnable(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  return Gpu()->RangeProfilerDisable(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  return Gpu()->RangeProfilerGetCounterDataSize(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  return Gpu()->RangeProfilerCounterDataImageInitialize(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  return Gpu()->RangeProfilerSetConfig(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  return Gpu()->RangeProfilerStart(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  return Gpu()->RangeProfilerStop(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) {
  return Gpu()->RangeProfilerPushRange(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) {
  return Gpu()->RangeProfilerPopRange(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  return Gpu()->RangeProfilerDecodeData(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  return Gpu()->RangeProfilerGetCounterDataInfo(p);
}
CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataGetRangeInfo(
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
  return Gpu()->RangeProfilerCounterDataGetRangeInfo(p);
}

}  // extern "C"
