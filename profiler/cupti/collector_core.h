// The CUPTI collector's engine, shared by the in-process collector (cupti_collector.h,
// which adds Abseil statuses and protobuf output) and the injection library (which
// streams records into a .qtrace with trace_wire.h). No Abseil, no protobuf here.
//
// Trace mode: activity records (kernels, copies, memsets, API calls, NVTX markers) in
// buffers from a capped pool; replayed CUDA-graph kernels get the NVTX path their node was
// captured under (capture_paths.h). Metrics mode: per-kernel counters from the range
// profiler, one session per CUDA context and at most one per device at a time, each range
// tied to the launch it measured from CUPTI's launch, capture and graph callbacks or
// refused (range_match.h, graph_tracker.h; collector_launches.cc).
//
// Threads and what each may do:
//  - CUPTI's threads (and application threads when a buffer fills) call
//    BufferRequested/BufferCompleted. These only take a buffer from the pool, or count
//    dropped records and queue the completed buffer for the worker: no decoding, no
//    demangling, no lock held while calling CUPTI (cuptiActivityGetNumDroppedRecords
//    re-enters CUPTI, which may hold its own locks while calling us).
//  - The worker thread walks queued buffers (cuptiActivityGetNextRecord), decodes them,
//    returns them to the pool and hands ready records to options.on_batch. With
//    flush_period_ms it also asks CUPTI for completed buffers that often (a default
//    flush, which CUPTI documents as meant for a separate thread).
//  - The application thread runs Start/Stop and CUPTI's API and resource callbacks.
// Lock order: queue_mu_ and decoder_mu_ are never held together, metrics_mu_ is never
// held while either is taken, graph_events_mu_ and the GraphTracker's lock are leaves
// (nothing is taken while one is held), and no lock of ours is held across a CUPTI call
// that may call back (flush, disable, unsubscribe).
//
// Stop() order (as Kineto does it): disable the activity kinds, force-flush, wait until
// every BufferCompleted already running on a CUPTI thread has returned, then refuse new
// buffers and drain the worker. A buffer completed after that is counted (buffers_late)
// and freed, never decoded into a finished trace; one never handed back at all (another
// tool registered its own buffer callbacks and took it) is counted too. A context being destroyed (cudaDeviceReset, a
// temporary context, one GPU of several) does not stop tracing; in metrics mode it ends
// that context's range-profiler session, whose counters die with the context.
//
// CUPTI's buffer callbacks carry no user pointer, so the running collector is found
// through one process-wide pointer: one CollectorCore runs per process at a time.
// Nothing here throws into CUPTI or exits the process.
#ifndef QPROF_PROFILER_CUPTI_COLLECTOR_CORE_H_
#define QPROF_PROFILER_CUPTI_COLLECTOR_CORE_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "profiler/capture_range.h"
#include "profiler/core_status.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/buffer_pool.h"
#include "profiler/cupti/collector_stats.h"
#include "profiler/cupti/cupti_api.h"
#include "profiler/cupti/graph_tracker.h"
#include "profiler/cupti/range_match.h"
#include "profiler/cupti/range_profiler.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

// The oldest libcupti the collector runs with: 13.0 Update 1 fixed a deadlock in
// cuptiActivityDisable(CONCURRENT_KERNEL) and a crash in cuptiActivityFlushAll.
inline constexpr uint32_t kMinCuptiVersion = 130001;

