#include "profiler/cupti/collector_core.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>

#include "profiler/cupti/activity_buffer.h"
#include "profiler/cupti/collector_callbacks.h"
#include "profiler/cupti/cupti_call.h"
#include "profiler/cupti/device_info.h"
#include "profiler/cupti/metric_plan.h"

namespace qprof::profiler::cupti {
namespace {

// Runtime/driver calls that are frequent and never launch work: not traced, to keep the
// per-call overhead down (their records would only be thrown away).
constexpr CUpti_CallbackId kQuietRuntimeApis[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaPeekAtLastError_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaStreamIsCapturing_v10000,
};
constexpr CUpti_CallbackId kQuietDriverApis[] = {
    CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxGetState,
    CUPTI_DRIVER_TRACE_CBID_cuKernelGetAttribute,
    CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
};

// Optional kinds: a failure to enable one is a warning in the trace, not an error.
// MARKER must be enabled before MARKER_DATA (CUPTI requirement).
constexpr CUpti_ActivityKind kOptionalKinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE,  CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
};
constexpr CUpti_ActivityKind kNvtxKinds[] = {CUPTI_ACTIVITY_KIND_MARKER,
                                             CUPTI_ACTIVITY_KIND_MARKER_DATA};

// How long Stop() waits for buffer callbacks already running on CUPTI's threads.
constexpr auto kCallbackWait = std::chrono::seconds(10);

std::string VersionText(uint32_t v) {
  if (v < 100000) return "API " + std::to_string(v);
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace

CollectorCore::CollectorCore(CuptiApi& api, CoreOptions options)
    : api_(api), options_(std::move(options)),
      pool_(options_.buffer_bytes, options_.max_buffer_bytes) {
  decoder_.SetMaxActivities(options_.max_activities);
}

CollectorCore::~CollectorCore() {
  if (started_ && !stopped_) (void)Stop();
  ReleaseActive(this);  // waits for callbacks still inside this collector
  if (worker_ != nullptr && worker_->joinable()) {  // only if Stop() could not run
    {
      std::lock_guard<std::mutex> lock(queue_mu_);
      stop_worker_ = true;
    }
    queue_cv_.notify_all();
    worker_->join();
  }
  // Buffers still queued (never decoded) go back to the pool, which frees them.
  for (const auto& [buffer, valid] : queue_) {
    if (!pool_.Release(buffer)) std::free(buffer);
  }
}

void CollectorCore::DisableAfterFork() { DisableCallbacksAfterFork(); }

CoreStatus CollectorCore::CheckVersion() {
  if (api_.GetVersion(&cupti_version_) != CUPTI_SUCCESS) cupti_version_ = 0;
  if (cupti_version_ != 0 && cupti_version_ < kMinCuptiVersion) {
    return CoreStatus(CoreCode::kFailedPrecondition,
                      "libcupti " + VersionText(cupti_version_) + " (" + api_.LibraryPath() +
                      ") is older than 13.0.1, which fixed a deadlock in cuptiActivityDisable "
                      "and a crash in cuptiActivityFlushAll: use the libcupti of CUDA 13.0 "
                      "Update 1 or later (LD_LIBRARY_PATH)");
  }
  if (cupti_version_ > CUPTI_API_VERSION) {
    warnings_.push_back("libcupti " + VersionText(cupti_version_) + " is newer than the CUPTI " +
                        VersionText(CUPTI_API_VERSION) + " headers qprof was built with");
    LogWarning(warnings_.back());
  }
  return OkCore();
}

CoreStatus CollectorCore::Start() {
  if (started_) return CoreStatus(CoreCode::kFailedPrecondition, "CUPTI collector already started");
  if (!api_.DriverPresent()) {
    return CoreStatus(CoreCode::kUnavailable,
                      "no NVIDIA driver found (libcuda.so.1 cannot be loaded): CUPTI needs a GPU "
                      "and its driver; on a machine without one use --backend cpu or import a trace");
  }
  QPROF_CORE_RETURN_IF_ERROR(CheckVersion());
  if (!ClaimActive(this)) {
    return CoreStatus(CoreCode::kFailedPrecondition,
                      "another qprof CUPTI collector is already running in this process");
  }
  started_ = true;
  CoreStatus s = Subscribe();
  if (s.ok()) StartCapture();
  if (s.ok() && !metrics_mode()) s = StartTrace();
  if (s.ok() && metrics_mode()) StartMetrics();
  if (!s.ok()) {
    if (subscriber_ != nullptr) (void)QPROF_CUPTI_WARN(api_, api_.Unsubscribe(subscriber_));
    subscriber_ = nullptr;
    ReleaseActive(this);
    started_ = false;
  }
  return s;
}

CoreStatus CollectorCore::Subscribe() {
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {0};
  CUpti_SubscriberParams params = {CUpti_SubscriberParams_STRUCT_SIZE};
  params.subscriberName = "qprof";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name) - 1;
  const CUptiResult rc = api_.Subscribe(&subscriber_, &CoreCallbacks::OnCallback, this, &params);
  if (rc == CUPTI_SUCCESS) {
    (void)QPROF_CUPTI_WARN(api_, api_.EnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE));
    for (CUpti_CallbackId cbid : kDriverLaunchCallbacks) {
      (void)QPROF_CUPTI_WARN(api_, api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                                                       cbid));
    }
    for (CUpti_CallbackId cbid : kDriverGraphCallbacks) {
      (void)QPROF_CUPTI_WARN(api_, api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                                                       cbid));
    }
    return OkCore();
  }
  subscriber_ = nullptr;
  CoreStatus failure = CuptiCall(api_, rc, "cuptiSubscribe_v2", Severity::kFatal);
  if (rc != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED &&
      rc != CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED) {
    if (metrics_mode()) {
      SetMetricsFailure(failure);
      return OkCore();
    }
    return failure;
  }
  subscriber_conflict_ = old_name[0] != '\0' ? old_name : "another CUPTI client";
  const std::string who = "another CUPTI client (" + subscriber_conflict_ +
                          ") is attached to this process (Nsight Systems/Compute, "
                          "torch.profiler/Kineto, ...)";
  if (metrics_mode()) {
    SetMetricsFailure(CoreStatus(CoreCode::kFailedPrecondition, who));
    return OkCore();
  }
  if (!options_.activity_without_subscriber) {
    return CoreStatus(CoreCode::kFailedPrecondition,
                      who + ": qprof records nothing, since registering its activity buffers "
                      "would take that client's records; run the program without the other "
                      "profiler");
  }
  warnings_.push_back(who + ": activity traced without callbacks (the other client may lose "
                      "its records; no context teardown hooks)");
  LogWarning("warning: " + warnings_.back());
  return OkCore();
}

