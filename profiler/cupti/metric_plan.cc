#include "profiler/cupti/metric_plan.h"

#include <algorithm>
#include <cmath>

namespace qprof::profiler::cupti {
namespace {

constexpr char kActivePct[] = ".avg.pct_of_peak_sustained_active";
constexpr char kElapsedPct[] = ".avg.pct_of_peak_sustained_elapsed";

// Tensor-pipe instruction counters, general first; every one the chip has is collected.
constexpr const char* kTensorInstructions[] = {
    "sm__inst_executed_pipe_tensor",
    "sm__inst_executed_pipe_tensor_op_hmma",
    "sm__inst_executed_pipe_tensor_op_gmma",
    "sm__inst_executed_pipe_tensor_subpipe_hmma",
    "sm__inst_executed_pipe_tc",
};

void Push(MetricPlan* plan, const std::string& name) {
  if (std::find(plan->metrics.begin(), plan->metrics.end(), name) == plan->metrics.end()) {
    plan->metrics.push_back(name);
  }
}

template <typename T>
void Erase(std::vector<T>* v, const T& x) {
  v->erase(std::remove(v->begin(), v->end(), x), v->end());
}

}  // namespace

const char* MetricSetName(MetricSet set) {
  return set == MetricSet::kFull ? "full" : "default";
}

bool ParseMetricSet(const std::string& text, MetricSet* set) {
  if (text.empty() || text == "default") {
    *set = MetricSet::kDefault;
    return true;
  }
  if (text == "full") {
    *set = MetricSet::kFull;
    return true;
  }
  return false;
}

MetricPlan ChooseMetrics(const std::string& chip, const std::set<std::string>& base,
                         const std::vector<std::string>& extra, MetricSet set) {
  MetricPlan plan;
  plan.set = set;
  auto has = [&](const char* name) { return base.count(name) > 0; };
  auto want = [&](const char* name) {
    if (has(name)) return true;
    plan.not_offered.push_back(name);
    return false;
  };
  const std::string on_chip = chip.empty() ? "this chip" : "chip " + chip;
  if (want("sm__pipe_tensor_cycles_active")) {
    plan.tensor_pct.push_back(std::string("sm__pipe_tensor_cycles_active") + kActivePct);
  }
  // sm__pipe_tc_cycles_active exists on sm_100 only: its absence elsewhere is expected.
  if (has("sm__pipe_tc_cycles_active")) {
    plan.tensor_pct.push_back(std::string("sm__pipe_tc_cycles_active") + kActivePct);
  }
  for (const std::string& t : plan.tensor_pct) Push(&plan, t);
  if (plan.tensor_pct.empty()) {
    plan.missing.push_back(on_chip + " has no tensor-pipe utilisation counter: tensor/SIMT "
                           "evidence comes from SASS and kernel names");
  }
  for (const char* inst : kTensorInstructions) {
    if (!has(inst)) continue;
    plan.tensor_inst.push_back(std::string(inst) + ".sum");
    Push(&plan, plan.tensor_inst.back());
  }
  if (plan.tensor_inst.empty()) {
    plan.missing.push_back(on_chip + " has no tensor-pipe instruction counter "
                           "(sm__inst_executed_pipe_tensor* or sm__inst_executed_pipe_tc)");
  }
  if (has("sm__pipe_fma_cycles_active")) {
    plan.fma_pct = std::string("sm__pipe_fma_cycles_active") + kActivePct;
  } else if (want("sm__pipe_fmaheavy_cycles_active")) {
    plan.fma_pct = std::string("sm__pipe_fmaheavy_cycles_active") + kActivePct;
  } else {
    plan.missing.push_back(on_chip + " has no FMA-pipe utilisation counter");
  }
  if (!plan.fma_pct.empty()) Push(&plan, plan.fma_pct);
  if (has("sm__inst_executed_pipe_fma")) Push(&plan, "sm__inst_executed_pipe_fma.sum");
  if (want("dram__throughput")) {
    plan.dram_pct = std::string("dram__throughput") + kElapsedPct;
    Push(&plan, plan.dram_pct);
  }
  // The range's identity check (range_match.h): free of passes where checked offline.
  // A chip without it: ranges are matched by order and count only (the session says so).
  if (has("sm__ctas_launched")) {
    plan.ctas = "sm__ctas_launched.sum";
    Push(&plan, plan.ctas);
  }
  // The second identity check: threads = grid x block, so two launches with one grid and
  // different blocks are told apart. Also free of passes offline (GA100..GB202).
  if (has("sm__threads_launched")) {
    plan.threads = "sm__threads_launched.sum";
    Push(&plan, plan.threads);
  }
  // sm__throughput alone costs 8 passes on GH100: only in the full set.
  if (set == MetricSet::kFull && want("sm__throughput")) {
    plan.sm_pct = std::string("sm__throughput") + kElapsedPct;
    Push(&plan, plan.sm_pct);
  }
  for (const std::string& e : extra) Push(&plan, e);
  return plan;
}

std::pair<std::string, std::string> SplitMetricName(const std::string& full_name) {
  const size_t dot = full_name.find('.');
  if (dot == std::string::npos) return {full_name, ""};
  return {full_name.substr(0, dot), full_name.substr(dot)};
}

std::vector<std::string> KeepOffered(
    MetricPlan* plan,
    const std::function<bool(const std::string& base, const std::string& suffix)>& offered) {
  std::vector<std::string> rejected;
  for (const std::string& m : std::vector<std::string>(plan->metrics)) {
    auto [base, suffix] = SplitMetricName(m);
    if (!offered(base, suffix)) {
      rejected.push_back(m);
      DropMetric(plan, m);
    }
  }
  return rejected;
}

void DropMetric(MetricPlan* plan, const std::string& name) {
  Erase(&plan->metrics, name);
  Erase(&plan->tensor_pct, name);
  Erase(&plan->tensor_inst, name);
  for (std::string* field : {&plan->fma_pct, &plan->dram_pct, &plan->sm_pct, &plan->ctas,
                              &plan->threads}) {
    if (*field == name) field->clear();
  }
  plan->not_offered.push_back(name);
}

void FillKernelMetrics(const MetricPlan& plan, const std::vector<std::string>& names,
                       const std::vector<double>& values, MetricsData* out) {
  const size_t n = std::min(names.size(), values.size());
  bool have_tensor = false;
  double tensor = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) continue;  // a metric the range could not evaluate
    out->raw[names[i]] = v;
    if (std::find(plan.tensor_pct.begin(), plan.tensor_pct.end(), names[i]) !=
        plan.tensor_pct.end()) {
      tensor = have_tensor ? std::max(tensor, v) : v;
      have_tensor = true;
    }
    if (names[i] == plan.fma_pct) out->fma_pipe_pct = v;
    if (names[i] == plan.dram_pct) out->dram_throughput_pct = v;
    if (names[i] == plan.sm_pct) out->sm_throughput_pct = v;
  }
  if (have_tensor) out->tensor_pipe_pct = tensor;
  out->source = "cupti range profiler (kernel replay)";
}

std::string MetricsUnavailableReason(const CoreStatus& failure) {
  const std::string& detail = failure.message();
  switch (failure.code()) {
    case CoreCode::kPermissionDenied:
      return "GPU performance counters are restricted to admin users (" + detail + "). " +
             kCounterPermissionHint;
    case CoreCode::kFailedPrecondition:
      return "another profiler (Nsight Systems/Compute, torch.profiler, ...) is attached to "
             "this process and owns CUPTI (" + detail + "); run qprof without it";
    default:
      return "hardware metrics could not be collected: " + detail;
  }
}

}  // namespace qprof::profiler::cupti
