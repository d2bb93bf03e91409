#include "profiler/cupti/range_profiler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_call.h"

namespace qprof::profiler::cupti {
namespace {

constexpr CUpti_MetricType kMetricTypes[] = {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO,
                                             CUPTI_METRIC_TYPE_THROUGHPUT};

void AddKindCounts(const RangeMatch& match, RangeEndStats* stats) {
  stats->graph_launches_refused += match.graph_launches_refused;
  stats->neighbours_refused += match.neighbours_refused;
  for (auto [from, to] : {std::pair{&match.eager, &stats->eager}, std::pair{&match.graph, &stats->graph}}) {
    to->launches += from->launches;
    to->ranges_expected += from->ranges_expected;
    to->ranges_matched += from->ranges_matched;
  }
  if (!match.graph_ranges.empty()) stats->graph_ranges.push_back(match.graph_ranges);
}

}  // namespace

RangeProfilerSession::~RangeProfilerSession() { Teardown(); }

void RangeProfilerSession::Teardown() {
  pushed_ = false;
  if (object_ != nullptr) {
    CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = object_;
    (void)QPROF_CUPTI_WARN(api_, api_.RangeProfilerDisable(&p));
    object_ = nullptr;
  }
  if (host_ != nullptr) {
    CUpti_Profiler_Host_Deinitialize_Params p = {
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    (void)QPROF_CUPTI_WARN(api_, api_.HostDeinitialize(&p));
    host_ = nullptr;
  }
}

CoreStatus RangeProfilerSession::Begin(CUcontext ctx, bool open) {
  if (object_ != nullptr) return OkCore();
  CoreStatus s = BeginImpl(ctx, open);
  if (!s.ok()) Teardown();  // release whatever the failed setup created
  return s;
}

CoreStatus RangeProfilerSession::BeginImpl(CUcontext ctx, bool open) {
  ctx_ = ctx;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.GetDeviceId(ctx, &device_)));
  CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device_;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.DeviceGetChipName(&chip)));
  chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

  // The counter availability image tells the host API which counters this context may
  // read; this is where admin-only counters show up as INSUFFICIENT_PRIVILEGES.
  CUpti_Profiler_GetCounterAvailability_Params avail = {
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = ctx;
  QPROF_CORE_RETURN_IF_ERROR(
      QPROF_CUPTI_FATAL(api_, api_.ProfilerGetCounterAvailability(&avail)));
  availability_.assign(avail.counterAvailabilityImageSize, 0);
  avail.pCounterAvailabilityImage = availability_.data();
  QPROF_CORE_RETURN_IF_ERROR(
      QPROF_CUPTI_FATAL(api_, api_.ProfilerGetCounterAvailability(&avail)));

  CUpti_Profiler_Host_Initialize_Params host = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip_.c_str();
  host.pCounterAvailabilityImage = availability_.data();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.HostInitialize(&host)));
  host_ = host.pHostObject;

  plan_ = PlanMetricsOnHost(api_, host_, chip_, extra_metrics_, set_);
  if (plan_.metrics.empty()) {
    return CoreStatus(CoreCode::kUnimplemented,
                      "chip " + chip_ + " offers none of the metrics qprof collects");
  }
  metric_ptrs_.clear();
  for (const std::string& m : plan_.metrics) metric_ptrs_.push_back(m.c_str());
  QPROF_CORE_RETURN_IF_ERROR(MakeConfigImage(api_, host_, chip_, metric_ptrs_, &config_, &passes_));
  QPROF_CORE_RETURN_IF_ERROR(EnableAndStart(ctx));
  return open ? Open() : OkCore();
}

CoreStatus RangeProfilerSession::Open() {
  if (object_ == nullptr || pushed_) return OkCore();
  CUpti_RangeProfiler_PushRange_Params push = {CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
  push.pRangeProfilerObject = object_;
  push.pRangeName = "qprof";  // auto range names its ranges "0", "1", ... regardless
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.RangeProfilerPushRange(&push)));
  pushed_ = true;
  return OkCore();
}

CoreStatus RangeProfilerSession::Close() {
  if (object_ == nullptr || !pushed_) return OkCore();
  pushed_ = false;
  CUpti_RangeProfiler_PopRange_Params pop = {CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
  pop.pRangeProfilerObject = object_;
  return QPROF_CUPTI_FATAL(api_, api_.RangeProfilerPopRange(&pop));
}

CoreStatus PlanCostOffline(CuptiApi& api, const std::string& chip, MetricSet set,
                           const std::vector<std::string>& extra, PlanCost* out) {
  CUpti_Profiler_Host_Initialize_Params init = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip.c_str();  // offline: no counter availability image
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api, api.HostInitialize(&init)));
  out->plan = PlanMetricsOnHost(api, init.pHostObject, chip, extra, set);
  std::vector<const char*> names;
  for (const std::string& m : out->plan.metrics) names.push_back(m.c_str());
  std::vector<uint8_t> image;
  CoreStatus s = names.empty()
      ? CoreStatus(CoreCode::kUnimplemented, "chip " + chip + " offers none of the metrics")
      : MakeConfigImage(api, init.pHostObject, chip, names, &image, &out->passes);
  CUpti_Profiler_Host_Deinitialize_Params done = {
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  done.pHostObject = init.pHostObject;
  (void)QPROF_CUPTI_WARN(api, api.HostDeinitialize(&done));
  return s;
}

