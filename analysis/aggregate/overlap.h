// One GPU's timeline cut into compute, communication, copies and idle time, from the unions
// a device keeps (accumulator.h: DeviceAcc), the way TraceLens's gpu_timeline cuts it
// (TraceLens GPUEventAnalyser.compute_metrics_dict: "Exposed communication time is the time
// spent in communication kernels that is not overlapped by computation. Exposed memcpy time
// is the time spent in memcpy kernels that is not overlapped by computation or
// communication"), with memsets counted as copies (TraceLens counts them as computation):
//
//   compute       |C|, the union of non-comm kernels
//   comm exposed  |K| - |C|, where K = all kernels = C u M (M the comm kernels): the part of
//                 M no compute kernel overlaps; hidden = |M| - exposed
//   copy exposed  |K u P| - |K| (P the copies): the part no kernel overlaps
//   idle          span of K - |K| (the kernels' span: gaps between kernels, as Profile.idle)
//   band          compute + comm exposed + copy exposed + (band span - |K u P|) = band span,
//                 the first start to the last end of kernels and copies
// Every figure is a length of unions, so it is exact unless records came far out of order
// (interval_union.h); error_ns bounds how far off the figures may then be.
#ifndef QPROF_ANALYSIS_AGGREGATE_OVERLAP_H_
#define QPROF_ANALYSIS_AGGREGATE_OVERLAP_H_

#include <cstdint>

#include "analysis/aggregate/accumulator.h"

namespace qprof::aggregate {

struct DeviceTimeline {
  uint64_t span_ns = 0;          // first kernel start to last kernel end
  uint64_t busy_ns = 0;          // |K|
  uint64_t idle_ns = 0;          // span - busy
  uint64_t compute_ns = 0;       // |C|
  uint64_t comm_ns = 0;          // |M|
  uint64_t comm_exposed_ns = 0;
  uint64_t comm_hidden_ns = 0;
  uint64_t copy_ns = 0;          // |P|
  uint64_t copy_exposed_ns = 0;
  uint64_t copy_hidden_ns = 0;
  uint64_t band_span_ns = 0;     // kernels and copies: first start to last end
  uint64_t error_ns = 0;         // sum of the unions' late bounds
};

DeviceTimeline TimelineOf(const DeviceAcc& d);

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_OVERLAP_H_
