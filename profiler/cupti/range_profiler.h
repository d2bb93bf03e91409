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
//   for max_kernels ranges -> SetConfig(CUPTI_AutoRange, CUPTI_KernelReplay, one nesting
//   level: "For Auto range mode, this should be set to 1") -> Start -> PushRange.
//   End(): PopRange -> Stop -> DecodeData -> one metrics activity per range -> Disable,
//   host deinit.
//
// The pushed range: in auto range mode each kernel is still its own range, but only
// kernels launched inside a pushed range are profiled. NVIDIA's range_profiling sample
// pushes one in auto range mode too; the header's PushRange takes a name "only valid for
// User range mode"; a CUDA 13 run without push and pop recorded no range at all. So the
// session pushes one level-1 range around the profiled work (Open) and pops it before
// Stop (Close); a capture range (`qprof record --capture-range`) opens and closes it
// around the bracketed work only. Pops match pushes, in order, as the header requires.
//
// Range names: in auto range mode CUPTI names the ranges "0", "1", ... in the order it
// profiles kernels on the context, not by kernel. End() therefore takes the launches the
// collector expects a range for (range_match.h: launches and graph replays from CUPTI's
// callbacks, captured launches left out), checks each range's CTA count against its
// launch's grid, and names range k after launch k only when every range lines up.
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
#include "profiler/cupti/range_match.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

// The metric plan for a chip, from a profiler host object made for it: base metrics of
// every type, ChooseMetrics(), then every full name checked against the chip's
// sub-metrics (KeepOffered). Works offline (a host object made from a chip name alone),
// which is how tests check it against the real libcupti without a GPU.
MetricPlan PlanMetricsOnHost(CuptiApi& api, CUpti_Profiler_Host_Object* host,
                             const std::string& chip, const std::vector<std::string>& extra,
                             MetricSet set = MetricSet::kDefault);

// Adds `metrics` to `host` in ONE ConfigAddMetrics call (see metric_plan.h for why one),
// makes the config image and counts the passes it needs. Internal when the image is empty
// or needs 0 passes (either would make the range profiler measure nothing).
CoreStatus MakeConfigImage(CuptiApi& api, CUpti_Profiler_Host_Object* host, const std::string& chip,
                           const std::vector<const char*>& metrics, std::vector<uint8_t>* image,
                           size_t* passes);

// The plan for `chip` and the passes it costs, from a host object made from the chip name
// alone: no GPU, no context, no counter availability image. What `qprof record` prints
// before the metrics pass, and what profiler_cupti_real_test asserts against libcupti.
struct PlanCost {
  MetricPlan plan;
  size_t passes = 0;
};
CoreStatus PlanCostOffline(CuptiApi& api, const std::string& chip, MetricSet set,
                           const std::vector<std::string>& extra, PlanCost* out);

struct RangeEndStats {
  uint64_t ranges = 0;          // ranges decoded
  uint64_t ranges_named = 0;    // ... given to their kernel (with metrics)
  uint64_t ranges_refused = 0;  // ... not matched to a launch, or not evaluated
  uint64_t ranges_dropped = 0;  // kernels past max_kernels
  uint64_t graph_launches_refused = 0;  // graph launches whose ranges did not fit
  uint64_t neighbours_refused = 0;      // ranges of launches that could not be told apart
  LaunchKindCounts eager, graph;        // expected and recorded, per kind of launch
  std::vector<std::string> graph_ranges;  // per session: what graph launches made
  uint64_t counter_data_bytes = 0;      // largest counter data image of a session
};

class RangeProfilerSession {
 public:
  RangeProfilerSession(CuptiApi& api, size_t max_kernels, std::vector<std::string> extra_metrics,
                       MetricSet set = MetricSet::kDefault)
      : api_(api), max_kernels_(max_kernels), extra_metrics_(std::move(extra_metrics)), set_(set) {}
  ~RangeProfilerSession();
  RangeProfilerSession(const RangeProfilerSession&) = delete;
  RangeProfilerSession& operator=(const RangeProfilerSession&) = delete;

  // Sets everything up on `ctx` and starts profiling; pushes the range (Open) unless
  // `open` is false. PermissionDenied when counters are not allowed, Unimplemented when
  // the chip offers none of the metrics, Internal when the config image comes out empty.
  CoreStatus Begin(CUcontext ctx, bool open = true);
  // Pushes / pops the range kernels are profiled in (no-ops when already so). Kernels
  // launched while it is closed make no range.
  CoreStatus Open();
  CoreStatus Close();
  bool is_open() const { return pushed_; }
  // Pops the range, stops, decodes and appends one kernel activity per range that
  // MatchRanges (range_match.h) gives to a launch of `launches`; ranges it refuses are
  // counted, and why goes to *refused (when not null) and `warnings`. No-op when not begun.
  CoreStatus End(const LaunchSequence& launches, std::vector<ActivityData>* out,
                 std::vector<std::string>* warnings, RangeEndStats* stats,
                 std::string* refused = nullptr);

  bool active() const { return object_ != nullptr; }
  CUcontext context() const { return ctx_; }
  const MetricPlan& plan() const { return plan_; }
  const std::string& chip() const { return chip_; }
  uint32_t device() const { return device_; }
  // Counter passes of the config image: every kernel is replayed this many times.
  size_t passes() const { return passes_; }
  size_t counter_data_bytes() const { return counter_data_.size(); }

 private:
  CoreStatus BeginImpl(CUcontext ctx, bool open);
  CoreStatus EnableAndStart(CUcontext ctx);
  void Teardown();

  CuptiApi& api_;
  const size_t max_kernels_;
  const std::vector<std::string> extra_metrics_;
  const MetricSet set_;
  CUcontext ctx_ = nullptr;
  uint32_t device_ = 0;
  std::string chip_;
  MetricPlan plan_;
  std::vector<const char*> metric_ptrs_;
  std::vector<uint8_t> availability_;
  std::vector<uint8_t> config_;
  std::vector<uint8_t> counter_data_;
  size_t passes_ = 0;
  bool pushed_ = false;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_RANGE_PROFILER_H_
