// The fake GPU's activity and callback side: buffers, records, delivery, subscriber.
// The scripted program is in fake_program.cc, the profiler APIs in fake_profiler.cc.
#include "tests/profiler/cupti/fake/fake_cupti.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace qprof::profiler::cupti::fake {
namespace {

size_t Round8(size_t n) { return (n + 7) / 8 * 8; }

size_t RecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    default: return 0;
  }
}

// GPU records wait on the "device" until this many are pending (CUPTI's device buffers).
constexpr size_t kDeviceRecordsPending = 64;

// The other tool of RegisterForeignBufferCallbacks (its callbacks carry no user pointer).
std::atomic<FakeCupti*> g_foreign_owner{nullptr};

// A kernel record still running at a forced flush: CUPTI hands it back without times.
void ZeroKernelTimes(std::vector<uint8_t>* record) {
  CUpti_Activity head;
  std::memcpy(&head, record->data(), sizeof(head));
  if (head.kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) return;
  CUpti_ActivityKernel10 k;
  std::memcpy(&k, record->data(), sizeof(k));
  k.start = 0;
  k.end = 0;
  std::memcpy(record->data(), &k, sizeof(k));
}

}  // namespace

void CUPTIAPI FakeCupti::ForeignRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, 1 << 20));
  *size = *buffer != nullptr ? (1 << 20) : 0;
  *max_records = 0;
}

// Takes every buffer CUPTI completes, the collector's included, and frees it as Kineto does.
void CUPTIAPI FakeCupti::ForeignCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) {
  if (FakeCupti* owner = g_foreign_owner.load()) owner->foreign_taken_.fetch_add(1);
  std::free(buffer);
}

void FakeCupti::RegisterForeignBufferCallbacks() {
  Log("ActivityRegisterCallbacks(another tool)");
  g_foreign_owner.store(this);
  std::lock_guard<std::mutex> lock(mu_);
  requested_ = &FakeCupti::ForeignRequested;
  completed_ = &FakeCupti::ForeignCompleted;
}

bool FakeCupti::RequestBufferNow() {
  std::lock_guard<std::mutex> lock(emit_mu_);
  CUpti_BuffersCallbackRequestFunc request;
  {
    std::lock_guard<std::mutex> state(mu_);
    request = requested_;
  }
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  if (request != nullptr) request(&buffer, &size, &max_records);
  if (buffer == nullptr) return false;
  if (current_.data == nullptr) {
    current_ = Buffer{buffer, size, 0};
  } else {
    std::lock_guard<std::mutex> state(mu_);
    completed_queue_.emplace_back(buffer, 0);  // handed back empty at the next flush
  }
  return true;
}

void FakeCupti::EmitOverhead(uint64_t start, uint64_t end) {
  if (!Enabled(CUPTI_ACTIVITY_KIND_OVERHEAD)) return;
  CUpti_ActivityOverhead3 o;
  std::memset(&o, 0, sizeof(o));
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  o.objectId.pt.processId = pid;
  o.start = start;
  o.end = end;
  Emit(&o, sizeof(o));
}

thread_local CUcontext FakeCupti::t_current_ = nullptr;

FakeCupti::FakeCupti(std::vector<FakeDevice> devices) : devices_(std::move(devices)) {
  t_current_ = nullptr;  // a context of an earlier fake on this thread is not current here
  delivery_ = std::thread([this] { DeliveryLoop(); });
}

FakeCupti::~FakeCupti() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_delivery_ = true;
  }
  delivery_cv_.notify_all();
  delivery_.join();
  if (late_thread_.joinable()) late_thread_.join();
  // Buffers still here belong to the collector's pool; nothing to free.
}

void FakeCupti::Log(std::string call) const {
  std::lock_guard<std::mutex> lock(mu_);
  const_cast<FakeCupti*>(this)->calls_.push_back(std::move(call));
}

std::vector<std::string> FakeCupti::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

size_t FakeCupti::IndexOfCall(const std::string& call) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(calls_.begin(), calls_.end(), call);
  return it == calls_.end() ? SIZE_MAX : static_cast<size_t>(it - calls_.begin());
}

