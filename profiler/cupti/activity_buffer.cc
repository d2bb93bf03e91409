#include "profiler/cupti/activity_buffer.h"

#include <cupti_activity.h>

namespace qprof::profiler::cupti {

BufferWalk DecodeActivityBuffer(uint8_t* buffer, size_t valid_size, ActivityDecoder* decoder) {
  BufferWalk walk;
  if (buffer == nullptr || valid_size == 0) return walk;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the normal end of the buffer
    if (r != CUPTI_SUCCESS) {
      walk.clean_end = false;
      break;
    }
    decoder->Add(record);
    ++walk.records;
  }
  return walk;
}

}  // namespace qprof::profiler::cupti
