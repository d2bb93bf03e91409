// CUPTI collector implementation. Concurrency notes:
//  - CUPTI calls BufferRequested/BufferCompleted on its own threads (and on application
//    threads when a buffer fills). They only touch the pool (own lock) and the decoder
//    (decoder_mu_); they never call CUDA, never flush and never throw.
//  - cuptiActivityGetNumDroppedRecords is called before taking decoder_mu_: CUPTI may hold
//    internal locks while it calls us, so no CUPTI call happens under our lock.
//  - cuptiActivityFlushAll runs only from Stop() and from the context-teardown callback
//    (an API callback on the application thread), never under decoder_mu_, since the
//    flush calls BufferCompleted, which takes it.
//  - CUPTI's buffer callbacks carry no user pointer, so the running collector is found
//    through g_active; one collector runs per process.
#include "profiler/cupti/cupti_collector.h"

#include <cupti.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <chrono>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "profiler/cupti/activity_buffer.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/buffer_pool.h"
#include "profiler/cupti/collector_stats.h"
#include "profiler/cupti/cupti_call.h"
#include "profiler/cupti/metric_plan.h"
#include "profiler/cupti/range_profiler.h"

namespace qprof::profiler::cupti {
namespace {

class CuptiCollector;
std::atomic<CuptiCollector*> g_active{nullptr};
thread_local bool t_in_callback = false;

// The driver must be present before CUPTI can do anything; checking it first turns
// "no GPU here" into one clear message instead of a CUPTI error code.
absl::Status CheckDriver() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    return absl::UnavailableError(
        "no NVIDIA driver found (libcuda.so.1 cannot be loaded): CUPTI needs a GPU and its "
        "driver; on a machine without one use --backend cpu or import a trace");
  }
  return absl::OkStatus();
}

// The current context if the application already made one (in-process use), found
// without linking libcuda: it is loaded by then.
CUcontext CurrentContext() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  using GetCurrent = CUresult (*)(CUcontext*);
  auto fn = reinterpret_cast<GetCurrent>(dlsym(handle, "cuCtxGetCurrent"));
  CUcontext ctx = nullptr;
  if (fn == nullptr || fn(&ctx) != CUDA_SUCCESS) ctx = nullptr;
  return ctx;
}

// CUPTI sees NVTX ranges only when NVTX's injection hook points at libcupti
// (NVTX_INJECTION64_PATH, read by NVTX at its first call). Point it at the libcupti we
// are linked with unless the user chose something else.
void PointNvtxAtCuptiImpl() {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 &&
      info.dli_fname != nullptr) {
    setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
  }
}

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
    CUPTI_ACTIVITY_KIND_MARKER,  CUPTI_ACTIVITY_KIND_MARKER_DATA,
};

class CuptiCollector : public Collector {
 public:
  explicit CuptiCollector(const CuptiOptions& options)
      : options_(options), pool_(options.buffer_bytes, options.max_buffer_bytes) {}
  ~CuptiCollector() override {
    if (started_ && !stopped_) (void)Stop();
  }

  absl::Status Start() override;
  absl::Status Stop() override;
  absl::Status Flush(proto::Trace* trace) override;

 private:
  bool metrics_mode() const { return options_.mode == CuptiOptions::Mode::kMetrics; }
  absl::Status StartTrace();
  void SetMetricsFailure(const absl::Status& failure);
  void EndMetrics();
  void OnContextTeardown();

  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  static void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                  CUpti_CallbackId cbid, const void* data);

  const CuptiOptions options_;
  BufferPool pool_;
  std::mutex decoder_mu_;               // guards decoder_
  ActivityDecoder decoder_;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> callback_errors_{0};
  std::atomic<uint64_t> buffer_errors_{0};  // buffers whose walk stopped on an error
  std::vector<CUpti_ActivityKind> enabled_;
  std::vector<std::string> warnings_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  bool started_ = false;
  bool stopped_ = false;
  bool flushed_ = false;
  std::atomic<bool> torn_down_{false};

  std::mutex metrics_mu_;               // guards the fields below
  std::unique_ptr<RangeProfilerSession> range_;
  std::vector<proto::Activity> metric_kernels_;
  std::vector<std::string> metric_warnings_;
  absl::Status metrics_failure_;
  bool metrics_hint_printed_ = false;
};

