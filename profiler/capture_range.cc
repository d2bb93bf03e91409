#include "profiler/capture_range.h"

#include <cstdlib>
#include <limits>

namespace qprof::profiler {
namespace {

constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();

bool ParseCount(const std::string& text, uint32_t* n) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *n = static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
  return *n > 0;
}

}  // namespace

std::string CaptureSpec::Describe() const {
  switch (trigger) {
    case Trigger::kProfilerApi: return "cudaProfilerApi";
    case Trigger::kNvtx:
      return "nvtx:" + nvtx_name + (nvtx_domain.empty() ? "" : "@" + nvtx_domain);
    default: return "none";
  }
}

std::string CaptureSpec::EndText() const {
  switch (end) {
    case End::kStop: return "stop";
    case End::kNone: return "none";
    case End::kRepeat: return limit > 0 ? "repeat:" + std::to_string(limit) : "repeat";
    case End::kRepeatShutdown: return "repeat-shutdown:" + std::to_string(limit);
    default: return "stop-shutdown";
  }
}

bool ParseNvtxCapture(const std::string& text, CaptureSpec* spec, std::string* error) {
  const size_t at = text.rfind('@');
  spec->nvtx_name = at == std::string::npos ? text : text.substr(0, at);
  spec->nvtx_domain = at == std::string::npos ? "" : text.substr(at + 1);
  if (spec->nvtx_name.empty() || (at != std::string::npos && spec->nvtx_domain.empty())) {
    *error = "--nvtx-capture wants RANGE or RANGE@DOMAIN (RANGE@* for any domain), got '" +
             text + "'";
    return false;
  }
  return true;
}

bool ParseCaptureRange(const std::string& text, CaptureSpec* spec, std::string* error) {
  if (text == "none") {
    spec->trigger = CaptureSpec::Trigger::kNone;
  } else if (text == "cudaProfilerApi") {
    spec->trigger = CaptureSpec::Trigger::kProfilerApi;
  } else if (text == "nvtx") {
    spec->trigger = CaptureSpec::Trigger::kNvtx;
  } else if (text.rfind("nvtx:", 0) == 0) {
    spec->trigger = CaptureSpec::Trigger::kNvtx;
    return ParseNvtxCapture(text.substr(5), spec, error);
  } else {
    *error = "--capture-range must be none, cudaProfilerApi, nvtx or nvtx:RANGE[@DOMAIN], got '" +
             text + "'";
    return false;
  }
  return true;
}

bool ParseCaptureRangeEnd(const std::string& text, CaptureSpec* spec, std::string* error) {
  spec->limit = 0;
  if (text == "stop-shutdown") {
    spec->end = CaptureSpec::End::kStopShutdown;
  } else if (text == "stop") {
    spec->end = CaptureSpec::End::kStop;
  } else if (text == "none") {
    spec->end = CaptureSpec::End::kNone;
  } else if (text == "repeat") {
    spec->end = CaptureSpec::End::kRepeat;
  } else if (text.rfind("repeat:", 0) == 0 && ParseCount(text.substr(7), &spec->limit)) {
    spec->end = CaptureSpec::End::kRepeat;
  } else if (text.rfind("repeat-shutdown:", 0) == 0 && ParseCount(text.substr(16), &spec->limit)) {
    spec->end = CaptureSpec::End::kRepeatShutdown;
  } else {
    *error = "--capture-range-end must be stop, stop-shutdown, none, repeat[:N] or "
             "repeat-shutdown:N (N >= 1), got '" + text + "'";
    return false;
  }
  return true;
}

CaptureGate::CaptureGate(CaptureSpec spec, int64_t start_ns)
    : spec_(std::move(spec)),
      delay_end_(start_ns + static_cast<int64_t>(spec_.delay_s * 1e9)) {}

bool CaptureGate::Matches(const std::string& domain, const char* message) const {
  if (message == nullptr || spec_.nvtx_name != message) return false;
  return spec_.nvtx_domain == "*" || spec_.nvtx_domain == domain;
}

CaptureGate::Change CaptureGate::Open(int64_t now) {
  if (open_ || done_) return Change::kNone;
  open_ = true;
  windows_.emplace_back(now, kOpenEnd);
  return Change::kOpened;
}

CaptureGate::Change CaptureGate::Close(int64_t now) {
  if (!open_ || spec_.end == CaptureSpec::End::kNone) return Change::kNone;
  open_ = false;
  windows_.back().second = now;
  const bool repeat = spec_.end == CaptureSpec::End::kRepeat ||
                      spec_.end == CaptureSpec::End::kRepeatShutdown;
  if (!repeat || (spec_.limit > 0 && windows_.size() >= spec_.limit)) done_ = true;
  return Change::kClosed;
}

CaptureGate::Change CaptureGate::ProfilerStart(int64_t now) {
  if (spec_.trigger != CaptureSpec::Trigger::kProfilerApi) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  return Open(now);
}

CaptureGate::Change CaptureGate::ProfilerStop(int64_t now) {
  if (spec_.trigger != CaptureSpec::Trigger::kProfilerApi) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  return Close(now);
}

CaptureGate::Change CaptureGate::NvtxPush(uint64_t thread, const std::string& domain,
                                          const char* message, int64_t now) {
  if (spec_.trigger != CaptureSpec::Trigger::kNvtx) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  const int depth = ++depth_[{thread, domain}];
  if (open_ || !Matches(domain, message)) return Change::kNone;
  const Change c = Open(now);
  if (c == Change::kOpened) {
    opened_by_push_ = true;
    opened_on_ = {thread, domain};
    opened_depth_ = depth;
  }
  return c;
}

CaptureGate::Change CaptureGate::NvtxPop(uint64_t thread, const std::string& domain, int64_t now) {
  if (spec_.trigger != CaptureSpec::Trigger::kNvtx) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  int& depth = depth_[{thread, domain}];
  const int popped = depth;
  if (depth > 0) --depth;
  if (!open_ || !opened_by_push_ || opened_on_ != std::make_pair(thread, domain) ||
      popped != opened_depth_) {
    return Change::kNone;
  }
  return Close(now);
}

CaptureGate::Change CaptureGate::NvtxStart(uint64_t id, const std::string& domain,
                                           const char* message, int64_t now) {
  if (spec_.trigger != CaptureSpec::Trigger::kNvtx) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  if (open_ || !Matches(domain, message)) return Change::kNone;
  const Change c = Open(now);
  if (c == Change::kOpened) {
    opened_by_push_ = false;
    opened_id_ = id;
  }
  return c;
}

CaptureGate::Change CaptureGate::NvtxEnd(uint64_t id, int64_t now) {
  if (spec_.trigger != CaptureSpec::Trigger::kNvtx) return Change::kNone;
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_ || opened_by_push_ || id != opened_id_) return Change::kNone;
  return Close(now);
}

bool CaptureGate::OpenAt(int64_t t) const {
  if (t < delay_end_) return false;
  if (spec_.trigger == CaptureSpec::Trigger::kNone) return true;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [begin, end] : windows_) {
    if (t >= begin && t < end) return true;
  }
  return false;
}

bool CaptureGate::in_range() const {
  if (spec_.trigger == CaptureSpec::Trigger::kNone) return true;
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

bool CaptureGate::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::vector<std::pair<int64_t, int64_t>> CaptureGate::windows() const {
  std::lock_guard<std::mutex> lock(mu_);
  return windows_;
}

}  // namespace qprof::profiler
