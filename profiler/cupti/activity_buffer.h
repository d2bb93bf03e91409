// Walks a completed CUPTI activity buffer with cuptiActivityGetNextRecord and hands each
// record to the decoder. The walk is libcupti's own (it knows each record kind's size),
// and works without a GPU, so tests run it over buffers built from real record structs.
#ifndef QPROF_PROFILER_CUPTI_ACTIVITY_BUFFER_H_
#define QPROF_PROFILER_CUPTI_ACTIVITY_BUFFER_H_

#include <cstddef>
#include <cstdint>

#include "profiler/cupti/activity_decoder.h"

namespace qprof::profiler::cupti {

struct BufferWalk {
  size_t records = 0;
  bool clean_end = true;  // false when the walk stopped on an error, not at the end
};

// Decodes every record in buffer[0, valid_size). Never throws on a bad buffer: the walk
// stops at the first record CUPTI cannot read, and clean_end says so.
BufferWalk DecodeActivityBuffer(uint8_t* buffer, size_t valid_size, ActivityDecoder* decoder);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_ACTIVITY_BUFFER_H_