struct CoreOptions {
  enum class Mode { kTrace, kMetrics };
  Mode mode = Mode::kTrace;
  // Activity buffers (see buffer_pool.h for why 8 MiB and the cap).
  size_t buffer_bytes = 8u << 20;
  size_t max_buffer_bytes = 256u << 20;
  // Only GPU records starting within this many seconds of Start() are kept; 0 = all.
  double duration_s = 0;
  // GPU records kept (in-memory users); later ones are counted as over the cap.
  uint64_t max_activities = UINT64_MAX;
  // Metrics mode: kernels profiled per context, and extra metric full names.
  size_t max_metric_kernels = 2048;
  std::vector<std::string> extra_metrics;
  // Metrics mode: the cheap default set (about three passes) or everything (metric_plan.h).
  MetricSet metric_set = MetricSet::kDefault;
  // Point NVTX_INJECTION64_PATH at libcupti when it is unset (NVTX reaches CUPTI only
  // through it). False: leave NVTX alone and trace no markers.
  bool route_nvtx = true;
  // Start() runs inside cuInit (InitializeInjection): it must not call the driver.
  bool in_driver_init = false;
  // When another CUPTI client holds the subscriber: false (default) records nothing,
  // since registering activity buffers would take that client's records (Kineto,
  // Nsight Systems); true traces activity anyway, without callbacks.
  bool activity_without_subscriber = false;
  // > 0: the worker asks CUPTI for completed buffers this often (streaming writers).
  int flush_period_ms = 0;
  // Called on the worker thread with records ready for the trace. When empty, records
  // are kept until TakeRemaining().
  std::function<void(DecodedBatch&)> on_batch;
  // Called on the application thread when a CUDA context is about to be destroyed.
  std::function<void()> on_context_teardown;
  // Capture ranges and the start delay (capture_range.h): only GPU work launched inside
  // them is recorded (trace mode: the decoder drops the rest, counted in
  // records_outside_window; metrics mode: the range profiler's range is pushed only while
  // one is open, so nothing else is profiled).
  CaptureSpec capture;
  // Called on the application thread, inside a CUPTI callback, when the last capture range
  // the spec allows has ended (`shutdown`: the spec ends the program too). It must only
  // hand the work to another thread: Stop() cannot run inside a callback.
  std::function<void(bool shutdown)> on_capture_done;
};

class CollectorCore {
 public:
  CollectorCore(CuptiApi& api, CoreOptions options);
  ~CollectorCore();
  CollectorCore(const CollectorCore&) = delete;
  CollectorCore& operator=(const CollectorCore&) = delete;

  // Unavailable: no driver. FailedPrecondition: libcupti too old, another collector
  // running, or another CUPTI client holds the subscriber (see CoreOptions). Metrics
  // failures (no permission, unsupported chip) are not errors here: they are reported in
  // the statistics.
  CoreStatus Start();
  // Disables, flushes, waits for running buffer callbacks, drains the worker, ends the
  // metrics sessions and reads the GPUs' properties. Idempotent.
  CoreStatus Stop();
  // After Stop(): every record not yet handed to on_batch (the held ones unattributed,
  // open NVTX ranges closed), the metrics pass's kernels, and the devices.
  void TakeRemaining(DecodedBatch* out);
  // Statistics for the trace; `records_written`: activities the caller wrote in total.
  void FillStats(uint64_t records_written, CollectorStatsData* out);
  // Reads the GPUs' properties now (driver calls: not inside cuInit). Also done by Stop.
  std::vector<DeviceData> ReadDevices();

  bool started() const { return started_; }
  bool stopped() const { return stopped_; }
  bool metrics_mode() const { return options_.mode == CoreOptions::Mode::kMetrics; }
  const std::string& subscriber_conflict() const { return subscriber_conflict_; }

  // In a child forked from a process running a collector: CUPTI's and our threads are
  // gone and inherited locks may be held forever, so every callback of ours returns at
  // once from now on. Async-signal-safe (one atomic store).
  static void DisableAfterFork();

  // Metrics mode: launches held for naming ranges, over every context (for tests: the
  // hold is bounded by max_metric_kernels per context).
  size_t metric_launches_held();
  // Metrics mode: ranges expected and recorded per kind of launch, over ended sessions
  // (what the device check prints).
  RangeEndStats metric_range_stats();
  // The capture ranges seen ("" entries when no capture range or delay was asked for):
  // capture_range, capture_range_end, capture_ranges (how many opened), capture_windows_ns.
  std::map<std::string, std::string> CaptureSummary() const;

 private:
  friend struct CoreCallbacks;

