// NVTX range reconstruction and "range open at time t on thread T" lookup.
//
// CUPTI reports NVTX as MARKER records: a START record (name, timestamp, thread) and an
// END record with the same marker id. This file pairs them into closed ranges, computes
// each range's nesting (depth, parent, full path "decode/step 3/layer 12/moe") per
// thread, and answers: which path was open on thread T at time t? That is how a kernel
// gets the NVTX path of its launch: the runtime/driver API record that launched it
// (joined on correlation id) gives the thread and the launch time.
//
// Plain C++ (no CUPTI types), so it is tested on the CPU.
//
// Contracts:
//  - Ranges on one thread are assumed properly nested (push/pop). Start/end ranges
//    that overlap without nesting are kept, but lookups return the innermost range
//    whose interval contains t by the nesting computed from start order.
//  - A START without END is closed at the last timestamp seen (`Finish(end_of_trace)`)
//    and counted in unclosed().
//  - An END without START is counted in unmatched_ends() and ignored.
#ifndef QPROF_PROFILER_CUPTI_NVTX_RANGES_H_
#define QPROF_PROFILER_CUPTI_NVTX_RANGES_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace qprof::profiler::cupti {

struct ClosedRange {
  std::string name;
  std::string path;      // ancestors' names and this one joined with '/'
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  uint32_t depth = 0;    // 0 = outermost on its thread
  int parent = -1;       // index into the same thread's range list, -1 for none
};

class NvtxRangeIndex {
 public:
  // Marker events, in any order.
  void OnStart(uint64_t marker_id, const std::string& name, int64_t ts_ns, uint32_t pid,
               uint64_t tid);
  void OnEnd(uint64_t marker_id, int64_t ts_ns);

  // Pairs up and indexes the ranges. `end_of_trace_ns` closes ranges left open.
  // Call once, after all OnStart/OnEnd and before PathAt/ranges.
  void Finish(int64_t end_of_trace_ns);

  // Path of the innermost range open on `tid` at `t_ns` (start <= t < end), or "".
  const std::string& PathAt(uint64_t tid, int64_t t_ns) const;

  // All ranges, grouped by thread, sorted by start within a thread.
  std::vector<const ClosedRange*> AllRanges() const;

  uint64_t unclosed() const { return unclosed_; }
  uint64_t unmatched_ends() const { return unmatched_ends_; }

 private:
  struct Start {
    std::string name;
    int64_t start_ns;
    uint32_t pid;
    uint64_t tid;
  };
  // Kept apart until Finish(): records may arrive out of order across buffers.
  std::unordered_map<uint64_t, Start> starts_;                   // by marker id
  std::unordered_map<uint64_t, int64_t> ends_;                   // by marker id
  std::unordered_map<uint64_t, std::vector<ClosedRange>> by_thread_;
  uint64_t unclosed_ = 0;
  uint64_t unmatched_ends_ = 0;
  bool finished_ = false;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_NVTX_RANGES_H_
