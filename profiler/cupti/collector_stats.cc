#include "profiler/cupti/collector_stats.h"

namespace qprof::profiler::cupti {
namespace {

std::string N(uint64_t v) { return std::to_string(v); }

}  // namespace

void FillCollectorStats(const CollectorCounters& c, const DecoderStats& d,
                        uint64_t records_written, CollectorStatsData* s) {
  s->records_dropped += c.records_dropped;
  s->records_invalid += d.records_invalid;
  s->records_total += d.records_total;
  s->overhead_ns += d.overhead_ns;
  s->buffers_allocated += c.buffers_allocated;
  s->buffer_bytes += c.buffer_bytes;
  s->buffers_requested += c.buffers_requested;
  s->buffers_refused += c.buffers_refused;
  s->buffers_completed += c.buffers_completed;
  s->buffers_late += c.buffers_late;
  s->buffers_read_short += c.buffers_read_short;
  s->records_gpu += d.records_gpu;
  s->records_written += records_written;
  s->records_outside_window += d.records_outside_window;
  s->records_over_cap += d.over_cap;
  s->records_unattributed += d.unattributed;
  s->records_unknown_kind += d.records_unknown;
  CuptiDetailData& detail = s->cupti_detail ? *s->cupti_detail : s->cupti_detail.emplace();
  detail.records_incomplete += d.records_incomplete;
  detail.buffers_not_returned += c.buffers_not_returned;
  detail.launches_captured += c.launches_captured;
  detail.graph_launches += c.graph_launches;
  detail.graph_kernels_capture_path += d.graph_kernels_capture_path;
  detail.graph_kernels_unmapped += d.graph_kernels_unmapped;
  for (const std::string& w : c.warnings) s->warnings.push_back(w);
  auto warn = [s](std::string line) { s->warnings.push_back(std::move(line)); };
  if (c.records_dropped > 0) {
    warn(N(c.records_dropped) + " activity records were dropped by CUPTI (no buffer space): "
         "the trace misses them");
  }
  if (c.buffers_refused > 0) {
    warn(N(c.buffers_refused) + " buffer requests refused at the " + N(c.cap_bytes >> 20) +
         " MiB cap");
  }
  if (c.buffers_read_short > 0) {
    warn(N(c.buffers_read_short) + " activity buffers could not be read to the end (" +
         N(c.unread_bytes) + " bytes of records unread)");
  }
  if (c.buffers_late > 0) {
    warn(N(c.buffers_late) + " activity buffers (" + N(c.late_records) +
         " records) were completed after the collector stopped: not in the trace");
  }
  if (d.records_incomplete > 0) {
    warn(N(d.records_incomplete) + " GPU records came back without timestamps: their kernels "
         "were still running when the collector stopped (forced flush); left out, counted in "
         "records_invalid");
  }
  if (c.buffers_not_returned > 0) {
    warn(N(c.buffers_not_returned) + " activity buffers handed to CUPTI never came back: "
         "another tool registered its own activity buffer callbacks after qprof (torch.profiler/"
         "Kineto needs no CUPTI subscriber to do so) and took them; their records and every "
         "later one are lost to this trace");
  }
  if (d.graph_kernels_unmapped > 0) {
    warn(N(d.graph_kernels_unmapped) + " replayed CUDA-graph kernels keep their graph launch's "
         "NVTX path: the capture of their node was not seen (captured before the collector "
         "started, or built node by node)");
  }
  if (c.callback_errors > 0) {
    warn(N(c.callback_errors) + " CUPTI callbacks failed (out of memory?)");
  }
  if (d.unattributed > 0) {
    warn(N(d.unattributed) + " GPU records had no launch API record (no thread/NVTX path)");
  }
  if (d.over_cap > 0) {
    warn(N(d.over_cap) + " GPU records beyond the in-memory limit were left out (use "
         "--duration to profile a window)");
  }
  if (d.records_outside_window > 0) {
    warn(N(d.records_outside_window) + " GPU records outside the --duration window, the --delay or the capture range were left out");
  }
}

}  // namespace qprof::profiler::cupti