void CUPTIAPI CuptiCollector::BufferRequested(uint8_t** buffer, size_t* size,
                                              size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // fill the buffer with as many records as fit
  CuptiCollector* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr) return;  // CUPTI drops (and counts) what it cannot store
  try {
    uint8_t* b = self->pool_.Acquire();
    if (b != nullptr) {
      *buffer = b;
      *size = self->pool_.buffer_bytes();
    }
  } catch (...) {
    self->callback_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CUPTIAPI CuptiCollector::BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer,
                                              size_t /*size*/, size_t valid_size) {
  CuptiCollector* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr || buffer == nullptr) return;  // the pool frees it at destruction
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) {
    self->dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
  try {
    std::lock_guard<std::mutex> lock(self->decoder_mu_);
    if (!DecodeActivityBuffer(buffer, valid_size, &self->decoder_).clean_end) {
      self->buffer_errors_.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (...) {
    self->callback_errors_.fetch_add(1, std::memory_order_relaxed);
  }
  self->pool_.Release(buffer);
}

void CUPTIAPI CuptiCollector::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid, const void* data) {
  auto* self = static_cast<CuptiCollector*>(userdata);
  if (self == nullptr || data == nullptr) return;
  t_in_callback = true;
  try {
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
      const auto* resource = static_cast<const CUpti_ResourceData*>(data);
      if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && self->metrics_mode()) {
        std::lock_guard<std::mutex> lock(self->metrics_mu_);
        if (self->range_ != nullptr && !self->range_->active() && self->metrics_failure_.ok()) {
          absl::Status s = self->range_->Begin(resource->context);
          if (!s.ok()) self->SetMetricsFailure(s);
        }
      } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        self->OnContextTeardown();
      }
    } else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
               cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
      const auto* api = static_cast<const CUpti_CallbackData*>(data);
      if (api->callbackSite == CUPTI_API_ENTER) self->OnContextTeardown();
    }
  } catch (...) {
    self->callback_errors_.fetch_add(1, std::memory_order_relaxed);
  }
  t_in_callback = false;
}

// On the application thread, inside cudaDeviceReset or a context destroy: the last
// chance to read this context's records and counters.
void CuptiCollector::OnContextTeardown() {
  if (torn_down_.exchange(true)) return;
  if (metrics_mode()) {
    EndMetrics();
  } else {
    (void)QPROF_CUPTI_WARN(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  }
  if (options_.on_context_teardown) options_.on_context_teardown();
}

void CuptiCollector::SetMetricsFailure(const absl::Status& failure) {
  metrics_failure_ = failure;
  if (!metrics_hint_printed_) {
    metrics_hint_printed_ = true;
    LogWarning(MetricsUnavailableReason(failure));
  }
}

void CuptiCollector::EndMetrics() {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  if (range_ == nullptr) return;
  absl::Status s = range_->End(&metric_kernels_, &metric_warnings_);
  if (!s.ok() && metrics_failure_.ok()) SetMetricsFailure(s);
  range_.reset();
}

absl::Status CuptiCollector::Start() {
  if (started_) return absl::FailedPreconditionError("CUPTI collector already started");
  RETURN_IF_ERROR(CheckDriver());
  CuptiCollector* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this)) {
    return absl::FailedPreconditionError(
        "another qprof CUPTI collector is already running in this process");
  }
  started_ = true;

  // The subscriber gives us context creation/teardown and cudaDeviceReset. Another CUPTI
  // client (nsys, ncu, torch.profiler) makes this fail: trace mode goes on without the
  // teardown hook; metrics mode reports metrics unavailable.
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {0};
  CUpti_SubscriberParams params = {CUpti_SubscriberParams_STRUCT_SIZE};
  params.subscriberName = "qprof";
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name) - 1;
  absl::Status sub = QPROF_CUPTI_FATAL(cuptiSubscribe_v2(&subscriber_, OnCallback, this, &params));
  if (!sub.ok()) {
    subscriber_ = nullptr;
    if (old_name[0] != '\0') sub = absl::Status(sub.code(), absl::StrCat(sub.message(), " (held by ", old_name, ")"));
    warnings_.push_back(absl::StrCat("no CUPTI subscriber: ", sub.message()));
    LogWarning(absl::StrCat("warning: ", sub.message()));
  } else {
    (void)QPROF_CUPTI_WARN(cuptiEnableDomain(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE));
    (void)QPROF_CUPTI_WARN(cuptiEnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API,
                                               CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020));
  }

  if (metrics_mode()) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    range_ = std::make_unique<RangeProfilerSession>(options_.max_metric_kernels,
                                                    options_.extra_metrics);
    if (!sub.ok()) {
      SetMetricsFailure(sub);
    } else if (CUcontext ctx = CurrentContext(); ctx != nullptr) {
      absl::Status s = range_->Begin(ctx);
      if (!s.ok()) SetMetricsFailure(s);
    }  // else: the CONTEXT_CREATED callback begins the session
    return absl::OkStatus();  // a metrics failure is reported in the trace, not here
  }
  absl::Status trace = StartTrace();
  if (!trace.ok()) {
    if (subscriber_ != nullptr) (void)QPROF_CUPTI_WARN(cuptiUnsubscribe(subscriber_));
    subscriber_ = nullptr;
    g_active.store(nullptr);
    started_ = false;
  }
  return trace;
}