bool FakeCupti::buffer_callbacks_registered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requested_ != nullptr;
}

std::set<std::thread::id> FakeCupti::walk_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return walk_threads_;
}

std::set<std::thread::id> FakeCupti::delivery_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return delivery_threads_;
}

const char* FakeCupti::Intern(const std::string& s) {
  std::lock_guard<std::mutex> lock(mu_);
  return interned_.insert(s).first->c_str();  // std::set nodes never move
}

uint64_t FakeCupti::HostNow(uint64_t advance_ns) {
  return host_clock_.fetch_add(advance_ns) + advance_ns;
}

bool FakeCupti::Enabled(CUpti_ActivityKind kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  return enabled_.count(kind) > 0;
}

// ---- Buffers ------------------------------------------------------------------------------

void FakeCupti::CompleteCurrentLocked() {
  if (current_.data == nullptr || current_.used == 0) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    completed_queue_.emplace_back(current_.data, current_.used);
  }
  current_ = Buffer{};
  delivery_cv_.notify_all();
}

void FakeCupti::Emit(const void* record, size_t size) {
  std::lock_guard<std::mutex> lock(emit_mu_);
  const size_t need = Round8(size);
  if (current_.data != nullptr && current_.used + need > current_.size) CompleteCurrentLocked();
  if (current_.data == nullptr) {
    CUpti_BuffersCallbackRequestFunc request;
    {
      std::lock_guard<std::mutex> state(mu_);
      request = requested_;
    }
    uint8_t* buffer = nullptr;
    size_t buffer_size = 0, max_records = 0;
    if (request != nullptr) request(&buffer, &buffer_size, &max_records);
    if (buffer == nullptr || buffer_size < need) {
      const auto kind = static_cast<const CUpti_Activity*>(record)->kind;
      std::lock_guard<std::mutex> state(mu_);
      ++dropped_;
      ++dropped_total_;
      if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_MEMCPY ||
          kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        ++gpu_dropped_;
      }
      return;
    }
    current_ = Buffer{buffer, buffer_size, 0};
  }
  std::memset(current_.data + current_.used, 0, need);
  std::memcpy(current_.data + current_.used, record, size);
  current_.used += need;
}

void FakeCupti::EmitGpu(std::vector<uint8_t> record) {
  ++gpu_made_;
  std::lock_guard<std::mutex> lock(emit_mu_);
  if (faults.drop_every > 0 && gpu_made_.load() % faults.drop_every == 0) {
    std::lock_guard<std::mutex> state(mu_);
    ++dropped_;
    ++dropped_total_;
    ++gpu_dropped_;
    return;
  }
  gpu_waiting_.push_back(std::move(record));
  if (gpu_waiting_.size() >= kDeviceRecordsPending) DrainGpuLocked(true);
}

// Caller holds emit_mu_ (Emit takes it again: it is released around each record).
void FakeCupti::DrainGpuLocked(bool /*all*/) {
  std::vector<std::vector<uint8_t>> waiting;
  waiting.swap(gpu_waiting_);
  emit_mu_.unlock();
  for (const auto& r : waiting) Emit(r.data(), r.size());
  emit_mu_.lock();
}

void FakeCupti::DeliverKept() {
  std::pair<uint8_t*, size_t> kept;
  {
    std::lock_guard<std::mutex> lock(mu_);
    kept = kept_;
    kept_ = {nullptr, 0};
  }
  if (kept.first != nullptr) DeliverOne(kept.first, kept.second, nullptr);
}

void FakeCupti::SyncAll() {
  std::lock_guard<std::mutex> lock(emit_mu_);
  DrainGpuLocked(true);
}

void FakeCupti::DeliverOne(uint8_t* buffer, size_t valid, std::thread::id* by) {
  CUpti_BuffersCallbackCompleteFunc complete;
  {
    std::lock_guard<std::mutex> lock(mu_);
    complete = completed_;
    delivery_threads_.insert(std::this_thread::get_id());
  }
  if (by != nullptr) *by = std::this_thread::get_id();
  if (complete != nullptr) complete(nullptr, 0, buffer, valid, valid);
}

