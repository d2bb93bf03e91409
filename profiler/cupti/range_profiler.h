// Per-kernel hardware metrics with CUPTI's Range Profiler: auto range (one range per
// kernel) and kernel replay (CUPTI re-runs each kernel once per counter pass, saving and
// restoring its memory), on one CUDA context.
//
// Sequence (CUDA 13.0 API, cupti_range_profiler.h + cupti_profiler_host.h):
//   cuptiProfilerInitialize -> chip name (cuptiDeviceGetChipName) -> counter availability
//   image (cuptiProfilerGetCounterAvailability; fails with INSUFFICIENT_PRIVILEGES when
//   counters are admin-only) -> host object (cuptiProfilerHostInitialize) -> base metrics
//   of every type -> ChooseMetrics() -> config image (metrics the chip rejects are dropped
//   one by one) -> cuptiRangeProfilerEnable(ctx) -> counter data image sized for
//   max_kernels ranges -> SetConfig(CUPTI_AutoRange, CUPTI_KernelReplay) -> Start.
//   At the end: Stop -> DecodeData -> one proto::Activity per range (name = range name,
//   which auto range sets to the kernel's name) with metrics -> Disable, host deinit.
//
// Kernel replay serialises kernels and multiplies their run time by the number of
// passes: the activities produced here carry no times (start = end = 0) and are meant
// for JoinKernelMetrics(), never for timing.
//
// Thread-safety: Begin/End are called by the collector under its own lock, from
// Start/Stop or from a CUPTI resource callback on the application thread. Never throws.
#ifndef QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_
#define QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include "absl/status/status.h"
#include "profiler/cupti/metric_plan.h"
#include "proto/trace.pb.h"

namespace qprof::profiler::cupti {

class RangeProfilerSession {
 public:
  RangeProfilerSession(size_t max_kernels, std::vector<std::string> extra_metrics)
      : max_kernels_(max_kernels), extra_metrics_(std::move(extra_metrics)) {}
  ~RangeProfilerSession();
  RangeProfilerSession(const RangeProfilerSession&) = delete;
  RangeProfilerSession& operator=(const RangeProfilerSession&) = delete;

  // Sets everything up on `ctx` and starts profiling. PermissionDenied when counters
  // are not allowed, Unimplemented when the chip is not supported.
  absl::Status Begin(CUcontext ctx);
  // Stops, decodes and appends one kernel activity per profiled range to `out`.
  // Adds dropped-range and rejected-metric notes to `warnings`. No-op when not begun.
  absl::Status End(std::vector<proto::Activity>* out, std::vector<std::string>* warnings);

  bool active() const { return object_ != nullptr; }
  CUcontext context() const { return ctx_; }
  const MetricPlan& plan() const { return plan_; }

 private:
  absl::Status BeginImpl(CUcontext ctx);
  void Teardown();

  const size_t max_kernels_;
  const std::vector<std::string> extra_metrics_;
  CUcontext ctx_ = nullptr;
  std::string chip_;
  MetricPlan plan_;
  std::vector<const char*> metric_ptrs_;
  std::vector<uint8_t> availability_;
  std::vector<uint8_t> config_;
  std::vector<uint8_t> counter_data_;
  size_t passes_ = 0;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  bool profiler_initialized_ = false;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_