MetricPlan PlanMetricsOnHost(CuptiApi& api, CUpti_Profiler_Host_Object* host,
                             const std::string& chip, const std::vector<std::string>& extra,
                             MetricSet set) {
  std::set<std::string> base;
  std::set<std::pair<CUpti_MetricType, std::string>> typed;
  for (CUpti_MetricType type : kMetricTypes) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p = {
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    p.pHostObject = host;
    p.metricType = type;
    if (!QPROF_CUPTI_WARN(api, api.HostGetBaseMetrics(&p)).ok()) continue;
    for (size_t i = 0; i < p.numMetrics; ++i) {
      if (p.ppMetricNames[i] == nullptr) continue;
      base.insert(p.ppMetricNames[i]);
      typed.emplace(type, p.ppMetricNames[i]);
    }
  }
  MetricPlan plan = ChooseMetrics(chip, base, extra, set);
  // A name the chip refuses must never reach ConfigAddMetrics (see metric_plan.h).
  auto offered = [&](const std::string& name, const std::string& suffix) {
    for (CUpti_MetricType type : kMetricTypes) {
      if (!typed.count({type, name})) continue;
      CUpti_Profiler_Host_GetSubMetrics_Params p = {
          CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
      p.pHostObject = host;
      p.metricType = type;
      p.pMetricName = name.c_str();
      if (api.HostGetSubMetrics(&p) != CUPTI_SUCCESS) return false;
      if (suffix.empty()) return true;
      for (size_t i = 0; i < p.numOfSubmetrics; ++i) {
        if (p.ppSubMetrics[i] != nullptr && suffix == p.ppSubMetrics[i]) return true;
      }
      return false;
    }
    return false;
  };
  KeepOffered(&plan, offered);
  return plan;
}

CoreStatus MakeConfigImage(CuptiApi& api, CUpti_Profiler_Host_Object* host, const std::string& chip,
                           const std::vector<const char*>& metrics, std::vector<uint8_t>* image,
                           size_t* passes) {
  CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host;
  add.ppMetricNames = const_cast<const char**>(metrics.data());
  add.numMetrics = metrics.size();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api, api.HostConfigAddMetrics(&add)));

  CUpti_Profiler_Host_GetConfigImageSize_Params size = {
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api, api.HostGetConfigImageSize(&size)));
  if (size.configImageSize == 0) {
    return CoreStatus(CoreCode::kInternal, "chip " + chip + ": CUPTI made an empty config "
                      "image for " + std::to_string(metrics.size()) + " metrics");
  }
  image->assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params get = {
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = host;
  get.configImageSize = image->size();
  get.pConfigImage = image->data();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api, api.HostGetConfigImage(&get)));
  CUpti_Profiler_Host_GetNumOfPasses_Params count = {
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  count.configImageSize = image->size();
  count.pConfigImage = image->data();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api, api.HostGetNumOfPasses(&count)));
  *passes = count.numOfPasses;
  if (*passes == 0) {
    return CoreStatus(CoreCode::kInternal,
                      "chip " + chip + ": the metric config image needs 0 passes");
  }
  return OkCore();
}

CoreStatus RangeProfilerSession::EnableAndStart(CUcontext ctx) {
  CUpti_RangeProfiler_Enable_Params enable = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = ctx;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.RangeProfilerEnable(&enable)));
  object_ = enable.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params data_size = {
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  data_size.pRangeProfilerObject = object_;
  data_size.pMetricNames = metric_ptrs_.data();
  data_size.numMetrics = metric_ptrs_.size();
  data_size.maxNumOfRanges = max_kernels_;
  data_size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_kernels_);
  QPROF_CORE_RETURN_IF_ERROR(
      QPROF_CUPTI_FATAL(api_, api_.RangeProfilerGetCounterDataSize(&data_size)));
  counter_data_.assign(data_size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params data_init = {
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  data_init.pRangeProfilerObject = object_;
  data_init.counterDataSize = counter_data_.size();
  data_init.pCounterData = counter_data_.data();
  QPROF_CORE_RETURN_IF_ERROR(
      QPROF_CUPTI_FATAL(api_, api_.RangeProfilerCounterDataImageInitialize(&data_init)));

  CUpti_RangeProfiler_SetConfig_Params config = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  config.pRangeProfilerObject = object_;
  config.configSize = config_.size();
  config.pConfig = config_.data();
  config.counterDataImageSize = counter_data_.size();
  config.pCounterDataImage = counter_data_.data();
  config.range = CUPTI_AutoRange;         // one range per kernel launch
  config.replayMode = CUPTI_KernelReplay;  // CUPTI replays each kernel for every pass
  config.maxRangesPerPass = max_kernels_;
  // One nesting level ("For Auto range mode, this should be set to 1"), starting at the
  // range Open() pushes (level 1); NVIDIA's sample sets the target level to 1 as well.
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.RangeProfilerSetConfig(&config)));

  CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = object_;
  return QPROF_CUPTI_FATAL(api_, api_.RangeProfilerStart(&start));
}

