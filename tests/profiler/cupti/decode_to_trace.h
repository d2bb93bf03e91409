// Test helper: everything a decoder holds, as a proto::Trace (activities sorted by start,
// as the in-process collector hands them over), with the decoder's counts in the header.
#ifndef QPROF_TESTS_PROFILER_CUPTI_DECODE_TO_TRACE_H_
#define QPROF_TESTS_PROFILER_CUPTI_DECODE_TO_TRACE_H_

#include <algorithm>

#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/collector_stats.h"
#include "profiler/trace_data_proto.h"
#include "proto/trace.pb.h"

namespace qprof::profiler::cupti::testing {

inline proto::Trace DecodeToTrace(ActivityDecoder* decoder) {
  DecodedBatch batch;
  decoder->TakeReady(&batch, /*final=*/true);
  std::stable_sort(batch.activities.begin(), batch.activities.end(),
                   [](const ActivityData& a, const ActivityData& b) { return a.start_ns < b.start_ns; });
  proto::Trace trace;
  for (const ActivityData& a : batch.activities) ToProto(a, trace.add_activities());
  for (const RangeData& r : batch.ranges) ToProto(r, trace.add_ranges());
  for (const DeviceData& d : batch.devices) ToProto(d, trace.mutable_header()->add_devices());
  CollectorStatsData stats;
  FillCollectorStats(CollectorCounters{}, decoder->stats(), batch.activities.size(), &stats);
  ToProto(stats, trace.mutable_header()->mutable_collector());
  return trace;
}

}  // namespace qprof::profiler::cupti::testing

#endif  // QPROF_TESTS_PROFILER_CUPTI_DECODE_TO_TRACE_H_