CoreStatus CollectorCore::StartTrace() {
  if (options_.route_nvtx) PointNvtxAtCupti(api_);
  // --delay then --duration: GPU records starting in [start + delay, + duration).
  const double delay_s = std::max(0.0, options_.capture.delay_s);
  if (options_.duration_s > 0 || delay_s > 0) {
    uint64_t now = 0;
    if (api_.GetTimestamp(&now) == CUPTI_SUCCESS) {
      const int64_t begin = static_cast<int64_t>(now + delay_s * 1e9);
      decoder_.SetWindow(begin, options_.duration_s > 0
                                    ? begin + static_cast<int64_t>(options_.duration_s * 1e9)
                                    : std::numeric_limits<int64_t>::max());
    }
  }
  // Capture ranges: only work launched inside one is kept.
  if (gate_ != nullptr && options_.capture.trigger != CaptureSpec::Trigger::kNone) {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    decoder_.SetCaptureGate(gate_.get());
  }
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(
      api_, api_.ActivityRegisterCallbacks(&CoreCallbacks::BufferRequested,
                                           &CoreCallbacks::BufferCompleted)));
  // Kernels are the point of the collector: failing to trace them is fatal.
  QPROF_CORE_RETURN_IF_ERROR(
      QPROF_CUPTI_FATAL(api_, api_.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)));
  enabled_.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::vector<CUpti_ActivityKind> kinds(std::begin(kOptionalKinds), std::end(kOptionalKinds));
  if (options_.route_nvtx) kinds.insert(kinds.end(), std::begin(kNvtxKinds), std::end(kNvtxKinds));
  bool api_records = false;
  for (CUpti_ActivityKind kind : kinds) {
    CoreStatus s = QPROF_CUPTI_WARN(api_, api_.ActivityEnable(kind));
    if (s.ok()) {
      enabled_.push_back(kind);
      api_records = api_records || kind == CUPTI_ACTIVITY_KIND_RUNTIME ||
                    kind == CUPTI_ACTIVITY_KIND_DRIVER;
    } else {
      warnings_.push_back("activity kind " + std::to_string(static_cast<int>(kind)) +
                          " not traced: " + s.message());
    }
  }
  {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    decoder_.SetExpectLaunchRecords(api_records);
  }
  for (CUpti_CallbackId cbid : kQuietRuntimeApis) {
    (void)QPROF_CUPTI_WARN(api_, api_.ActivityEnableRuntimeApi(cbid, 0));
  }
  for (CUpti_CallbackId cbid : kQuietDriverApis) {
    (void)QPROF_CUPTI_WARN(api_, api_.ActivityEnableDriverApi(cbid, 0));
  }
  // Last, once nothing can fail: buffers completed meanwhile wait in the queue for it.
  worker_ = std::make_unique<std::thread>([this] { WorkerLoop(); });
  return OkCore();
}

