// Which hardware metrics to collect on a chip, and how to read them back into
// MetricsData. Plain C++: the chip's base metric names come in as strings (from
// cuptiProfilerHostGetBaseMetrics), so the choice is tested on a CPU, and against the
// real libcupti's offline metric lists per chip (no GPU needed).
//
// The set is built from what the chip offers, not from a table of chip names:
//  tensor pipe  sm__pipe_tensor_cycles_active (sm_70..sm_120: mma.sync/wgmma), plus
//               sm__pipe_tc_cycles_active where present (sm_100 tcgen05); the reported
//               tensor_pipe_pct is the larger of the two, since either pipe doing MMA
//               work means the kernel runs on tensor cores.
//  tensor instructions (raw evidence, .sum), each where the chip has it:
//               sm__inst_executed_pipe_tensor          all chips: every tensor-pipe instruction
//               sm__inst_executed_pipe_tensor_op_hmma  GA100/AD102/GH100: mma.sync
//               sm__inst_executed_pipe_tensor_op_gmma  GH100: wgmma
//               sm__inst_executed_pipe_tensor_subpipe_hmma  GB100/GB202: mma.sync
//               sm__inst_executed_pipe_tc              GB100: tcgen05
//               (names checked with libcupti 13.0.1's offline lists for GA100, AD102,
//               GH100, GB100, GB202; a chip without any is said in the trace).
//  FMA pipe     sm__pipe_fma_cycles_active, or the fmaheavy counter where only the split
//               exists; sm__inst_executed_pipe_fma.sum raw.
//  memory       dram__throughput, as % of peak sustained over the elapsed time.
//  identity     sm__ctas_launched.sum: the CTAs the range launched, which must equal the
//               grid of the launch the range is matched to (range_match.h), and
//               sm__threads_launched.sum, which must equal grid x block. They share a
//               pass with the utilisations on every chip checked offline.
//  SM           sm__throughput, same as dram (full set only, see below).
// Pipe utilisations use ".avg.pct_of_peak_sustained_active" (share of cycles the SMs were
// active, what Nsight Compute shows as pipe utilisation); throughputs use "...elapsed".
//
// Cost: kernel replay runs every kernel once per counter pass, saving and restoring its
// memory each time. Pass counts from libcupti 13.0's own scheduler, offline
// (cuptiProfilerHostGetNumOfPasses on a config image made from the chip name alone;
// profiler_cupti_real_test asserts them):
//   default set (all of the above but sm__throughput): GH100 3, GB100 3, GA100/AD102/GB202 2
//   full set (+ sm__throughput):                        GH100 10, GB100 9
// sm__throughput alone needs 8 passes on GH100 (it is a max over many unit
// throughputs), so it is opt-in (`qprof record --metrics full`). The three utilisations
// and the CTA count alone fit one pass everywhere; the tensor instruction counters add
// the second and third.
//
// Why names are validated before they are added: once cuptiProfilerHostConfigAddMetrics
// refuses one name, libcupti 13.0.1 answers every later call on that host object with
// CUPTI_ERROR_UNKNOWN (seen offline for GH100 and GB202), so a bad name must never reach
// it. KeepOffered() checks each full name against the chip's sub-metric list first.
#ifndef QPROF_PROFILER_CUPTI_METRIC_PLAN_H_
#define QPROF_PROFILER_CUPTI_METRIC_PLAN_H_

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "profiler/core_status.h"
#include "profiler/trace_data.h"

namespace qprof::profiler::cupti {

// Which metrics to ask for: the cheap default, or everything (adds sm__throughput).
enum class MetricSet { kDefault, kFull };
const char* MetricSetName(MetricSet set);  // "default", "full"
// "default"/"" -> kDefault, "full" -> kFull; false for anything else.
bool ParseMetricSet(const std::string& text, MetricSet* set);

struct MetricPlan {
  MetricSet set = MetricSet::kDefault;
  std::vector<std::string> metrics;        // full names to request, in order
  std::vector<std::string> tensor_pct;     // full names whose max is tensor_pipe_pct
  std::vector<std::string> tensor_inst;    // tensor instruction counters (raw evidence)
  std::string fma_pct;                     // "" when the chip has none
  std::string dram_pct;
  std::string sm_pct;
  std::string ctas;                        // sm__ctas_launched.sum ("" when the chip lacks it)
  std::string threads;                     // sm__threads_launched.sum ("" likewise)
  std::vector<std::string> not_offered;    // full or base names wanted that the chip lacks
  std::vector<std::string> missing;        // one line per kind of evidence the chip lacks
};

// `chip`: for messages ("GB202"). `base_metrics`: every base metric the chip offers (all
// metric types together). `extra`: user-requested full names, appended as they are.
MetricPlan ChooseMetrics(const std::string& chip, const std::set<std::string>& base_metrics,
                         const std::vector<std::string>& extra,
                         MetricSet set = MetricSet::kDefault);

// "sm__throughput.avg.pct_of_peak_sustained_elapsed" -> {"sm__throughput",
// ".avg.pct_of_peak_sustained_elapsed"}; a name without '.' has an empty suffix.
std::pair<std::string, std::string> SplitMetricName(const std::string& full_name);

// Drops every metric for which offered(base, suffix) is false (recorded in not_offered
// and returned), keeping the plan's roles consistent.
std::vector<std::string> KeepOffered(
    MetricPlan* plan,
    const std::function<bool(const std::string& base, const std::string& suffix)>& offered);

// Removes one metric and its role.
void DropMetric(MetricPlan* plan, const std::string& full_name);

// Fills `out` from values evaluated for one range; names[i] has values[i].
// Every finite value goes into raw; the four summary fields are set when their metric
// exists.
void FillKernelMetrics(const MetricPlan& plan, const std::vector<std::string>& names,
                       const std::vector<double>& values, MetricsData* out);

// The line printed when counters need permission (also stored in CollectorStats).
inline constexpr char kCounterPermissionHint[] =
    "GPU performance counters need permission: run as root, or set the driver option "
    "NVreg_RestrictProfilingToAdminUsers=0 (e.g. in /etc/modprobe.d/nvidia-prof.conf, then "
    "reload the driver); trace mode and SASS evidence still work without it";

// The text stored in CollectorStats.metrics_unavailable_reason when the metrics pass
// could not run: what failed and, for permission problems, how to enable counters.
// PermissionDenied -> counters are admin-only; FailedPrecondition -> another profiler
// owns the GPU counters; anything else -> the status text.
std::string MetricsUnavailableReason(const CoreStatus& failure);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_METRIC_PLAN_H_
