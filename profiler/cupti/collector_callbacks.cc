// CUPTI's callbacks into the collector, and the metrics-mode handling they drive.
#include "profiler/cupti/collector_callbacks.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

#include "profiler/cupti/activity_buffer.h"
#include "profiler/cupti/collector_core.h"
#include "profiler/cupti/cupti_call.h"

namespace qprof::profiler::cupti {
namespace {

std::atomic<CollectorCore*> g_active{nullptr};
std::atomic<int> g_in_flight{0};       // buffer callbacks running now
std::atomic<bool> g_forked_off{false};  // set in a forked child: callbacks do nothing
std::mutex g_wait_mu;
std::condition_variable g_wait_cv;
thread_local int t_in_buffer_callback = 0;  // counted in g_in_flight
thread_local int t_in_api_callback = 0;     // API/resource callbacks (not waited for)

// Counts a callback as running for its whole duration, on every path out.
class InFlight {
 public:
  InFlight() {
    g_in_flight.fetch_add(1, std::memory_order_seq_cst);
    ++t_in_buffer_callback;
  }
  ~InFlight() {
    --t_in_buffer_callback;
    g_in_flight.fetch_sub(1, std::memory_order_seq_cst);
    { std::lock_guard<std::mutex> lock(g_wait_mu); }
    g_wait_cv.notify_all();
  }
};

}  // namespace

bool ClaimActive(CollectorCore* core) {
  CollectorCore* expected = nullptr;
  return g_active.compare_exchange_strong(expected, core);
}

void ReleaseActive(CollectorCore* core) {
  CollectorCore* expected = core;
  if (!g_active.compare_exchange_strong(expected, nullptr)) return;
  // A callback that loaded the pointer before it was cleared may still be running.
  if (!InOurCallback()) (void)WaitForCallbacksToReturn(std::chrono::seconds(10));
}

bool WaitForCallbacksToReturn(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(g_wait_mu);
  // A callback running on this very thread (a flush from inside a callback) cannot
  // finish while we wait for it.
  const int own = t_in_buffer_callback;
  return g_wait_cv.wait_for(lock, limit, [own] {
    return g_in_flight.load(std::memory_order_seq_cst) <= own;
  });
}

bool InOurCallback() { return t_in_buffer_callback > 0 || t_in_api_callback > 0; }

void DisableCallbacksAfterFork() { g_forked_off.store(true); }

void PointNvtxAtCupti(CuptiApi& api) {
  if (std::getenv("NVTX_INJECTION64_PATH") != nullptr) return;
  const std::string path = api.LibraryPath();
  if (!path.empty()) setenv("NVTX_INJECTION64_PATH", path.c_str(), 0);
}

void CUPTIAPI CoreCallbacks::BufferRequested(uint8_t** buffer, size_t* size,
                                             size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;  // fill the buffer with as many records as fit
  if (g_forked_off.load()) return;
  InFlight counted;
  CollectorCore* self = g_active.load();
  if (self == nullptr) return;  // CUPTI drops (and counts) what it cannot store
  self->requested_.fetch_add(1, std::memory_order_relaxed);
  // After the final flush nothing more is decoded: a buffer handed out now would never
  // come back to a running collector. During the flush CUPTI may still need buffers for
  // records its device buffers held, so those are granted.
  if (self->refusing_buffers_) return;
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

void CUPTIAPI CoreCallbacks::BufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer,
                                             size_t /*size*/, size_t valid_size) {
  if (g_forked_off.load()) return;
  InFlight counted;
  CollectorCore* self = g_active.load();
  if (self == nullptr) {
    // Ours (CUPTI only returns buffers we handed out), from a collector that is gone.
    std::free(buffer);
    return;
  }
  try {
    self->OnBufferCompleted(ctx, stream, buffer, valid_size);
  } catch (...) {
    self->callback_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

void CollectorCore::OnBufferCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer,
                                      size_t valid) {
  // Outside every lock of ours: this re-enters CUPTI.
  size_t dropped = 0;
  if (api_.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) {
    dropped_.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (buffer == nullptr) return;
  completed_.fetch_add(1, std::memory_order_relaxed);
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    if (accepting_) {
      queue_.emplace_back(buffer, valid);
      queued = true;
    }
  }
  if (queued) {
    queue_cv_.notify_one();
    return;
  }
  // After the worker's last round: count the records (not decoded into a finished trace).
  late_.fetch_add(1, std::memory_order_relaxed);
  CUpti_Activity* record = nullptr;
  uint64_t n = 0;
  while (api_.ActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++n;
  late_records_.fetch_add(n, std::memory_order_relaxed);
  if (!pool_.Release(buffer)) std::free(buffer);
}

void CUPTIAPI CoreCallbacks::OnCallback(void* userdata, CUpti_CallbackDomain domain,
                                        CUpti_CallbackId cbid, const void* data) {
  if (g_forked_off.load()) return;
  auto* self = static_cast<CollectorCore*>(userdata);
  if (self == nullptr || data == nullptr) return;
  ++t_in_api_callback;  // not waited for, but Stop() must know it runs inside one
  try {
    self->OnCallback(domain, cbid, data);
  } catch (...) {
    self->callback_errors_.fetch_add(1, std::memory_order_relaxed);
  }
  --t_in_api_callback;
}

void CollectorCore::OnCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                               const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* resource = static_cast<const CUpti_ResourceData*>(data);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && metrics_mode()) {
      BeginMetricsOn(resource->context);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      // Tracing goes on: other contexts (other GPUs, the next context after a reset)
      // still run. Only this context's counters must be read before it goes: they die
      // with it.
      if (metrics_mode()) EndMetricsOn(resource->context);
      if (options_.on_context_teardown) options_.on_context_teardown();
    } else if (cbid >= CUPTI_CBID_RESOURCE_GRAPH_CREATED &&
               cbid <= CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED &&
               resource->resourceDescriptor != nullptr) {
      OnGraphResource(cbid, *static_cast<const CUpti_GraphData*>(resource->resourceDescriptor));
    }
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    OnDriverCallback(cbid, *static_cast<const CUpti_CallbackData*>(data));
  } else if (domain == CUPTI_CB_DOMAIN_NVTX) {
    OnNvtxCallback(cbid, data);
  }
}

}  // namespace qprof::profiler::cupti
