// Per-kernel hardware metrics on one CUDA context with CUPTI's Range Profiler: auto range
// (one range per kernel launch) and kernel replay (CUPTI re-runs each kernel once per
// counter pass, saving and restoring its memory).
//
// Sequence (CUDA 13.0 API, cupti_range_profiler.h + cupti_profiler_host.h), all through
// the CuptiApi seam; the caller has called cuptiProfilerInitialize once for the process:
//   chip name (cuptiDeviceGetChipName) -> counter availability image
//   (cuptiProfilerGetCounterAvailability; INSUFFICIENT_PRIVILEGES when counters are
//   admin-only) -> host object -> base metrics of every type -> ChooseMetrics() ->
//   KeepOffered(): every full name checked against the chip's sub-metrics (a refused
//   name would make libcupti refuse every later one, see metric_plan.h) -> ONE
//   cuptiProfilerHostConfigAddMetrics call -> config image, which must be non-empty and
//   need at least one pass -> cuptiRangeProfilerEnable(ctx) -> counter data image sized
//   for max_kernels ranges -> SetConfig(CUPTI_AutoRange, CUPTI_KernelReplay) -> Start.
//   End(): Stop -> DecodeData -> one metrics activity per range -> Disable, host deinit.
//
// Range names: in auto range mode CUPTI names the ranges "0", "1", ... in launch order on
// the context (the k-th kernel launched on the context after Start is range k), not by
// kernel. End() therefore takes the kernel names the collector recorded, in launch order,
// from the driver's launch callbacks for this context, and names range k by the k-th.
//
// Kernel replay serialises kernels and multiplies their run time by the number of
// passes: the activities produced here carry no times (start = end = 0) and are meant
// for JoinKernelMetrics(), never for timing.
//
// Thread-safety: none; the collector calls Begin/End under its metrics lock, from
// Start/Stop or from a CUPTI resource callback on the application thread. Never throws.
#ifndef QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_
#define QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "profiler/core_status.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/metric_plan.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

// The metric plan for a chip, from a profiler host object made for it: base metrics of
// every type, ChooseMetrics(), then every full name checked against the chip's
// sub-metrics (KeepOffered). Works offline (a host object made from a chip name alone),
// which is how tests check it against the real libcupti without a GPU.
MetricPlan PlanMetricsOnHost(CuptiApi& api, CUpti_Profiler_Host_Object* host,
                             const std::string& chip, const std::vector<std::string>& extra);

struct RangeEndStats {
  uint64_t ranges = 0;          // ranges decoded
  uint64_t ranges_unnamed = 0;  // ranges with no recorded launch at their index
  uint64_t ranges_dropped = 0;  // kernels past max_kernels
};

class RangeProfilerSession {
 public:
  RangeProfilerSession(CuptiApi& api, size_t max_kernels, std::vector<std::string> extra_metrics)
      : api_(api), max_kernels_(max_kernels), extra_metrics_(std::move(extra_metrics)) {}
  ~RangeProfilerSession();
  RangeProfilerSession(const RangeProfilerSession&) = delete;
  RangeProfilerSession& operator=(const RangeProfilerSession&) = delete;

  // Sets everything up on `ctx` and starts profiling. PermissionDenied when counters
  // are not allowed, Unimplemented when the chip offers none of the metrics, Internal
  // when the config image comes out empty.
  CoreStatus Begin(CUcontext ctx);
  // Stops, decodes and appends one kernel activity per profiled range to `out`, named by
  // launch_names[range index]. Adds notes to `warnings`. No-op when not begun.
  CoreStatus End(const std::vector<std::string>& launch_names, std::vector<ActivityData>* out,
                 std::vector<std::string>* warnings, RangeEndStats* stats);

  bool active() const { return object_ != nullptr; }
  CUcontext context() const { return ctx_; }
  const MetricPlan& plan() const { return plan_; }
  const std::string& chip() const { return chip_; }

 private:
  CoreStatus BeginImpl(CUcontext ctx);
  CoreStatus BuildConfig();
  CoreStatus EnableAndStart(CUcontext ctx);
  void Teardown();

  CuptiApi& api_;
  const size_t max_kernels_;
  const std::vector<std::string> extra_metrics_;
  CUcontext ctx_ = nullptr;
  uint32_t device_ = 0;
  std::string chip_;
  MetricPlan plan_;
  std::vector<const char*> metric_ptrs_;
  std::vector<uint8_t> availability_;
  std::vector<uint8_t> config_;
  std::vector<uint8_t> counter_data_;
  size_t passes_ = 0;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_
