// What the collector counted while running, turned into CollectorStats for the trace
// header. Plain (no CUPTI), so the accounting of losses is tested on a CPU.
#ifndef QPROF_PROFILER_CUPTI_COLLECTOR_STATS_H_
#define QPROF_PROFILER_CUPTI_COLLECTOR_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/trace.pb.h"

namespace qprof::profiler::cupti {

struct CollectorCounters {
  uint64_t records_dropped = 0;    // sum of cuptiActivityGetNumDroppedRecords
  uint64_t buffers_allocated = 0;
  uint64_t buffer_bytes = 0;
  uint64_t buffers_refused = 0;    // requests answered with no buffer (cap reached)
  uint64_t cap_bytes = 0;
  uint64_t callback_errors = 0;    // exceptions caught in CUPTI callbacks
  uint64_t buffer_errors = 0;      // buffers whose record walk stopped early
  std::vector<std::string> warnings;
};

// Adds the counters to `stats` (counts add up, so several collectors may fill one trace)
// and explains every loss in a warning.
void AddCollectorCounters(const CollectorCounters& c, proto::CollectorStats* stats);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_COLLECTOR_STATS_H_
