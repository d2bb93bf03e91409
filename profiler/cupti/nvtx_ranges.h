// NVTX range state while records stream in: which ranges are open on each thread, in
// each NVTX domain, and the closed ranges for the trace.
//
// CUPTI reports NVTX as MARKER records: a START record (name, domain, timestamp, thread)
// and an END record with the same marker id. CUPTI writes host-side records (markers and
// runtime/driver API records) into its buffers as they happen, so on one thread a range's
// START comes before the API records of launches inside it, and its END after them. The
// decoder therefore asks PathOn() when it reads a launch's API record: the ranges open on
// that thread at that moment are those open at the launch. No record has to be kept
// for a later lookup, so a long run holds only its open ranges.
//
// Domains: a named NVTX domain (a library's own, e.g. NCCL's) has its own nesting. The
// default domain gives a launch's nvtx_path; named domains give nvtx_domain_paths, and
// their closed ranges carry the domain as a path prefix ("NCCL::ncclAllReduce"), so a
// library's ranges never nest into the application's path.
//
// Contracts:
//  - Push/pop ranges nest on their thread. Start/end ranges that overlap without nesting
//    are kept; a range's path is the ranges open in its domain when it started.
//  - An END whose START has not arrived yet (records of another thread, delivered in a
//    later buffer) is kept until its START comes; never-matched ENDs are counted.
//  - CloseAll(t) closes what is still open at the end, counted in unclosed().
//
// Plain C++ (no CUPTI types); thread-safety: none (the decoder's caller serialises).
#ifndef QPROF_PROFILER_CUPTI_NVTX_RANGES_H_
#define QPROF_PROFILER_CUPTI_NVTX_RANGES_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

class NvtxTracker {
 public:
  // `domain` is "" for the default domain.
  void OnStart(uint64_t marker_id, const std::string& name, const std::string& domain,
               int64_t ts_ns, uint32_t pid, uint64_t tid);
  void OnEnd(uint64_t marker_id, int64_t ts_ns);

  // The default domain's path open on `tid` now ("" when none); named domains' paths go
  // into *domain_paths (domain -> path) when it is not null.
  std::string PathOn(uint64_t tid, std::map<std::string, std::string>* domain_paths) const;

  // Moves the ranges closed since the last call into *out.
  void TakeClosed(std::vector<RangeData>* out);
  // Closes every range still open at `end_ns` (each counted in unclosed()).
  void CloseAll(int64_t end_ns);

  uint64_t unclosed() const { return unclosed_; }
  uint64_t unmatched_ends() const { return early_ends_.size(); }
  size_t open_ranges() const { return open_.size(); }

 private:
  struct Open {
    std::string name;
    std::string domain;
    std::string path;  // within its domain
    int64_t start_ns = 0;
    uint32_t pid = 0;
    uint64_t tid = 0;
    uint32_t depth = 0;
  };
  void Close(uint64_t marker_id, int64_t end_ns);

  std::unordered_map<uint64_t, Open> open_;  // by marker id
  // tid -> domain -> ids of its open ranges, in start order.
  std::unordered_map<uint64_t, std::map<std::string, std::vector<uint64_t>>> stacks_;
  std::unordered_map<uint64_t, int64_t> early_ends_;  // END before its START
  std::vector<RangeData> closed_;
  uint64_t unclosed_ = 0;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_NVTX_RANGES_H_
