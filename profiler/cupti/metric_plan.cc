#include "profiler/cupti/metric_plan.h"

#include <algorithm>
#include <cmath>

#include "profiler/cupti/cupti_collector.h"

namespace qprof::profiler::cupti {
namespace {

constexpr char kActivePct[] = ".avg.pct_of_peak_sustained_active";
constexpr char kElapsedPct[] = ".avg.pct_of_peak_sustained_elapsed";

void Push(MetricPlan* plan, const std::string& name) {
  if (std::find(plan->metrics.begin(), plan->metrics.end(), name) == plan->metrics.end()) {
    plan->metrics.push_back(name);
  }
}

}  // namespace

MetricPlan ChooseMetrics(const std::set<std::string>& base, const std::vector<std::string>& extra) {
  MetricPlan plan;
  auto has = [&](const char* name) { return base.count(name) > 0; };
  auto want = [&](const char* name) {
    if (has(name)) return true;
    plan.not_offered.push_back(name);
    return false;
  };
  for (const char* tensor : {"sm__pipe_tensor_cycles_active", "sm__pipe_tc_cycles_active"}) {
    // sm__pipe_tc_cycles_active exists on sm_100 only: its absence elsewhere is expected.
    if (has(tensor)) {
      plan.tensor_pct.push_back(std::string(tensor) + kActivePct);
      Push(&plan, plan.tensor_pct.back());
    } else if (std::string(tensor) == "sm__pipe_tensor_cycles_active") {
      plan.not_offered.push_back(tensor);
    }
  }
  for (const char* inst : {"sm__inst_executed_pipe_tensor_op_hmma",
                           "sm__inst_executed_pipe_tensor_op_gmma"}) {
    if (has(inst)) Push(&plan, std::string(inst) + ".sum");
  }
  if (has("sm__pipe_fma_cycles_active")) {
    plan.fma_pct = std::string("sm__pipe_fma_cycles_active") + kActivePct;
  } else if (want("sm__pipe_fmaheavy_cycles_active")) {
    plan.fma_pct = std::string("sm__pipe_fmaheavy_cycles_active") + kActivePct;
  }
  if (!plan.fma_pct.empty()) Push(&plan, plan.fma_pct);
  if (has("sm__inst_executed_pipe_fma")) Push(&plan, "sm__inst_executed_pipe_fma.sum");
  if (want("dram__throughput")) {
    plan.dram_pct = std::string("dram__throughput") + kElapsedPct;
    Push(&plan, plan.dram_pct);
  }
  if (want("sm__throughput")) {
    plan.sm_pct = std::string("sm__throughput") + kElapsedPct;
    Push(&plan, plan.sm_pct);
  }
  for (const std::string& e : extra) Push(&plan, e);
  return plan;
}

void DropMetric(MetricPlan* plan, const std::string& name) {
  plan->metrics.erase(std::remove(plan->metrics.begin(), plan->metrics.end(), name),
                      plan->metrics.end());
  plan->tensor_pct.erase(std::remove(plan->tensor_pct.begin(), plan->tensor_pct.end(), name),
                         plan->tensor_pct.end());
  for (std::string* field : {&plan->fma_pct, &plan->dram_pct, &plan->sm_pct}) {
    if (*field == name) field->clear();
  }
  plan->not_offered.push_back(name);
}

void FillKernelMetrics(const MetricPlan& plan, const std::vector<std::string>& names,
                       const std::vector<double>& values, proto::KernelMetrics* out) {
  const size_t n = std::min(names.size(), values.size());
  bool have_tensor = false;
  double tensor = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) continue;  // a metric the range could not evaluate
    (*out->mutable_raw())[names[i]] = v;
    if (std::find(plan.tensor_pct.begin(), plan.tensor_pct.end(), names[i]) !=
        plan.tensor_pct.end()) {
      tensor = have_tensor ? std::max(tensor, v) : v;
      have_tensor = true;
    }
    if (names[i] == plan.fma_pct) out->set_fma_pipe_pct(v);
    if (names[i] == plan.dram_pct) out->set_dram_throughput_pct(v);
    if (names[i] == plan.sm_pct) out->set_sm_throughput_pct(v);
  }
  if (have_tensor) out->set_tensor_pipe_pct(tensor);
  out->set_source("cupti range profiler (kernel replay)");
}

std::string MetricsUnavailableReason(const absl::Status& failure) {
  const std::string detail(failure.message());
  switch (failure.code()) {
    case absl::StatusCode::kPermissionDenied:
      return "GPU performance counters are restricted to admin users (" + detail + "). " +
             kCounterPermissionHint;
    case absl::StatusCode::kFailedPrecondition:
      return "another profiler (Nsight Systems/Compute, torch.profiler, ...) is attached to "
             "this process and owns CUPTI (" + detail + "); run qprof without it";
    default:
      return "hardware metrics could not be collected: " + detail;
  }
}

}  // namespace qprof::profiler::cupti
