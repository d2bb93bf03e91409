// What the collector counted while running, turned into CollectorStats for the trace.
// Plain (no CUPTI, no protobuf), so the accounting of losses is tested on a CPU.
//
// The accounting the trace promises (proto/trace.proto, CollectorStats):
//   buffers_requested = buffers handed out + buffers_refused
//   every GPU record CUPTI produced is in records_written, or counted in
//   records_dropped (no buffer space: CUPTI's own count), records_invalid,
//   records_outside_window, records_over_cap, or lost with a buffer that was read short
//   (buffers_read_short) or completed after the collector stopped (buffers_late), or in
//   a buffer that never came back (cupti_detail.buffers_not_returned: another tool took it).
// Every nonzero loss also gets one warning line saying what it means.
#ifndef QPROF_PROFILER_CUPTI_COLLECTOR_STATS_H_
#define QPROF_PROFILER_CUPTI_COLLECTOR_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/cupti/activity_decoder.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

struct CollectorCounters {
  uint64_t records_dropped = 0;    // sum of cuptiActivityGetNumDroppedRecords
  uint64_t buffers_requested = 0;
  uint64_t buffers_refused = 0;    // requests answered with no buffer (cap reached)
  uint64_t buffers_completed = 0;
  uint64_t buffers_late = 0;       // completed after the collector stopped
  uint64_t late_records = 0;       // records in those buffers (not in the trace)
  uint64_t buffers_read_short = 0; // record walks that ended early
  uint64_t unread_bytes = 0;       // bytes those walks left unread
  uint64_t buffers_allocated = 0;
  uint64_t buffer_bytes = 0;
  uint64_t cap_bytes = 0;
  uint64_t callback_errors = 0;    // exceptions caught in CUPTI callbacks
  uint64_t buffers_not_returned = 0;  // handed to CUPTI, never completed back to us
  uint64_t launches_captured = 0;  // launches made during stream capture (callbacks)
  uint64_t graph_launches = 0;     // executable-graph launches (callbacks)
  std::vector<std::string> warnings;
};

// Fills the accounting fields of `out` from the counters and the decoder's statistics
// (`records_written`: activities the trace holds) and adds one warning per loss.
void FillCollectorStats(const CollectorCounters& c, const DecoderStats& d,
                        uint64_t records_written, CollectorStatsData* out);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_COLLECTOR_STATS_H_
