// Capture ranges and the start delay (capture_range.h) as CUPTI's callbacks report them:
// cuProfilerStart/Stop (cudaProfilerStart/Stop reach the driver), and NVTX ranges through
// CUPTI's NVTX callbacks (NVTX reaches CUPTI only when NVTX_INJECTION64_PATH names
// libcupti, which the collector sets unless NVTX is off). See collector_core.h for the
// threads and locks: the gate has its own leaf lock; metrics_mu_ is taken only to push or
// pop a session's range.
#include <cupti_driver_cbid.h>
#include <generated_nvtx_meta.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <limits>

#include "profiler/cupti/collector_core.h"
#include "profiler/cupti/cupti_call.h"

namespace qprof::profiler::cupti {
namespace {

constexpr CUpti_CallbackId kProfilerApiCallbacks[] = {CUPTI_DRIVER_TRACE_CBID_cuProfilerStart,
                                                      CUPTI_DRIVER_TRACE_CBID_cuProfilerStop};
constexpr CUpti_CallbackId kNvtxCallbacks[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA,      CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop,        CUPTI_CBID_NVTX_nvtxRangeStartA,
    CUPTI_CBID_NVTX_nvtxRangeStartEx,    CUPTI_CBID_NVTX_nvtxRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePop,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainCreateA,
};

uint64_t ThisThread() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

const char* AsciiMessage(const nvtxEventAttributes_t* a) {
  if (a == nullptr || a->messageType != NVTX_MESSAGE_TYPE_ASCII) return nullptr;
  return a->message.ascii;
}

uint64_t RangeIdOf(const CUpti_NvtxData& d) {
  return d.functionReturnValue != nullptr
             ? static_cast<uint64_t>(*static_cast<const nvtxRangeId_t*>(d.functionReturnValue))
             : 0;
}

}  // namespace

int64_t CollectorCore::Now() {
  uint64_t t = 0;
  return api_.GetTimestamp(&t) == CUPTI_SUCCESS ? static_cast<int64_t>(t) : 0;
}

void CollectorCore::StartCapture() {
  const CaptureSpec& spec = options_.capture;
  if (spec.trigger == CaptureSpec::Trigger::kNone && spec.delay_s <= 0) return;
  gate_ = std::make_unique<CaptureGate>(spec, Now());
  if (subscriber_ == nullptr) return;
  if (spec.trigger == CaptureSpec::Trigger::kProfilerApi) {
    for (CUpti_CallbackId cbid : kProfilerApiCallbacks) {
      (void)QPROF_CUPTI_WARN(api_, api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API,
                                                       cbid));
    }
  } else if (spec.trigger == CaptureSpec::Trigger::kNvtx) {
    if (!options_.route_nvtx) {
      warnings_.push_back("capture range " + spec.Describe() + " needs NVTX, which is off "
                          "(QPROF_NVTX=off): nothing will be recorded");
      LogWarning("warning: " + warnings_.back());
    }
    for (CUpti_CallbackId cbid : kNvtxCallbacks) {
      (void)QPROF_CUPTI_WARN(api_, api_.EnableCallback(1, subscriber_, CUPTI_CB_DOMAIN_NVTX, cbid));
    }
  }
}

void CollectorCore::OnProfilerApi(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  if (gate_ == nullptr) return;
  const bool enter = data.callbackSite == CUPTI_API_ENTER;
  // The range holds what is launched after cudaProfilerStart returns and before
  // cudaProfilerStop is called.
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart && !enter) {
    const auto* rc = static_cast<const CUresult*>(data.functionReturnValue);
    if (rc == nullptr || *rc == CUDA_SUCCESS) OnCaptureChange(gate_->ProfilerStart(Now()));
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop && enter) {
    OnCaptureChange(gate_->ProfilerStop(Now()));
  }
}

