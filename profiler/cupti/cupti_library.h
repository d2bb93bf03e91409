// libcupti's functions as a table of pointers, and the two ways a program gets it:
//
//  - qprof_cupti_library_linked: the functions libcupti exports, linked in. For the
//    injection library, which the CUDA driver loads only into a process being profiled.
//  - qprof_cupti_library_dlopen: libcupti opened with dlopen at the first call. For the
//    qprof command and the Python module's process: most of their commands (analyze, diff,
//    merge, import, devices) never profile, and none of them should pay for loading a
//    4 MB library, or fail to start on a machine without CUPTI.
//
// A program links exactly one of them (each defines LoadCuptiLibrary()); RealCuptiApi()
// (cupti_api.h) calls through the table. The list is the collector's: one entry per
// libcupti function the seam forwards to.
#ifndef QPROF_PROFILER_CUPTI_CUPTI_LIBRARY_H_
#define QPROF_PROFILER_CUPTI_CUPTI_LIBRARY_H_

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <string>

// X(name) for every libcupti function the seam calls.
#define QPROF_CUPTI_FUNCTIONS(X)                                                             \
  X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiGetErrorMessage) X(cuptiSubscribe_v2)    \
  X(cuptiUnsubscribe) X(cuptiEnableDomain) X(cuptiEnableCallback)                            \
  X(cuptiActivityRegisterCallbacks) X(cuptiActivityEnable) X(cuptiActivityDisable)           \
  X(cuptiActivityEnableRuntimeApi) X(cuptiActivityEnableDriverApi) X(cuptiActivityFlushAll)  \
  X(cuptiActivityGetNumDroppedRecords) X(cuptiActivityGetNextRecord) X(cuptiGetTimestamp)    \
  X(cuptiGetDeviceId) X(cuptiGetGraphNodeId) X(cuptiGetGraphId) X(cuptiGetGraphExecId)       \
  X(cuptiProfilerInitialize) X(cuptiProfilerDeInitialize) X(cuptiDeviceGetChipName)          \
  X(cuptiProfilerGetCounterAvailability) X(cuptiProfilerHostInitialize)                      \
  X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostGetBaseMetrics)                        \
  X(cuptiProfilerHostGetSubMetrics) X(cuptiProfilerHostConfigAddMetrics)                     \
  X(cuptiProfilerHostGetConfigImageSize) X(cuptiProfilerHostGetConfigImage)                  \
  X(cuptiProfilerHostGetNumOfPasses) X(cuptiProfilerHostEvaluateToGpuValues)                 \
  X(cuptiRangeProfilerEnable) X(cuptiRangeProfilerDisable)                                   \
  X(cuptiRangeProfilerGetCounterDataSize) X(cuptiRangeProfilerCounterDataImageInitialize)    \
  X(cuptiRangeProfilerSetConfig) X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop)        \
  X(cuptiRangeProfilerPushRange) X(cuptiRangeProfilerPopRange)                              \
  X(cuptiRangeProfilerDecodeData) X(cuptiRangeProfilerGetCounterDataInfo)                    \
  X(cuptiRangeProfilerCounterDataGetRangeInfo)

namespace qprof::profiler::cupti {

struct CuptiLibrary {
#define QPROF_CUPTI_ENTRY(name) decltype(&::name) name = nullptr;
  QPROF_CUPTI_FUNCTIONS(QPROF_CUPTI_ENTRY)
#undef QPROF_CUPTI_ENTRY
  // Set when the library could not be loaded (every entry is then null): what was tried and
  // why it failed, for the error a failed call reports.
  std::string error;
};

// The process's table, filled at the first call (thread-safe) and never destroyed: CUPTI
// may call back during exit.
const CuptiLibrary& LoadCuptiLibrary();

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_CUPTI_LIBRARY_H_