CoreStatus RangeProfilerSession::End(const LaunchSequence& launches, std::vector<ActivityData>* out,
                                     std::vector<std::string>* warnings, RangeEndStats* stats,
                                     std::string* refused) {
  if (object_ == nullptr) return OkCore();
  const std::string where = "range profiler on chip " + chip_ + ": ";
  CoreStatus status = Close();  // pops must match pushes before the pass stops
  CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = object_;
  if (status.ok()) status = QPROF_CUPTI_FATAL(api_, api_.RangeProfilerStop(&stop));
  if (status.ok() && !stop.isAllPassSubmitted) {
    warnings->push_back(where + "not all counter passes were submitted: some metrics may be "
                        "missing from some kernels");
  }
  CUpti_RangeProfiler_DecodeData_Params decode = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = object_;
  if (status.ok()) status = QPROF_CUPTI_FATAL(api_, api_.RangeProfilerDecodeData(&decode));
  const uint64_t dropped = status.ok() ? decode.numOfRangeDropped : 0;
  if (dropped > 0) {
    stats->ranges_dropped += dropped;
    warnings->push_back(std::to_string(dropped) + " kernels were not profiled (more than " +
                        std::to_string(max_kernels_) +
                        " kernels on one context in the metrics pass)");
  }
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  if (status.ok()) status = QPROF_CUPTI_FATAL(api_, api_.RangeProfilerGetCounterDataInfo(&info));
  const size_t ranges = status.ok() ? info.numTotalRanges : 0;
  stats->counter_data_bytes = std::max<uint64_t>(stats->counter_data_bytes, counter_data_.size());

  // Every range's values first: what each range measured decides which launch it was.
  const size_t n = metric_ptrs_.size();
  std::vector<double> values(ranges * n, std::numeric_limits<double>::quiet_NaN());
  std::vector<bool> evaluated(ranges, false);
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::vector<RangeShape> measured(ranges, RangeShape{kNaN, kNaN});
  size_t ctas_index = n, threads_index = n;
  for (size_t i = 0; i < n; ++i) {
    if (plan_.metrics[i] == plan_.ctas) ctas_index = i;
    if (plan_.metrics[i] == plan_.threads) threads_index = i;
  }
  for (size_t r = 0; r < ranges; ++r) {
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = host_;
    eval.pCounterDataImage = counter_data_.data();
    eval.counterDataImageSize = counter_data_.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = metric_ptrs_.data();
    eval.numMetrics = n;
    eval.pMetricValues = values.data() + r * n;
    evaluated[r] = QPROF_CUPTI_WARN(api_, api_.HostEvaluateToGpuValues(&eval)).ok();
    if (!evaluated[r]) continue;
    if (ctas_index < n) measured[r].ctas = values[r * n + ctas_index];
    if (threads_index < n) measured[r].threads = values[r * n + threads_index];
  }
  stats->ranges += ranges;
  if (plan_.ctas.empty() && ranges > 0) {
    warnings->push_back(where + "no CTA counter: ranges were matched to launches by order and "
                        "count only");
  }
  const RangeMatch match = MatchRanges(launches, ranges, dropped, measured);
  AddKindCounts(match, stats);
  if (!match.reasons.empty()) {
    std::string why;
    for (const std::string& r : match.reasons) why += (why.empty() ? "" : "; ") + r;
    warnings->push_back(where + why);
    if (refused != nullptr) *refused = why;
  }
  for (size_t r = 0; r < ranges; ++r) {
    const int64_t launch = match.launch_of_range[r];
    if (launch < 0 || !evaluated[r]) {
      ++stats->ranges_refused;
      continue;
    }
    ActivityData a;
    a.kind = ActivityKindData::kKernel;
    a.device_id = device_;
    const std::string& launched = launches.name(static_cast<size_t>(launch));
    a.name = ValidUtf8(DemangleKernelName(launched.c_str()).c_str());
    if (a.name != launched) a.mangled_name = ValidUtf8(launched.c_str());
    a.graph_node_id = launches.entry(static_cast<size_t>(launch)).graph_node_id;
    a.args["range_index"] = std::to_string(r);
    MetricsData m;
    std::vector<double> row(values.begin() + r * n, values.begin() + (r + 1) * n);
    FillKernelMetrics(plan_, plan_.metrics, row, &m);
    m.raw["qprof.passes"] = static_cast<double>(passes_);
    a.metrics = std::move(m);
    out->push_back(std::move(a));
    ++stats->ranges_named;
  }
  for (const std::string& m : plan_.not_offered) {
    warnings->push_back("metric " + m + " is not offered on chip " + chip_);
  }
  Teardown();
  return status;
}

}  // namespace qprof::profiler::cupti