void CollectorCore::OnNvtxCallback(CUpti_CallbackId cbid, const void* raw) {
  if (gate_ == nullptr) return;
  const auto& d = *static_cast<const CUpti_NvtxData*>(raw);
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePop) {  // no parameters to read
    OnCaptureChange(gate_->NvtxPop(ThisThread(), "", Now()));
    return;
  }
  if (d.functionParams == nullptr) return;
  auto domain_name = [this](nvtxDomainHandle_t h) {
    std::lock_guard<std::mutex> lock(nvtx_domains_mu_);
    auto it = nvtx_domains_.find(h);
    return it != nvtx_domains_.end() ? it->second : std::string("?");
  };
  const int64_t now = Now();
  const uint64_t thread = ThisThread();
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      const auto* p = static_cast<const nvtxDomainCreateA_params*>(d.functionParams);
      if (d.functionReturnValue == nullptr || p->name == nullptr) return;
      std::lock_guard<std::mutex> lock(nvtx_domains_mu_);
      nvtx_domains_[*static_cast<const nvtxDomainHandle_t*>(d.functionReturnValue)] = p->name;
      return;
    }
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      OnCaptureChange(gate_->NvtxPush(
          thread, "", static_cast<const nvtxRangePushA_params*>(d.functionParams)->message, now));
      return;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      OnCaptureChange(gate_->NvtxPush(
          thread, "",
          AsciiMessage(static_cast<const nvtxRangePushEx_params*>(d.functionParams)->eventAttrib),
          now));
      return;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(d.functionParams);
      OnCaptureChange(gate_->NvtxPush(thread, domain_name(p->domain),
                                      AsciiMessage(p->core.eventAttrib), now));
      return;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      OnCaptureChange(gate_->NvtxPop(
          thread, domain_name(static_cast<const nvtxDomainRangePop_params*>(d.functionParams)->domain),
          now));
      return;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      OnCaptureChange(gate_->NvtxStart(
          RangeIdOf(d), "", static_cast<const nvtxRangeStartA_params*>(d.functionParams)->message,
          now));
      return;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      OnCaptureChange(gate_->NvtxStart(
          RangeIdOf(d), "",
          AsciiMessage(static_cast<const nvtxRangeStartEx_params*>(d.functionParams)->eventAttrib),
          now));
      return;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* p = static_cast<const nvtxDomainRangeStartEx_params*>(d.functionParams);
      OnCaptureChange(gate_->NvtxStart(RangeIdOf(d), domain_name(p->domain),
                                       AsciiMessage(p->core.eventAttrib), now));
      return;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      OnCaptureChange(gate_->NvtxEnd(
          static_cast<const nvtxRangeEnd_params*>(d.functionParams)->id, now));
      return;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      OnCaptureChange(gate_->NvtxEnd(
          static_cast<const nvtxDomainRangeEnd_params*>(d.functionParams)->core.id, now));
      return;
    default:
      return;
  }
}

void CollectorCore::OnCaptureChange(CaptureGate::Change change) {
  if (change != CaptureGate::Change::kClosed || !gate_->done()) return;
  if (capture_done_.exchange(true)) return;
  // Stop() cannot run here (inside a CUPTI callback): whoever set the hook finishes the
  // trace on another thread.
  if (options_.on_capture_done) options_.on_capture_done(gate_->spec().shutdown());
}

void CollectorCore::SyncSessionWithGate(CUcontext ctx) {
  const bool want = gate_->OpenAt(Now());
  std::lock_guard<std::mutex> lock(metrics_mu_);
  auto it = sessions_.find(ctx);
  if (it == sessions_.end() || !it->second->active() || it->second->is_open() == want) return;
  CoreStatus s = want ? it->second->Open() : it->second->Close();
  if (!s.ok()) metric_warnings_.push_back("capture range: " + s.message());
}

std::map<std::string, std::string> CollectorCore::CaptureSummary() const {
  std::map<std::string, std::string> out;
  if (gate_ == nullptr) return out;
  const CaptureSpec& spec = gate_->spec();
  if (spec.delay_s > 0) out["capture_delay_s"] = std::to_string(spec.delay_s);
  if (spec.trigger == CaptureSpec::Trigger::kNone) return out;
  out["capture_range"] = spec.Describe();
  out["capture_range_end"] = spec.EndText();
  const auto windows = gate_->windows();
  out["capture_ranges"] = std::to_string(windows.size());
  std::string text;
  for (const auto& [begin, end] : windows) {
    if (!text.empty()) text += ',';
    text += std::to_string(begin);
    text += '-';
    text += end == std::numeric_limits<int64_t>::max() ? std::string("open") : std::to_string(end);
  }
  out["capture_windows_ns"] = text;
  return out;
}

}  // namespace qprof::profiler::cupti