absl::Status CuptiCollector::StartTrace() {
  PointNvtxAtCuptiImpl();
  if (options_.duration_s > 0) {
    uint64_t now = 0;
    if (cuptiGetTimestamp(&now) == CUPTI_SUCCESS) {
      decoder_.SetWindow(static_cast<int64_t>(now),
                         static_cast<int64_t>(now + options_.duration_s * 1e9));
    }
  }
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted)));
  // Kernels are the point of the collector: failing to trace them is fatal.
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)));
  enabled_.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  for (CUpti_ActivityKind kind : kOptionalKinds) {
    absl::Status s = QPROF_CUPTI_WARN(cuptiActivityEnable(kind));
    if (s.ok()) {
      enabled_.push_back(kind);
    } else {
      warnings_.push_back(absl::StrCat("activity kind ", static_cast<int>(kind),
                                       " not traced: ", s.message()));
    }
  }
  for (CUpti_CallbackId cbid : kQuietRuntimeApis) {
    (void)QPROF_CUPTI_WARN(cuptiActivityEnableRuntimeApi(cbid, 0));
  }
  for (CUpti_CallbackId cbid : kQuietDriverApis) {
    (void)QPROF_CUPTI_WARN(cuptiActivityEnableDriverApi(cbid, 0));
  }
  return absl::OkStatus();
}

absl::Status CuptiCollector::Stop() {
  if (!started_) return absl::FailedPreconditionError("CUPTI collector was not started");
  if (stopped_) return absl::OkStatus();
  stopped_ = true;
  absl::Status result;
  if (metrics_mode()) {
    EndMetrics();
  } else {
    // Forced: also returns buffers that are only partly filled. Not under any lock of
    // ours: the flush calls BufferCompleted.
    result = QPROF_CUPTI_FATAL(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) {
      (void)QPROF_CUPTI_WARN(cuptiActivityDisable(*it));
    }
    size_t dropped = 0;  // records dropped outside any context/stream queue
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
      dropped_.fetch_add(dropped, std::memory_order_relaxed);
    }
  }
  // Unsubscribing from inside one of our own callbacks (teardown path) would deadlock.
  if (subscriber_ != nullptr && !t_in_callback) {
    (void)QPROF_CUPTI_WARN(cuptiUnsubscribe(subscriber_));
    subscriber_ = nullptr;
  }
  g_active.store(nullptr, std::memory_order_release);
  return result;
}

absl::Status CuptiCollector::Flush(proto::Trace* trace) {
  if (!stopped_) return absl::FailedPreconditionError("Flush() before Stop()");
  if (flushed_) return absl::FailedPreconditionError("CUPTI collector already flushed");
  flushed_ = true;
  proto::TraceHeader* header = trace->mutable_header();
  if (header->provenance() == proto::PROVENANCE_UNSPECIFIED) {
    header->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  }
  {
    std::lock_guard<std::mutex> lock(decoder_mu_);
    decoder_.Finish(trace);
  }
  proto::CollectorStats* s = header->mutable_collector();
  s->set_collector(metrics_mode() ? "cupti-metrics" : "cupti");
  CollectorCounters counters;
  counters.records_dropped = dropped_.load();
  counters.buffers_allocated = pool_.allocated();
  counters.buffer_bytes = pool_.bytes_held();
  counters.buffers_refused = pool_.refused();
  counters.cap_bytes = options_.max_buffer_bytes;
  counters.callback_errors = callback_errors_.load();
  counters.buffer_errors = buffer_errors_.load();
  counters.warnings = warnings_;
  AddCollectorCounters(counters, s);
  if (metrics_mode()) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    s->set_metrics_requested(true);
    const bool ran = metrics_failure_.ok() && !metric_kernels_.empty();
    s->set_metrics_available(ran);
    if (!metrics_failure_.ok()) {
      s->set_metrics_unavailable_reason(MetricsUnavailableReason(metrics_failure_));
    } else if (metric_kernels_.empty()) {
      s->set_metrics_unavailable_reason("no kernel ran while the range profiler was active");
    }
    for (const std::string& w : metric_warnings_) s->add_warnings(w);
    for (proto::Activity& a : metric_kernels_) *trace->add_activities() = std::move(a);
    metric_kernels_.clear();
    header->add_notes("metrics pass: kernels were replayed by CUPTI; activity times are not "
                      "measured here (join onto a trace pass)");
  }
  return absl::OkStatus();
}

}  // namespace

void RouteNvtxToCupti() { PointNvtxAtCuptiImpl(); }

absl::StatusOr<std::unique_ptr<Collector>> MakeCuptiCollector(const CuptiOptions& options) {
  if (options.buffer_bytes < (1u << 20) || options.buffer_bytes > (64u << 20)) {
    return absl::InvalidArgumentError("CUPTI buffer size must be between 1 and 64 MiB");
  }
  if (options.max_buffer_bytes < options.buffer_bytes) {
    return absl::InvalidArgumentError("CUPTI buffer cap is below one buffer");
  }
  if (options.mode == CuptiOptions::Mode::kMetrics && options.max_metric_kernels == 0) {
    return absl::InvalidArgumentError("max_metric_kernels must be positive in metrics mode");
  }
  return std::unique_ptr<Collector>(new CuptiCollector(options));
}

}  // namespace qprof::profiler::cupti
