#include "profiler/cupti/collector_stats.h"

namespace qprof::profiler::cupti {

void AddCollectorCounters(const CollectorCounters& c, proto::CollectorStats* s) {
  s->set_records_dropped(s->records_dropped() + c.records_dropped);
  s->set_buffers_allocated(s->buffers_allocated() + c.buffers_allocated);
  s->set_buffer_bytes(s->buffer_bytes() + c.buffer_bytes);
  for (const std::string& w : c.warnings) s->add_warnings(w);
  if (c.records_dropped > 0) {
    s->add_warnings(std::to_string(c.records_dropped) +
                    " activity records were dropped by CUPTI (no buffer space): the trace "
                    "misses them");
  }
  if (c.buffers_refused > 0) {
    s->add_warnings(std::to_string(c.buffers_refused) + " buffer requests refused at the " +
                    std::to_string(c.cap_bytes >> 20) + " MiB cap");
  }
  if (c.buffer_errors > 0) {
    s->add_warnings(std::to_string(c.buffer_errors) +
                    " activity buffers could not be read to the end");
  }
  if (c.callback_errors > 0) {
    s->add_warnings(std::to_string(c.callback_errors) +
                    " CUPTI callbacks failed (out of memory?)");
  }
}

}  // namespace qprof::profiler::cupti
