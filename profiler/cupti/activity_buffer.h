// Walks a completed CUPTI activity buffer with cuptiActivityGetNextRecord (through the
// seam) and hands each record to the decoder. The walk is libcupti's own (it knows each
// record kind's size).
#ifndef QPROF_PROFILER_CUPTI_ACTIVITY_BUFFER_H_
#define QPROF_PROFILER_CUPTI_ACTIVITY_BUFFER_H_

#include <cstddef>
#include <cstdint>

#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_api.h"

namespace qprof::profiler::cupti {

struct BufferWalk {
  size_t records = 0;
  bool clean_end = true;    // false when the walk stopped on an error, not at the end
  size_t unread_bytes = 0;  // valid bytes after the last record read (0 at a clean end)
  bool read_short() const { return !clean_end || unread_bytes > 0; }
};

// A walk that ends (CUPTI_ERROR_MAX_LIMIT_REACHED) this many bytes or more before the
// buffer's valid size left records unread. The slack tolerates a newer libcupti whose
// last record is longer than the struct version we read it as.
inline constexpr size_t kUnreadSlackBytes = 64;

// Decodes every record in buffer[0, valid_size). Never throws on a bad buffer: the walk
// stops at the first record CUPTI cannot read; clean_end and unread_bytes say so.
BufferWalk DecodeActivityBuffer(CuptiApi& api, uint8_t* buffer, size_t valid_size,
                                ActivityDecoder* decoder);

// sizeof the record struct the decoder reads for `kind`, 0 for kinds it does not read.
size_t KnownRecordSize(CUpti_ActivityKind kind);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_ACTIVITY_BUFFER_H_
