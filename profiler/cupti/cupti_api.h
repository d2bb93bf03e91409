// The seam between the collector and NVIDIA's libraries: every CUPTI call the collector
// makes (activity, callback, range profiler and profiler host APIs) and the few CUDA
// driver calls it needs go through one CuptiApi. RealCuptiApi() forwards to libcupti and
// libcuda; tests/profiler/cupti/fake implements it with a scripted GPU, and the same fake
// is built as a stand-in libcupti.so.13 for `qprof record` end to end without a GPU.
//
// The methods keep CUPTI's own signatures and parameter structs (one method per C
// function, without the "cupti" prefix), so the real implementation is a line each and
// the fake implements the same contracts as documented in the CUDA 13.0 headers. The
// buffer and callback functions the collector registers are CUPTI's C function types:
// the fake calls them exactly as libcupti would, on its own threads.
//
// Thread-safety: implementations must be callable from any thread (CUPTI's are).
#ifndef QPROF_PROFILER_CUPTI_CUPTI_API_H_
#define QPROF_PROFILER_CUPTI_CUPTI_API_H_

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace qprof::profiler::cupti {

class CuptiApi {
 public:
  virtual ~CuptiApi() = default;

  // ---- Library -------------------------------------------------------------------
  virtual CUptiResult GetVersion(uint32_t* version) = 0;
  virtual CUptiResult GetResultString(CUptiResult result, const char** str) = 0;
  virtual CUptiResult GetErrorMessage(CUptiResult result, const char** str) = 0;
  // The file libcupti was loaded from ("" when it cannot be told). This is what
  // NVTX_INJECTION64_PATH must name for NVTX ranges to reach CUPTI.
  virtual std::string LibraryPath() = 0;

  // ---- Callback API ----------------------------------------------------------------
  virtual CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                void* userdata, CUpti_SubscriberParams* params) = 0;
  virtual CUptiResult Unsubscribe(CUpti_SubscriberHandle subscriber) = 0;
  virtual CUptiResult EnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                   CUpti_CallbackDomain domain) = 0;
  virtual CUptiResult EnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain, CUpti_CallbackId cbid) = 0;

  // ---- Activity API ----------------------------------------------------------------
  virtual CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                CUpti_BuffersCallbackCompleteFunc completed) = 0;
  virtual CUptiResult ActivityEnable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult ActivityDisable(CUpti_ActivityKind kind) = 0;
  virtual CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) = 0;
  virtual CUptiResult ActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) = 0;
  virtual CUptiResult ActivityFlushAll(uint32_t flag) = 0;
  virtual CUptiResult ActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                   size_t* dropped) = 0;
  virtual CUptiResult ActivityGetNextRecord(uint8_t* buffer, size_t valid_size,
                                            CUpti_Activity** record) = 0;
  virtual CUptiResult GetTimestamp(uint64_t* timestamp) = 0;
  virtual CUptiResult GetDeviceId(CUcontext context, uint32_t* device_id) = 0;
  // The ids CUPTI writes into activity records (graphNodeId, graphId) for these handles.
  virtual CUptiResult GetGraphNodeId(CUgraphNode node, uint64_t* node_id) = 0;
  virtual CUptiResult GetGraphId(CUgraph graph, uint32_t* graph_id) = 0;
  virtual CUptiResult GetGraphExecId(CUgraphExec exec, uint32_t* exec_id) = 0;

  // ---- Profiler target, host and range profiler APIs ---------------------------------
  virtual CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) = 0;
  virtual CUptiResult ProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) = 0;
  virtual CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) = 0;
  virtual CUptiResult ProfilerGetCounterAvailability(
      CUpti_Profiler_GetCounterAvailability_Params* p) = 0;
  virtual CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) = 0;
  virtual CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) = 0;
  virtual CUptiResult HostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) = 0;
  virtual CUptiResult HostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params* p) = 0;
  virtual CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) = 0;
  virtual CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) = 0;
  virtual CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) = 0;
  virtual CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) = 0;
  virtual CUptiResult HostEvaluateToGpuValues(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) = 0;
  virtual CUptiResult RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) = 0;
  virtual CUptiResult RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) = 0;
  virtual CUptiResult RangeProfilerGetCounterDataSize(
      CUpti_RangeProfiler_GetCounterDataSize_Params* p) = 0;
  virtual CUptiResult RangeProfilerCounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) = 0;
  virtual CUptiResult RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) = 0;
  virtual CUptiResult RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) = 0;
  virtual CUptiResult RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) = 0;
  // In auto range mode too, only kernels launched inside a pushed range are profiled
  // (NVIDIA's range_profiling sample pushes one around the work in both modes; without
  // it a CUDA 13 run records no range at all). Pops must match pushes, in order.
  virtual CUptiResult RangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) = 0;
  virtual CUptiResult RangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) = 0;
  virtual CUptiResult RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) = 0;
  virtual CUptiResult RangeProfilerGetCounterDataInfo(
      CUpti_RangeProfiler_GetCounterDataInfo_Params* p) = 0;
  virtual CUptiResult RangeProfilerCounterDataGetRangeInfo(
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) = 0;

  // ---- CUDA driver (libcuda.so.1, never loaded or initialised by us) -----------------
  // True when libcuda.so.1 can be loaded at all (a driver is installed).
  virtual bool DriverPresent() = 0;
  // The calls below answer CUDA_ERROR_NOT_INITIALIZED when the process has not loaded
  // the driver. None of them may be called inside InitializeInjection (during cuInit).
  virtual CUresult CtxGetCurrent(CUcontext* ctx) = 0;
  virtual CUresult DeviceGetCount(int* count) = 0;
  virtual CUresult DeviceGetName(char* name, int len, CUdevice dev) = 0;
  virtual CUresult DeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) = 0;
  virtual CUresult DeviceTotalMem(size_t* bytes, CUdevice dev) = 0;
};

// The real libraries. Process-wide and never destroyed (CUPTI may call back during exit).
CuptiApi& RealCuptiApi();

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_CUPTI_API_H_
