// The CUPTI collector's engine, shared by the in-process collector (cupti_collector.h,
// which adds Abseil statuses and protobuf output) and the injection library (which
// streams records into a .qtrace with trace_wire.h). No Abseil, no protobuf here.
//
// Trace mode: activity records (kernels, copies, memsets, API calls, NVTX markers) in
// buffers from a capped pool. Metrics mode: per-kernel counters from the range profiler,
// one session per CUDA context, kernels named from the driver's launch callbacks.
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
// held while either is taken, and no lock of ours is held across a CUPTI call that may
// call back (flush, disable, unsubscribe).
//
// Stop() order (as Kineto does it): disable the activity kinds, force-flush, wait until
// every BufferCompleted already running on a CUPTI thread has returned, then drain the
// worker. A buffer completed after that is counted (buffers_late) and freed, never
// decoded into a finished trace. A context being destroyed (cudaDeviceReset, a
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

#include "profiler/core_status.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/buffer_pool.h"
#include "profiler/cupti/collector_stats.h"
#include "profiler/cupti/cupti_api.h"
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
  void BeginMetricsOn(CUcontext ctx);
  void EndMetricsOn(CUcontext ctx);
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
  std::vector<CUpti_ActivityKind> enabled_;
  // Written by Start() before any other thread runs, later under metrics_mu_ (the worker
  // reads GPU properties, Stop() may add a line).
  std::vector<std::string> warnings_;
  std::string subscriber_conflict_;
  std::vector<DeviceData> devices_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool started_ = false;
  std::atomic<bool> stopped_{false};  // read by BufferRequested on CUPTI threads

  std::mutex metrics_mu_;       // guards the fields below, devices_ and later warnings_
  bool profiler_initialized_ = false;
  std::map<CUcontext, std::unique_ptr<RangeProfilerSession>> sessions_;
  std::map<CUcontext, std::vector<std::string>> launches_;  // kernel names, launch order
  std::vector<ActivityData> metric_kernels_;
  std::vector<std::string> metric_warnings_;
  std::vector<std::string> metrics_missing_;
  RangeEndStats range_stats_;
  CoreStatus metrics_failure_;
  uint64_t metric_sessions_ = 0;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_COLLECTOR_CORE_H_
