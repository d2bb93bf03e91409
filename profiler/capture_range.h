// Capture ranges: record only the work a program brackets, as Nsight Systems does with
// `--capture-range` (`-c`), `--nvtx-capture` (`-p`), `--capture-range-end` and `--delay`.
// A serving engine runs until it is stopped; its users bracket the steps they care about
// with cudaProfilerStart/Stop (vLLM's and SGLang's /start_profile and /stop_profile in
// their CUDA-profiler mode) or with an NVTX range, and nsys records only those.
//
// Semantics, from NVIDIA's documentation of the same options:
//  - cudaProfilerApi: a range starts at cudaProfilerStart (cuProfilerStart) and ends at
//    cudaProfilerStop; a start while one is open, or a stop while none is, has no effect
//    ("If profiling is already enabled, then cudaProfilerStart() has no effect").
//  - nvtx: a range starts when an NVTX range with the given message opens (push/pop or
//    start/end, in the given domain: NAME@DOMAIN, NAME@* for any domain, the default
//    domain otherwise) and ends when that range closes. Only ASCII messages are matched.
//  - capture-range-end: stop-shutdown (nsys's default: stop recording at the end of the
//    first range and end the program), stop (the program keeps running), none (range ends
//    are ignored: record until the program ends), repeat[:N] (every range, or the first N),
//    repeat-shutdown:N (the first N, then end the program).
//  - delay: nothing is recorded during the first S seconds.
// Which work a range holds: the GPU work LAUNCHED while it is open (its launch API call's
// start time), so kernels launched inside and finishing after are kept, and kernels
// launched before it are not, however late they run. Graph replays launched inside are
// kept whole.
//
// Plain C++ (no CUPTI): the CUPTI collector feeds CaptureGate from its callbacks.
// Thread-safety: CaptureGate may be called from any thread.
#ifndef QPROF_PROFILER_CAPTURE_RANGE_H_
#define QPROF_PROFILER_CAPTURE_RANGE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace qprof::profiler {

struct CaptureSpec {
  enum class Trigger { kNone, kProfilerApi, kNvtx };
  enum class End { kStopShutdown, kStop, kNone, kRepeat, kRepeatShutdown };
  Trigger trigger = Trigger::kNone;
  std::string nvtx_name;    // kNvtx: the range's message
  std::string nvtx_domain;  // "" the default domain, "*" any domain
  End end = End::kStopShutdown;
  uint32_t limit = 0;       // repeat: at most this many ranges (0: every one)
  double delay_s = 0;

  bool shutdown() const { return end == End::kStopShutdown || end == End::kRepeatShutdown; }
  // How traces and messages name the range: "cudaProfilerApi", "nvtx:step@*", "none".
  std::string Describe() const;
  // nsys's spelling of `end` ("stop-shutdown", "repeat:3", ...).
  std::string EndText() const;
};

// nsys's spellings. `--capture-range`: none | cudaProfilerApi | nvtx, plus the shorthand
// nvtx:NAME[@DOMAIN]. `--nvtx-capture`: NAME[@DOMAIN]. `--capture-range-end`: stop |
// stop-shutdown | none | repeat[:N] | repeat-shutdown:N. False with a one-line *error.
bool ParseCaptureRange(const std::string& text, CaptureSpec* spec, std::string* error);
bool ParseNvtxCapture(const std::string& text, CaptureSpec* spec, std::string* error);
bool ParseCaptureRangeEnd(const std::string& text, CaptureSpec* spec, std::string* error);

// The state of capture ranges over a run, fed with what the program does, in CUPTI
// timestamps (ns). Work launched at time t is recorded iff OpenAt(t).
class CaptureGate {
 public:
  CaptureGate(CaptureSpec spec, int64_t start_ns);

  enum class Change { kNone, kOpened, kClosed };
  Change ProfilerStart(int64_t now);
  Change ProfilerStop(int64_t now);
  // NVTX push/pop on `thread` in `domain` ("" = default), start/end by range id.
  Change NvtxPush(uint64_t thread, const std::string& domain, const char* message, int64_t now);
  Change NvtxPop(uint64_t thread, const std::string& domain, int64_t now);
  Change NvtxStart(uint64_t id, const std::string& domain, const char* message, int64_t now);
  Change NvtxEnd(uint64_t id, int64_t now);

  // After the delay, and inside a capture range when one is set.
  bool OpenAt(int64_t t) const;
  // A capture range is open now (delay aside).
  bool in_range() const;
  // No later range will be recorded (stop after the first, repeat:N after N).
  bool done() const;
  // Ranges opened so far, and their [start, end) (end INT64_MAX while open).
  std::vector<std::pair<int64_t, int64_t>> windows() const;
  const CaptureSpec& spec() const { return spec_; }
  int64_t delay_end_ns() const { return delay_end_; }

 private:
  bool Matches(const std::string& domain, const char* message) const;
  Change Open(int64_t now);   // caller holds mu_
  Change Close(int64_t now);  // caller holds mu_

  const CaptureSpec spec_;
  const int64_t delay_end_;
  mutable std::mutex mu_;
  std::vector<std::pair<int64_t, int64_t>> windows_;
  bool open_ = false;
  bool done_ = false;
  // NVTX: push depth per (thread, domain); the depth and thread the open range came from.
  std::map<std::pair<uint64_t, std::string>, int> depth_;
  std::pair<uint64_t, std::string> opened_on_;
  int opened_depth_ = 0;
  uint64_t opened_id_ = 0;
  bool opened_by_push_ = false;
};

}  // namespace qprof::profiler

#endif  // QPROF_PROFILER_CAPTURE_RANGE_H_