CoreStatus CollectorCore::Stop() {
  if (!started_) return CoreStatus(CoreCode::kFailedPrecondition, "CUPTI collector was not started");
  if (stopped_) return OkCore();
  stopped_ = true;
  CoreStatus result;
  if (metrics_mode()) {
    std::vector<CUcontext> contexts;
    {
      std::lock_guard<std::mutex> lock(metrics_mu_);
      for (const auto& [ctx, session] : sessions_) contexts.push_back(ctx);
      for (const auto& [ctx, waiting] : waiting_) contexts.push_back(ctx);
    }
    for (CUcontext ctx : contexts) EndMetricsOn(ctx);
    std::lock_guard<std::mutex> lock(metrics_mu_);
    if (profiler_initialized_) {
      CUpti_Profiler_DeInitialize_Params p = {CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
      (void)QPROF_CUPTI_WARN(api_, api_.ProfilerDeInitialize(&p));
      profiler_initialized_ = false;
    }
  } else {
    StopTrace(&result);
  }
  (void)ReadDevices();
  // Unsubscribing from inside one of our own callbacks would deadlock.
  if (subscriber_ != nullptr && !InOurCallback()) {
    (void)QPROF_CUPTI_WARN(api_, api_.Unsubscribe(subscriber_));
    subscriber_ = nullptr;
  }
  return result;
}

void CollectorCore::StopTrace(CoreStatus* result) {
  // Disable first, then force-flush (Kineto's order): nothing new is recorded while the
  // last buffers come back. Not under any lock of ours: the flush calls BufferCompleted.
  for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) {
    (void)QPROF_CUPTI_WARN(api_, api_.ActivityDisable(*it));
  }
  *result = QPROF_CUPTI_FATAL(api_, api_.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  WaitForCallbacks();
  refusing_buffers_ = true;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    stop_worker_ = true;
  }
  queue_cv_.notify_all();
  if (worker_ != nullptr && worker_->joinable()) worker_->join();
  worker_.reset();
  // Drops counted after the last buffer came back are seen only here.
  size_t dropped = 0;
  if (api_.ActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
  // Every buffer CUPTI held was handed back by the forced flush and decoded or counted as
  // late: one still out went to another tool's completion callback.
  buffers_not_returned_ = pool_.outstanding();
}

void CollectorCore::WaitForCallbacks() {
  if (!WaitForCallbacksToReturn(kCallbackWait)) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    warnings_.push_back("a CUPTI buffer callback was still running 10 s after the final "
                        "flush; its records may be missing");
  }
}

