// Joins per-kernel metrics from a metrics pass (kernel replay, distorted timing) onto the
// kernels of a trace pass (real timing). Plain C++ on protos; no CUPTI.
//
// Matching: kernels are matched by name (demangled; a mangled name on either side is
// compared too) and by occurrence: the k-th launch of "gemv<...>" in the metrics pass
// goes to the k-th launch of that name in the trace pass, in start order. That is exact
// for a deterministic workload run twice. When a name was launched a different number of
// times in the two passes (or the metrics pass ran out of ranges), every trace kernel of
// that name gets the mean over the metrics pass's launches of it, and its source says so.
#ifndef QPROF_PROFILER_CUPTI_METRICS_JOIN_H_
#define QPROF_PROFILER_CUPTI_METRICS_JOIN_H_

#include <cstdint>

#include "proto/trace.pb.h"

namespace qprof::profiler::cupti {

struct JoinStats {
  uint64_t matched_by_occurrence = 0;
  uint64_t matched_by_name_mean = 0;
  uint64_t unmatched = 0;   // trace kernels whose name the metrics pass never saw
};

// Copies metrics (and metrics availability from the header) from `metrics_pass` into
// `trace`. Activities in `metrics_pass` are the kernels in launch order, with `name` set
// (the collector ties each range to its launch, range_match.h). The trace's
// CollectorStats records how many of its kernels got metrics and how many did not, and
// takes the metrics pass's cost and refusals (cupti_detail: metric set, passes, ranges
// refused, contexts not profiled).
JoinStats JoinKernelMetrics(const proto::Trace& metrics_pass, proto::Trace* trace);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_METRICS_JOIN_H_
