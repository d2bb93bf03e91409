// The C callbacks CUPTI calls (buffer requested/completed, API and resource callbacks)
// and the process-wide state they need: CUPTI's buffer callbacks carry no user pointer,
// so the running CollectorCore is found through one atomic pointer, and every callback
// is counted while it runs so that Stop() and the destructor can wait for it.
// Internal to profiler/cupti (collector_core.cc and collector_callbacks.cc).
#ifndef QPROF_PROFILER_CUPTI_COLLECTOR_CALLBACKS_H_
#define QPROF_PROFILER_CUPTI_COLLECTOR_CALLBACKS_H_

#include <chrono>

#include "profiler/cupti/cupti_api.h"

namespace qprof::profiler::cupti {

class CollectorCore;

// Driver launch functions: their callbacks give kernel names and grids in launch order
// (metrics mode) and tell a launch captured into a graph from one that ran (both modes).
// The runtime's launches reach the driver, so the driver domain covers both.
inline constexpr CUpti_CallbackId kDriverLaunchCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
};

// Graph launches and stream capture (both modes: graph kernels get their capture-time
// NVTX path in a trace, their range in a metrics pass; graph_tracker.h).
inline constexpr CUpti_CallbackId kDriverGraphCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
    // Instantiation: the nodes created inside it are clones (graph_tracker.h).
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams,
    CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz,
};

struct CoreCallbacks {
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data);
};

// Makes `core` the running collector; false if another one runs.
bool ClaimActive(CollectorCore* core);
// Clears it (if it is `core`) and waits for callbacks still inside it to return.
void ReleaseActive(CollectorCore* core);
// Waits up to `limit` for every buffer callback now running to return.
bool WaitForCallbacksToReturn(std::chrono::milliseconds limit);
// True on a thread that is inside one of our CUPTI callbacks.
bool InOurCallback();
// See CollectorCore::DisableAfterFork.
void DisableCallbacksAfterFork();

// NVTX ranges reach CUPTI only when NVTX_INJECTION64_PATH names libcupti, and NVTX reads
// it once, at the process's first NVTX call. Sets it to api.LibraryPath() unless it is
// set already (the user's choice, or "qprof record" turning NVTX off).
void PointNvtxAtCupti(CuptiApi& api);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_COLLECTOR_CALLBACKS_H_