void FakeCupti::DeliveryLoop() {
  for (;;) {
    std::pair<uint8_t*, size_t> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      delivery_cv_.wait(lock, [this] {
        return stop_delivery_ || (!completed_queue_.empty() && !faults.hold_completed_buffers);
      });
      if (stop_delivery_) return;
      next = completed_queue_.front();
      completed_queue_.pop_front();
      ++delivering_;
    }
    DeliverOne(next.first, next.second, nullptr);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --delivering_;
    }
    delivery_cv_.notify_all();
  }
}

CUptiResult FakeCupti::ActivityFlushAll(uint32_t flag) {
  Log("ActivityFlushAll(" + std::to_string(flag) + ")");
  const bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
  const uint64_t flush_start = HostNow();
  EmitOverhead(flush_start, HostNow(700));  // CUPTI's own time spent flushing
  {
    std::lock_guard<std::mutex> lock(emit_mu_);
    if (forced && faults.running_at_forced_flush > 0) {
      // The newest records are of kernels still running: incomplete, forced out anyway.
      int left = faults.running_at_forced_flush;
      for (auto it = gpu_waiting_.rbegin(); it != gpu_waiting_.rend() && left > 0; ++it, --left) {
        ZeroKernelTimes(&*it);
      }
      faults.running_at_forced_flush = 0;
    }
    DrainGpuLocked(true);
    CompleteCurrentLocked();  // every record here is complete: default and forced alike
  }
  std::vector<std::pair<uint8_t*, size_t>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.assign(completed_queue_.begin(), completed_queue_.end());
    completed_queue_.clear();
  }
  if (faults.keep_one_past_flush && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && !all.empty()) {
    faults.keep_one_past_flush = false;
    std::lock_guard<std::mutex> lock(mu_);
    kept_ = all.back();
    all.pop_back();
  }
  bool late_started = false;
  if (faults.late_completion && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && !all.empty()) {
    faults.late_completion = false;  // once
    late_started = true;
    auto last = all.back();
    all.pop_back();
    late_thread_ = std::thread([this, last] {
      {
        std::lock_guard<std::mutex> lock(late_mu_);
        late_thread_id_ = std::this_thread::get_id();
        late_stage_ = 1;
      }
      DeliverOne(last.first, last.second, nullptr);
      std::lock_guard<std::mutex> lock(late_mu_);
      late_stage_ = 4;
    });
  }
  for (const auto& [buffer, valid] : all) DeliverOne(buffer, valid, nullptr);
  {
    // Like CUPTI, a flush returns once every completed buffer was handed back, including
    // one its own worker thread was handing back meanwhile.
    std::unique_lock<std::mutex> lock(mu_);
    delivery_cv_.wait(lock, [this] { return delivering_ == 0; });
  }
  if (forced && faults.drops_after_last_delivery > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    const int n = faults.drops_after_last_delivery;
    faults.drops_after_last_delivery = 0;
    dropped_ += n;
    dropped_total_ += n;
    gpu_dropped_ += n;
    gpu_made_ += n;
  }
  std::unique_lock<std::mutex> lock(late_mu_);
  if (late_started) {
    // The late callback has entered the collector (CUPTI started it before the flush
    // ended); it returns only after this flush has returned.
    late_cv_.wait_for(lock, std::chrono::seconds(2), [this] { return late_stage_ >= 2; });
    late_stage_ = 3;
    late_cv_.notify_all();
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ActivityGetNumDroppedRecords(CUcontext context, uint32_t /*stream*/,
                                                    size_t* dropped) {
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  {
    // The late delivery: inside the collector's callback now; returns only after the
    // flush has returned, and a while more.
    std::unique_lock<std::mutex> lock(late_mu_);
    if (late_stage_ == 1 && std::this_thread::get_id() == late_thread_id_) {
      late_stage_ = 2;
      late_cv_.notify_all();
      late_cv_.wait(lock, [this] { return late_stage_ >= 3; });
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (context != nullptr) {
    *dropped = 0;  // every buffer here is a global one
    return CUPTI_SUCCESS;
  }
  *dropped = dropped_;
  dropped_ = 0;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ActivityGetNextRecord(uint8_t* buffer, size_t valid_size,
                                             CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  size_t offset = 0;
  size_t index = 0;
  if (*record != nullptr) {
    const auto* at = reinterpret_cast<uint8_t*>(*record);
    const size_t size = RecordSize((*record)->kind);
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = static_cast<size_t>(at - buffer) + Round8(size);
    // Records before this one, for walk_stops_after: count by walking from the start
    // (quadratic, so only when that fault is on).
    for (size_t o = 0; faults.walk_stops_after >= 0 && o < offset; ++index) {
      o += Round8(RecordSize(reinterpret_cast<CUpti_Activity*>(buffer + o)->kind));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    walk_threads_.insert(std::this_thread::get_id());
  }
  if (faults.walk_stops_after >= 0 && index >= static_cast<size_t>(faults.walk_stops_after)) {
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
  if (offset >= valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                 CUpti_BuffersCallbackCompleteFunc completed) {
  Log("ActivityRegisterCallbacks");
  std::lock_guard<std::mutex> lock(mu_);
  requested_ = requested;
  completed_ = completed;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ActivityEnable(CUpti_ActivityKind kind) {
  Log("ActivityEnable(" + std::to_string(static_cast<int>(kind)) + ")");
  if (faults.refuse_kernel_activity && kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
    return CUPTI_ERROR_NOT_SUPPORTED;
  }
  std::lock_guard<std::mutex> lock(mu_);
  enabled_.insert(kind);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ActivityDisable(CUpti_ActivityKind kind) {
  Log("ActivityDisable(" + std::to_string(static_cast<int>(kind)) + ")");
  std::lock_guard<std::mutex> lock(mu_);
  enabled_.erase(kind);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ActivityEnableRuntimeApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }
CUptiResult FakeCupti::ActivityEnableDriverApi(CUpti_CallbackId, uint8_t) { return CUPTI_SUCCESS; }

CUptiResult FakeCupti::GetTimestamp(uint64_t* timestamp) {
  *timestamp = host_clock_.load();
  return CUPTI_SUCCESS;
}

// ---- Callback API -----------------------------------------------------------------------

CUptiResult FakeCupti::Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                 void* userdata, CUpti_SubscriberParams* params) {
  Log("Subscribe");
  std::lock_guard<std::mutex> lock(mu_);
  const std::string holder = !faults.other_subscriber.empty() ? faults.other_subscriber
                             : subscriber_ != nullptr         ? "qprof"
                                                              : "";
  if (!holder.empty()) {
    if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      std::strncpy(params->oldSubscriberName, holder.c_str(), params->oldSubscriberSize - 1);
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  subscriber_ = std::make_unique<Subscriber>();
  subscriber_->callback = callback;
  subscriber_->userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(subscriber_.get());
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::Unsubscribe(CUpti_SubscriberHandle subscriber) {
  Log("Unsubscribe");
  std::lock_guard<std::mutex> lock(mu_);
  if (subscriber_ == nullptr ||
      reinterpret_cast<Subscriber*>(subscriber) != subscriber_.get()) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  subscriber_.reset();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableDomain(uint32_t enable, CUpti_SubscriberHandle,
                                    CUpti_CallbackDomain domain) {
  std::lock_guard<std::mutex> lock(mu_);
  if (subscriber_ == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) subscriber_->domains.insert(domain); else subscriber_->domains.erase(domain);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::EnableCallback(uint32_t enable, CUpti_SubscriberHandle,
                                      CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(mu_);
  if (subscriber_ == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (enable) subscriber_->callbacks.insert({domain, cbid});
  else subscriber_->callbacks.erase({domain, cbid});
  return CUPTI_SUCCESS;
}

void FakeCupti::DispatchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void* data) {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (subscriber_ == nullptr) return;
    if (!subscriber_->domains.count(domain) && !subscriber_->callbacks.count({domain, cbid})) return;
    callback = subscriber_->callback;
    userdata = subscriber_->userdata;
  }
  callback(userdata, domain, cbid, data);
}

}  // namespace qprof::profiler::cupti::fake
