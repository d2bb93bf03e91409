// The collector interface: something that records GPU (or host) activity while a workload
// runs and hands it over as trace records. Implementations: profiler/host (steady-clock
// timing of the CPU backend's kernels) and profiler/cupti (CUPTI activity + metrics).
//
// Contract: Start() once, then Stop() once, then Flush() moves everything recorded into
// `trace` (appending activities and ranges, filling devices and header.collector).
// Collectors never throw and never terminate the process: failures come back as statuses,
// and losses (dropped or invalid records) are counted in CollectorStats.
#ifndef QPROF_PROFILER_COLLECTOR_H_
#define QPROF_PROFILER_COLLECTOR_H_

#include "absl/status/status.h"
#include "proto/trace.pb.h"

namespace qprof::profiler {

class Collector {
 public:
  virtual ~Collector() = default;
  virtual absl::Status Start() = 0;
  virtual absl::Status Stop() = 0;
  virtual absl::Status Flush(proto::Trace* trace) = 0;
};

}  // namespace qprof::profiler

#endif  // QPROF_PROFILER_COLLECTOR_H_
