// Helpers shared by the importers: UTF-8 repair, progress lines, NVTX range nesting.
//
// RangeNester is the one place that turns per-thread ranges into paths. Both nsys (NVTX
// push/pop) and Kineto (user_annotation) feed it: ranges on a thread, and "launch points"
// (thread, time) of kernels. A launch gets the "/"-joined names of the ranges open on its
// thread at its time, outermost first; ranges are half-open [start, end). Ranges that
// cross instead of nesting are tolerated: a range is closed when it is on top of the stack
// and has ended, so a crossed range may stay on the stack a little longer than it lived.
#ifndef QPROF_ANALYSIS_IMPORTERS_COMMON_IMPORT_UTIL_H_
#define QPROF_ANALYSIS_IMPORTERS_COMMON_IMPORT_UTIL_H_

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/importers/common/trace_sink.h"
#include "base/text.h"
#include "proto/trace.pb.h"

namespace qprof::importers {

// UTF-8 validation and repair live in base/text.h.
using ::qprof::IsValidUtf8;
using ::qprof::RepairUtf8;
using ::qprof::Utf8Clean;

// Prints "qprof: <what>: <n> <unit> ..." on stderr at most once a second, and only after
// the first second, so short imports stay silent.
class Progress {
 public:
  Progress(bool enabled, std::string what);
  // Call often (per row); cheap: the clock is read every 64th call. `done`/`total` in bytes
  // or rows (total 0 = unknown).
  void Update(uint64_t done, uint64_t total, const char* unit);
  // For calls that come rarely (per MiB read): reads the clock every time.
  void UpdateNow(uint64_t done, uint64_t total, const char* unit);
  void Finish();

 private:
  bool enabled_;
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  uint64_t calls_ = 0;
  bool printed_ = false;
};

struct ThreadKey {
  uint32_t pid = 0;
  uint64_t tid = 0;
  bool operator==(const ThreadKey& o) const { return pid == o.pid && tid == o.tid; }
  bool operator<(const ThreadKey& o) const {
    return pid != o.pid ? pid < o.pid : tid < o.tid;
  }
};

class RangeNester {
 public:
  static constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();
  // A range; `end` = kOpenEnd when the source never closed it.
  void AddRange(ThreadKey thread, int64_t start, int64_t end, std::string name);
  // A kernel (index into the caller's activities) launched on `thread` at `time`.
  void AddLaunch(ThreadKey thread, int64_t time, int activity_index);
  // Sets nvtx_path on the activities named by AddLaunch, and appends every range (with its
  // path and depth) to trace->ranges. Call once.
  void Resolve(proto::Trace* trace);
  size_t range_count() const { return ranges_.size(); }

 private:
  struct Range {
    ThreadKey thread;
    int64_t start;
    int64_t end;
    std::string name;
  };
  struct Launch {
    ThreadKey thread;
    int64_t time;
    int index;
  };
  std::vector<Range> ranges_;
  std::vector<Launch> launches_;
};

// Sets schema/provenance/source fields of an imported trace's header.
void FillImportedHeader(proto::Trace* trace, const std::string& path, const char* kind);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_COMMON_IMPORT_UTIL_H_
