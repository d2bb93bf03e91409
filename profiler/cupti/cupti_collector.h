// The CUPTI collector: GPU kernels, copies and NVTX ranges of the current process
// (trace mode) or per-kernel hardware metrics (metrics mode). No CUPTI type appears in
// this header (pimpl), so any module may include it.
//
// How to use it in-process (qprof run --backend cuda):
//
//   profiler::cupti::CuptiOptions options;                 // trace mode
//   ASSIGN_OR_RETURN(auto collector, profiler::cupti::MakeCuptiCollector(options));
//   profiler::cupti::RouteNvtxToCupti();    // first thing in main(), before any NVTX call
//   RETURN_IF_ERROR(collector->Start());    // before the decode loop (a context may or
//                                           // may not exist yet)
//   ... run, with NVTX ranges "decode/step N/layer L/moe" pushed on the launching thread
//   RETURN_IF_ERROR(collector->Stop());     // after cudaDeviceSynchronize()
//   RETURN_IF_ERROR(collector->Flush(&trace));
//
// Metrics mode replays every kernel (CUPTI kernel replay with auto range), which
// serialises kernels and changes their timing. So metrics come from a SECOND pass of the
// same workload with options.mode = kMetrics; JoinKernelMetrics() (metrics_join.h) then
// copies them onto the kernels of the trace pass, whose times stay the real ones.
// When counters are not permitted (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) or another CUPTI
// client holds the GPU, the metrics pass still returns OK: Flush() fills
// CollectorStats.metrics_available = false and metrics_unavailable_reason, and one line
// on stderr tells the user how to enable counters.
//
// One collector may exist per process at a time (CUPTI has one set of activity
// callbacks); a second Start() while one exists returns FailedPrecondition.
// Errors: Start() returns Unavailable when there is no GPU/driver, FailedPrecondition
// when libcupti is older than 13.0.1 or another CUPTI client (Nsight Systems, Kineto) is
// subscribed (trace mode then records nothing rather than take that client's records;
// see activity_without_subscriber), PermissionDenied when tracing itself is not allowed.
// Nothing here throws or exits.
//
// The engine is CollectorCore (collector_core.h), shared with the injection library;
// this wrapper turns its plain records into proto::Trace. Every CUPTI and driver call
// goes through a CuptiApi (cupti_api.h): the real libraries by default, a scripted fake
// GPU in tests.
#ifndef QPROF_PROFILER_CUPTI_CUPTI_COLLECTOR_H_
#define QPROF_PROFILER_CUPTI_CUPTI_COLLECTOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/capture_range.h"
#include "profiler/collector.h"
#include "profiler/cupti/metric_plan.h"  // kCounterPermissionHint

namespace qprof::profiler::cupti {

class CuptiApi;

struct CuptiOptions {
  enum class Mode { kTrace, kMetrics };
  Mode mode = Mode::kTrace;
  // Activity buffers (see buffer_pool.h for why 8 MiB and the cap).
  size_t buffer_bytes = 8u << 20;
  size_t max_buffer_bytes = 256u << 20;
  // Only GPU records starting within this many seconds of Start() are kept; 0 = all.
  double duration_s = 0;
  // Metrics mode: kernels profiled per context (the counter data image holds this many
  // ranges; later kernels are counted as dropped ranges).
  size_t max_metric_kernels = 2048;
  // Metrics mode: extra metric full names (e.g. "smsp__inst_executed.sum") to collect
  // besides the per-chip default set.
  std::vector<std::string> extra_metrics;
  // Metrics mode: the default set (tensor/FMA pipe, DRAM; about three passes) or the full
  // one (adds sm__throughput: ten passes on GH100). See metric_plan.h.
  MetricSet metric_set = MetricSet::kDefault;
  // Point NVTX_INJECTION64_PATH at libcupti when unset (false: no NVTX ranges).
  bool route_nvtx = true;
  // Trace activity even when another CUPTI client holds the subscriber (takes its records).
  bool activity_without_subscriber = false;
  // Called on the application thread when a CUDA context is about to be destroyed
  // (cudaDeviceReset, cuCtxDestroy), after its counters were decoded in metrics mode.
  // Tracing continues after it.
  std::function<void()> on_context_teardown;
  // Capture ranges and the start delay (profiler/capture_range.h): only GPU work launched
  // inside them is recorded; the trace's run info says which (capture_range, ...).
  CaptureSpec capture;
};

absl::StatusOr<std::unique_ptr<Collector>> MakeCuptiCollector(const CuptiOptions& options);
// The same over another CuptiApi (tests: the fake GPU). `api` must outlive the collector.
absl::StatusOr<std::unique_ptr<Collector>> MakeCuptiCollector(const CuptiOptions& options,
                                                              CuptiApi& api);

// What a metrics pass of `set` costs on a GPU of compute capability major.minor, from the
// real libcupti's own pass scheduling, offline (no GPU, no CUDA context: libcupti's host
// API takes the chip name, chip_names.h). NotFound for a capability with no known chip;
// another status when libcupti has no offline data for the chip.
struct MetricPassCost {
  std::string chip;          // "GH100"
  std::string products;      // "H100, H200, GH200"
  size_t passes = 0;         // every kernel is replayed this many times
  std::vector<std::string> metrics;
};
absl::StatusOr<MetricPassCost> MetricPassCostFor(int cc_major, int cc_minor, MetricSet set);

// NVTX ranges reach CUPTI only when NVTX's injection variable (NVTX_INJECTION64_PATH)
// names libcupti, and NVTX reads it once, at the process's first NVTX call. Call this at
// the start of main(), before any NVTX call, in programs that will run the collector
// in-process (qprof run --backend cuda). Does nothing if the variable is already set.
// Start() calls it too, which is enough only when no NVTX call happened before.
void RouteNvtxToCupti();

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_CUPTI_COLLECTOR_H_