void CollectorCore::WorkerLoop() {
  std::vector<std::pair<uint8_t*, size_t>> buffers;
  for (;;) {
    bool flush = false;
    {
      std::unique_lock<std::mutex> lock(queue_mu_);
      auto ready = [this] { return !queue_.empty() || stop_worker_; };
      if (options_.flush_period_ms > 0) {
        flush = !queue_cv_.wait_for(lock, std::chrono::milliseconds(options_.flush_period_ms),
                                    ready);
      } else {
        queue_cv_.wait(lock, ready);
      }
      if (queue_.empty() && stop_worker_) {
        accepting_ = false;  // from here on a completed buffer is late
        return;
      }
      buffers.assign(queue_.begin(), queue_.end());
      queue_.clear();
    }
    if (flush) {
      // A default flush hands back the buffers whose records are all complete; their
      // BufferCompleted calls queue them for the next round.
      (void)api_.ActivityFlushAll(0);
      continue;
    }
    DecodeQueued(&buffers);
  }
}

void CollectorCore::DecodeQueued(std::vector<std::pair<uint8_t*, size_t>>* buffers) {
  // Graph nodes announced by callbacks before these buffers were completed: the decoder
  // must know them before it reads the replays' records.
  ApplyGraphEvents();
  DecodedBatch batch;
  {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    for (const auto& [buffer, valid] : *buffers) {
      const BufferWalk walk = DecodeActivityBuffer(api_, buffer, valid, &decoder_);
      if (walk.read_short()) {
        read_short_.fetch_add(1, std::memory_order_relaxed);
        unread_bytes_.fetch_add(walk.unread_bytes, std::memory_order_relaxed);
      }
    }
    decoder_.TakeReady(&batch, /*final=*/false);
  }
  for (const auto& [buffer, valid] : *buffers) {
    if (!pool_.Release(buffer)) std::free(buffer);
  }
  buffers->clear();
  {
    std::lock_guard<std::mutex> lock(metrics_mu_);  // devices_ shares the metrics lock
    MergeDevices(std::move(batch.devices), &devices_);
    batch.devices.clear();
  }
  if (options_.on_batch) {
    if (!batch.activities.empty() || !batch.ranges.empty()) options_.on_batch(batch);
  } else {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    for (ActivityData& a : batch.activities) kept_.activities.push_back(std::move(a));
    for (RangeData& r : batch.ranges) kept_.ranges.push_back(std::move(r));
  }
}

std::vector<DeviceData> CollectorCore::ReadDevices() {
  std::string why;
  std::vector<DeviceData> read = ReadDeviceProperties(api_, &why);
  std::lock_guard<std::mutex> lock(metrics_mu_);
  if (read.empty() && !why.empty() && devices_.empty()) {
    bool seen = false;
    for (const std::string& w : warnings_) seen = seen || w == why;
    if (!seen) warnings_.push_back(why);
  }
  // The driver's view first: it has the memory bandwidth CUPTI's DEVICE record lacks
  // when a context was created before the collector started.
  std::vector<DeviceData> merged = std::move(read);
  MergeDevices(devices_, &merged);
  devices_ = merged;
  return merged;
}

void CollectorCore::TakeRemaining(DecodedBatch* out) {
  ApplyGraphEvents();
  {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    for (ActivityData& a : kept_.activities) out->activities.push_back(std::move(a));
    for (RangeData& r : kept_.ranges) out->ranges.push_back(std::move(r));
    kept_.clear();
    decoder_.TakeReady(out, /*final=*/true);
  }
  std::lock_guard<std::mutex> lock(metrics_mu_);
  MergeDevices(std::move(out->devices), &devices_);
  out->devices = devices_;
  for (ActivityData& a : metric_kernels_) out->activities.push_back(std::move(a));
  metric_kernels_.clear();
}

