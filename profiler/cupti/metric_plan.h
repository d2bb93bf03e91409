// Which hardware metrics to collect on a chip, and how to read them back into
// proto::KernelMetrics. Plain C++: the chip's base metric names come in as strings
// (from cuptiProfilerHostGetBaseMetrics), so the choice is tested on a CPU.
//
// The set is built from what the chip offers, not from a table of chip names:
//  tensor pipe  sm__pipe_tensor_cycles_active (sm_70..sm_120: mma.sync/wgmma), plus
//               sm__pipe_tc_cycles_active where present (sm_100 tcgen05); the reported
//               tensor_pipe_pct is the larger of the two, since either pipe doing MMA
//               work means the kernel runs on tensor cores.
//  instructions sm__inst_executed_pipe_tensor_op_hmma / _gmma (.sum, raw evidence).
//  FMA pipe     sm__pipe_fma_cycles_active, or the fmaheavy counter where only the split
//               exists; sm__inst_executed_pipe_fma.sum raw.
//  memory       dram__throughput, as % of peak sustained over the elapsed time.
//  SM           sm__throughput, same.
// Pipe utilisations use ".avg.pct_of_peak_sustained_active" (share of cycles the SMs were
// active, what Nsight Compute shows as pipe utilisation); throughputs use "...elapsed".
#ifndef QPROF_PROFILER_CUPTI_METRIC_PLAN_H_
#define QPROF_PROFILER_CUPTI_METRIC_PLAN_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/trace.pb.h"

namespace qprof::profiler::cupti {

struct MetricPlan {
  std::vector<std::string> metrics;        // full names to request, in order
  std::vector<std::string> tensor_pct;     // full names whose max is tensor_pipe_pct
  std::string fma_pct;                     // "" when the chip has none
  std::string dram_pct;
  std::string sm_pct;
  std::vector<std::string> not_offered;    // base metrics we wanted and the chip lacks
};

// `base_metrics`: every base metric the chip offers (all metric types together).
// `extra`: user-requested full names, appended as they are.
MetricPlan ChooseMetrics(const std::set<std::string>& base_metrics,
                         const std::vector<std::string>& extra);

// Removes a metric that the chip's config rejected (keeps the plan consistent).
void DropMetric(MetricPlan* plan, const std::string& full_name);

// Fills `out` from values evaluated for one range; names[i] has values[i].
// Every value goes into raw; the four summary fields are set when their metric exists.
void FillKernelMetrics(const MetricPlan& plan, const std::vector<std::string>& names,
                       const std::vector<double>& values, proto::KernelMetrics* out);

// The text stored in CollectorStats.metrics_unavailable_reason when the metrics pass
// could not run: what failed and, for permission problems, how to enable counters.
// PermissionDenied -> counters are admin-only; FailedPrecondition -> another profiler
// owns the GPU counters; anything else -> the status text.
std::string MetricsUnavailableReason(const absl::Status& failure);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_METRIC_PLAN_H_