  CoreStatus CheckVersion();
  CoreStatus Subscribe();
  CoreStatus StartTrace();
  void StartMetrics();
  void StopTrace(CoreStatus* result);
  void WorkerLoop();
  void DecodeQueued(std::vector<std::pair<uint8_t*, size_t>>* buffers);
  void OnBufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid);
  void OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  // Launches, captures and graphs (collector_launches.cc).
  void OnDriverCallback(CUpti_CallbackId cbid, const CUpti_CallbackData& data);
  void OnGraphResource(CUpti_CallbackId cbid, const CUpti_GraphData& graph);
  // Capture ranges (collector_capture.cc).
  void StartCapture();
  void OnNvtxCallback(CUpti_CallbackId cbid, const void* data);
  void OnProfilerApi(CUpti_CallbackId cbid, const CUpti_CallbackData& data);
  void OnCaptureChange(CaptureGate::Change change);
  // Metrics mode: the session of `ctx` profiles only while the gate is open (pushes or
  // pops its range). Called at every launch's enter callback when a gate exists.
  void SyncSessionWithGate(CUcontext ctx);
  int64_t Now();
  void ApplyGraphEvents();  // hands graph events to the decoder; takes decoder_mu_
  // Metrics sessions (collector_launches.cc).
  void BeginMetricsOn(CUcontext ctx);
  void EndMetricsOn(CUcontext ctx);
  void BeginMetricsLocked(CUcontext ctx);  // callers hold metrics_mu_
  void EndMetricsLocked(CUcontext ctx);
  void RecordLaunchLocked(CUcontext ctx, const std::string& kernel, LaunchShape shape,
                          uint64_t thread);
  void RecordGraphLaunchLocked(CUcontext ctx, const GraphKernels* graph, uint64_t thread);
  std::string ContextName(CUcontext ctx);   // "context 2 (device 0)"; metrics_mu_ held
  void SetMetricsFailure(const CoreStatus& failure);
  void WaitForCallbacks();

  CuptiApi& api_;
  const CoreOptions options_;
  BufferPool pool_;
  uint32_t cupti_version_ = 0;

  // Completed buffers waiting for the worker.
  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<std::pair<uint8_t*, size_t>> queue_;
  bool accepting_ = true;       // false once the worker drained for the last time
  bool stop_worker_ = false;
  std::unique_ptr<std::thread> worker_;

  std::mutex decoder_mu_;       // guards decoder_ and kept_
  ActivityDecoder decoder_;
  DecodedBatch kept_;           // ready records when there is no on_batch

  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> requested_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> late_{0};
  std::atomic<uint64_t> late_records_{0};
  std::atomic<uint64_t> read_short_{0};
  std::atomic<uint64_t> unread_bytes_{0};
  std::atomic<uint64_t> callback_errors_{0};
  std::atomic<uint64_t> launches_captured_{0};
  std::atomic<uint64_t> graph_launches_{0};
  uint64_t buffers_not_returned_ = 0;  // set by StopTrace

  // Graphs seen through callbacks (its own lock), and, in trace mode, what the decoder
  // must learn from them before it reads the records of the replays. graph_events_mu_ is
  // a leaf: nothing else is taken while it is held.
  struct GraphEvent {
    uint64_t node_id = 0;
    uint64_t original_id = 0;      // clone events
    uint32_t launch_correlation = 0;
    uint32_t capture_correlation = 0;
  };
  GraphTracker graphs_;
  // Capture ranges and the delay (null when neither was asked for); its own lock, a leaf.
  std::unique_ptr<CaptureGate> gate_;
  std::atomic<bool> capture_done_{false};
  std::mutex nvtx_domains_mu_;  // a leaf
  std::map<const void*, std::string> nvtx_domains_;  // nvtxDomainHandle_t -> name
  std::mutex graph_events_mu_;
  std::vector<GraphEvent> graph_events_;
  std::vector<CUpti_ActivityKind> enabled_;
  // Written by Start() before any other thread runs, later under metrics_mu_ (the worker
  // reads GPU properties, Stop() may add a line).
  std::vector<std::string> warnings_;
  std::string subscriber_conflict_;
  std::vector<DeviceData> devices_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool started_ = false;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> refusing_buffers_{false};  // set after the final flush; read on CUPTI threads

  std::mutex metrics_mu_;       // guards the fields below, devices_ and later warnings_
  bool profiler_initialized_ = false;
  std::map<CUcontext, std::unique_ptr<RangeProfilerSession>> sessions_;
  std::map<CUcontext, LaunchSequence> launches_;  // what each session's ranges should be
  // Contexts that got no session because another context of their device holds one
  // (CUPTI: one profiling session per device): context -> (device, launches missed).
  std::map<CUcontext, std::pair<uint32_t, uint64_t>> waiting_;
  std::map<CUcontext, int> context_numbers_;      // creation order, for messages
  std::vector<std::string> contexts_not_profiled_;
  std::vector<std::string> refused_reasons_;     // contexts whose ranges were refused
  uint64_t launches_past_limit_ = 0;
  std::vector<ActivityData> metric_kernels_;
  std::vector<std::string> metric_warnings_;
  std::vector<std::string> metrics_missing_;
  RangeEndStats range_stats_;
  CoreStatus metrics_failure_;
  uint64_t metric_sessions_ = 0;
  size_t metric_passes_ = 0;  // most passes of any session's config image
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_COLLECTOR_CORE_H_