void CollectorCore::FillStats(uint64_t records_written, CollectorStatsData* s) {
  CollectorCounters c;
  c.records_dropped = dropped_.load();
  c.buffers_requested = requested_.load();
  c.buffers_refused = pool_.refused();
  c.buffers_completed = completed_.load();
  c.buffers_late = late_.load();
  c.late_records = late_records_.load();
  c.buffers_read_short = read_short_.load();
  c.unread_bytes = unread_bytes_.load();
  c.buffers_allocated = pool_.allocated();
  c.buffer_bytes = pool_.bytes_held();
  c.cap_bytes = options_.max_buffer_bytes;
  c.callback_errors = callback_errors_.load();
  c.launches_captured = launches_captured_.load();
  c.graph_launches = graph_launches_.load();
  c.buffers_not_returned = buffers_not_returned_;
  {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    c.warnings = warnings_;
  }
  DecoderStats d;
  uint64_t unclosed = 0;
  {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    d = decoder_.stats();
    unclosed = decoder_.nvtx().unclosed();
  }
  s->collector = metrics_mode() ? "cupti-metrics" : "cupti";
  FillCollectorStats(c, d, records_written, s);
  if (unclosed > 0) {
    s->warnings.push_back(std::to_string(unclosed) +
                          " NVTX ranges were still open at the end; closed at the last timestamp");
  }
  if (gate_ != nullptr && options_.capture.trigger != CaptureSpec::Trigger::kNone &&
      gate_->windows().empty()) {
    s->warnings.push_back("capture range " + options_.capture.Describe() + " never started: "
                          "nothing was recorded (" +
                          (options_.capture.trigger == CaptureSpec::Trigger::kProfilerApi
                               ? std::string("the program never called cudaProfilerStart")
                               : "no NVTX range named " + options_.capture.nvtx_name +
                                     " was opened") + ")");
  }
  s->cupti_version = cupti_version_;
  s->cupti_header_version = CUPTI_API_VERSION;
  s->subscriber_conflict = subscriber_conflict_;
  if (!metrics_mode()) return;
  std::lock_guard<std::mutex> lock(metrics_mu_);
  s->metrics_requested = true;
  CuptiDetailData& detail = s->cupti_detail ? *s->cupti_detail : s->cupti_detail.emplace();
  detail.metric_set = MetricSetName(options_.metric_set);
  detail.metric_passes = static_cast<uint32_t>(metric_passes_);
  detail.metric_ranges = range_stats_.ranges;
  detail.metric_ranges_refused = range_stats_.ranges_refused;
  detail.metric_launches_past_limit = launches_past_limit_;
  detail.contexts_not_profiled = contexts_not_profiled_;
  s->metrics_available = metrics_failure_.ok() && range_stats_.ranges_named > 0;
  if (!metrics_failure_.ok()) {
    s->metrics_unavailable_reason = MetricsUnavailableReason(metrics_failure_);
  } else if (range_stats_.ranges == 0) {
    const uint64_t expected = range_stats_.eager.ranges_expected + range_stats_.graph.ranges_expected;
    s->metrics_unavailable_reason =
        metric_sessions_ == 0 ? "no CUDA context was created while the metrics collector ran"
        : expected > 0
            ? "CUPTI recorded no range for the " + std::to_string(expected) +
                  " kernels launched inside the profiled range (" +
                  std::to_string(range_stats_.eager.launches) + " eager launches, " +
                  std::to_string(range_stats_.graph.launches) + " graph launches)"
            : "no kernel ran while the range profiler was active";
  } else if (range_stats_.ranges_named == 0) {
    std::string why;
    for (const std::string& r : refused_reasons_) why += (why.empty() ? "" : "; ") + r;
    s->metrics_unavailable_reason = "no range could be tied to its kernel: " +
                                    (why.empty() ? std::string("none evaluated") : why);
  }
  for (const std::string& c : contexts_not_profiled_) s->warnings.push_back(c);
  for (const std::string& w : metric_warnings_) s->warnings.push_back(w);
  for (const std::string& m : metrics_missing_) s->metrics_missing.push_back(m);
}

}  // namespace qprof::profiler::cupti
