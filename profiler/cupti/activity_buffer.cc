#include "profiler/cupti/activity_buffer.h"

namespace qprof::profiler::cupti {

size_t KnownRecordSize(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2: return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_MARKER: return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_OVERHEAD: return sizeof(CUpti_ActivityOverhead3);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_DEVICE: return sizeof(CUpti_ActivityDevice5);
    default: return 0;
  }
}

BufferWalk DecodeActivityBuffer(CuptiApi& api, uint8_t* buffer, size_t valid_size,
                                ActivityDecoder* decoder) {
  BufferWalk walk;
  if (buffer == nullptr || valid_size == 0) return walk;
  CUpti_Activity* record = nullptr;
  size_t end_of_last = 0;     // offset just past the last record read
  bool last_known = true;     // its size is known (else the tail cannot be checked)
  for (;;) {
    const CUptiResult r = api.ActivityGetNextRecord(buffer, valid_size, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;  // the normal end of the buffer
    if (r != CUPTI_SUCCESS || record == nullptr) {
      walk.clean_end = false;
      break;
    }
    decoder->Add(record);
    ++walk.records;
    const size_t size = KnownRecordSize(record->kind);
    last_known = size != 0;
    end_of_last = static_cast<size_t>(reinterpret_cast<uint8_t*>(record) - buffer) + size;
  }
  if (walk.records == 0) {
    walk.unread_bytes = valid_size;
  } else if (last_known && end_of_last + kUnreadSlackBytes <= valid_size) {
    walk.unread_bytes = valid_size - end_of_last;
  }
  if (!walk.clean_end && walk.unread_bytes == 0 && last_known && end_of_last < valid_size) {
    walk.unread_bytes = valid_size - end_of_last;
  }
  return walk;
}

}  // namespace qprof::profiler::cupti
