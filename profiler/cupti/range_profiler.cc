#include "profiler/cupti/range_profiler.h"

#include <cmath>
#include <limits>
#include <set>

#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_call.h"

namespace qprof::profiler::cupti {
namespace {

constexpr CUpti_MetricType kMetricTypes[] = {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO,
                                             CUPTI_METRIC_TYPE_THROUGHPUT};

}  // namespace

RangeProfilerSession::~RangeProfilerSession() { Teardown(); }

void RangeProfilerSession::Teardown() {
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

CoreStatus RangeProfilerSession::Begin(CUcontext ctx) {
  if (object_ != nullptr) return OkCore();
  CoreStatus s = BeginImpl(ctx);
  if (!s.ok()) Teardown();  // release whatever the failed setup created
  return s;
}

CoreStatus RangeProfilerSession::BeginImpl(CUcontext ctx) {
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

  plan_ = PlanMetricsOnHost(api_, host_, chip_, extra_metrics_);
  if (plan_.metrics.empty()) {
    return CoreStatus(CoreCode::kUnimplemented,
                      "chip " + chip_ + " offers none of the metrics qprof collects");
  }
  metric_ptrs_.clear();
  for (const std::string& m : plan_.metrics) metric_ptrs_.push_back(m.c_str());
  QPROF_CORE_RETURN_IF_ERROR(BuildConfig());
  return EnableAndStart(ctx);
}

MetricPlan PlanMetricsOnHost(CuptiApi& api, CUpti_Profiler_Host_Object* host,
                             const std::string& chip, const std::vector<std::string>& extra) {
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
  MetricPlan plan = ChooseMetrics(chip, base, extra);
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

CoreStatus RangeProfilerSession::BuildConfig() {
  CUpti_Profiler_Host_ConfigAddMetrics_Params add = {
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host_;
  add.ppMetricNames = metric_ptrs_.data();
  add.numMetrics = metric_ptrs_.size();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.HostConfigAddMetrics(&add)));

  CUpti_Profiler_Host_GetConfigImageSize_Params size = {
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host_;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.HostGetConfigImageSize(&size)));
  if (size.configImageSize == 0) {
    return CoreStatus(CoreCode::kInternal, "chip " + chip_ + ": CUPTI made an empty config "
                      "image for " + std::to_string(metric_ptrs_.size()) + " metrics");
  }
  config_.assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params image = {
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  image.pHostObject = host_;
  image.configImageSize = config_.size();
  image.pConfigImage = config_.data();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.HostGetConfigImage(&image)));
  CUpti_Profiler_Host_GetNumOfPasses_Params passes = {
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = config_.size();
  passes.pConfigImage = config_.data();
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.HostGetNumOfPasses(&passes)));
  passes_ = passes.numOfPasses;
  if (passes_ == 0) {
    return CoreStatus(CoreCode::kInternal,
                      "chip " + chip_ + ": the metric config image needs 0 passes");
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
  config.numNestingLevels = 1;             // auto range has a single level
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  QPROF_CORE_RETURN_IF_ERROR(QPROF_CUPTI_FATAL(api_, api_.RangeProfilerSetConfig(&config)));

  CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = object_;
  return QPROF_CUPTI_FATAL(api_, api_.RangeProfilerStart(&start));
}

CoreStatus RangeProfilerSession::End(const std::vector<std::string>& launch_names,
                                     std::vector<ActivityData>* out,
                                     std::vector<std::string>* warnings, RangeEndStats* stats) {
  if (object_ == nullptr) return OkCore();
  CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = object_;
  CoreStatus status = QPROF_CUPTI_FATAL(api_, api_.RangeProfilerStop(&stop));
  if (status.ok() && !stop.isAllPassSubmitted) {
    warnings->push_back("range profiler: not all counter passes were submitted");
  }
  CUpti_RangeProfiler_DecodeData_Params decode = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = object_;
  if (status.ok()) status = QPROF_CUPTI_FATAL(api_, api_.RangeProfilerDecodeData(&decode));
  if (status.ok() && decode.numOfRangeDropped > 0) {
    stats->ranges_dropped += decode.numOfRangeDropped;
    warnings->push_back(std::to_string(decode.numOfRangeDropped) +
                        " kernels were not profiled (more than " + std::to_string(max_kernels_) +
                        " kernels on one context in the metrics pass)");
  }
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  if (status.ok()) status = QPROF_CUPTI_FATAL(api_, api_.RangeProfilerGetCounterDataInfo(&info));
  const size_t ranges = status.ok() ? info.numTotalRanges : 0;
  std::vector<double> values(metric_ptrs_.size());
  uint64_t unnamed = 0;
  for (size_t r = 0; r < ranges; ++r) {
    std::fill(values.begin(), values.end(), std::numeric_limits<double>::quiet_NaN());
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval = {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    eval.pHostObject = host_;
    eval.pCounterDataImage = counter_data_.data();
    eval.counterDataImageSize = counter_data_.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = metric_ptrs_.data();
    eval.numMetrics = metric_ptrs_.size();
    eval.pMetricValues = values.data();
    if (!QPROF_CUPTI_WARN(api_, api_.HostEvaluateToGpuValues(&eval)).ok()) continue;
    ActivityData a;
    a.kind = ActivityKindData::kKernel;
    a.device_id = device_;
    if (r < launch_names.size()) {
      const std::string& launched = launch_names[r];
      a.name = ValidUtf8(DemangleKernelName(launched.c_str()).c_str());
      if (a.name != launched) a.mangled_name = ValidUtf8(launched.c_str());
    } else {
      ++unnamed;
    }
    a.args["range_index"] = std::to_string(r);
    MetricsData m;
    FillKernelMetrics(plan_, plan_.metrics, values, &m);
    m.raw["qprof.passes"] = static_cast<double>(passes_);
    a.metrics = std::move(m);
    out->push_back(std::move(a));
    ++stats->ranges;
  }
  stats->ranges_unnamed += unnamed;
  if (unnamed > 0 || (ranges > 0 && launch_names.size() != ranges)) {
    warnings->push_back("range profiler on chip " + chip_ + ": " + std::to_string(ranges) +
                        " ranges but " + std::to_string(launch_names.size()) +
                        " recorded launches; " + std::to_string(unnamed) +
                        " ranges have no kernel name");
  }
  for (const std::string& m : plan_.not_offered) {
    warnings->push_back("metric " + m + " is not offered on chip " + chip_);
  }
  Teardown();
  return status;
}

}  // namespace qprof::profiler::cupti
