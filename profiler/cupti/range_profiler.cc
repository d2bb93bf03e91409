#include "profiler/cupti/range_profiler.h"

#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <cupti.h>

#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "profiler/cupti/activity_decoder.h"
#include "profiler/cupti/cupti_call.h"

namespace qprof::profiler::cupti {

RangeProfilerSession::~RangeProfilerSession() { Teardown(); }

void RangeProfilerSession::Teardown() {
  if (object_ != nullptr) {
    CUpti_RangeProfiler_Disable_Params p = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = object_;
    (void)QPROF_CUPTI_WARN(cuptiRangeProfilerDisable(&p));
    object_ = nullptr;
  }
  if (host_ != nullptr) {
    CUpti_Profiler_Host_Deinitialize_Params p = {
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    (void)QPROF_CUPTI_WARN(cuptiProfilerHostDeinitialize(&p));
    host_ = nullptr;
  }
  if (profiler_initialized_) {
    CUpti_Profiler_DeInitialize_Params p = {CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE};
    (void)QPROF_CUPTI_WARN(cuptiProfilerDeInitialize(&p));
    profiler_initialized_ = false;
  }
}

absl::Status RangeProfilerSession::Begin(CUcontext ctx) {
  if (object_ != nullptr) return absl::OkStatus();
  absl::Status s = BeginImpl(ctx);
  if (!s.ok()) Teardown();  // release whatever the failed setup created
  return s;
}

absl::Status RangeProfilerSession::BeginImpl(CUcontext ctx) {
  ctx_ = ctx;
  CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiProfilerInitialize(&init)));
  profiler_initialized_ = true;

  uint32_t device = 0;
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiGetDeviceId(ctx, &device)));
  CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = device;
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiDeviceGetChipName(&chip)));
  chip_ = chip.pChipName != nullptr ? chip.pChipName : "";

  // The counter availability image tells the host API which counters this context may
  // read; this is where admin-only counters show up as INSUFFICIENT_PRIVILEGES.
  CUpti_Profiler_GetCounterAvailability_Params avail = {
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  avail.ctx = ctx;
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiProfilerGetCounterAvailability(&avail)));
  availability_.assign(avail.counterAvailabilityImageSize, 0);
  avail.pCounterAvailabilityImage = availability_.data();
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiProfilerGetCounterAvailability(&avail)));

  CUpti_Profiler_Host_Initialize_Params host = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip_.c_str();
  host.pCounterAvailabilityImage = availability_.data();
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiProfilerHostInitialize(&host)));
  host_ = host.pHostObject;

  std::set<std::string> base;
  for (CUpti_MetricType type :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p = {
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    p.metricType = type;
    if (!QPROF_CUPTI_WARN(cuptiProfilerHostGetBaseMetrics(&p)).ok()) continue;
    for (size_t i = 0; i < p.numMetrics; ++i) {
      if (p.ppMetricNames[i] != nullptr) base.insert(p.ppMetricNames[i]);
    }
  }
  plan_ = ChooseMetrics(base, extra_metrics_);

  // Add metrics one at a time so one name the chip rejects does not lose the others.
  for (const std::string& name : std::vector<std::string>(plan_.metrics)) {
    const char* one[] = {name.c_str()};
    CUpti_Profiler_Host_ConfigAddMetrics_Params p = {
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    p.pHostObject = host_;
    p.ppMetricNames = one;
    p.numMetrics = 1;
    if (!QPROF_CUPTI_WARN(cuptiProfilerHostConfigAddMetrics(&p)).ok()) DropMetric(&plan_, name);
  }
  if (plan_.metrics.empty()) {
    return absl::UnimplementedError(
        absl::StrCat("chip ", chip_, " offers none of the metrics qprof collects"));
  }
  metric_ptrs_.clear();
  for (const std::string& m : plan_.metrics) metric_ptrs_.push_back(m.c_str());

  CUpti_Profiler_Host_GetConfigImageSize_Params size = {
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host_;
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiProfilerHostGetConfigImageSize(&size)));
  config_.assign(size.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params image = {
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  image.pHostObject = host_;
  image.configImageSize = config_.size();
  image.pConfigImage = config_.data();
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiProfilerHostGetConfigImage(&image)));
  CUpti_Profiler_Host_GetNumOfPasses_Params passes = {
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = config_.size();
  passes.pConfigImage = config_.data();
  if (QPROF_CUPTI_WARN(cuptiProfilerHostGetNumOfPasses(&passes)).ok()) passes_ = passes.numOfPasses;

  CUpti_RangeProfiler_Enable_Params enable = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = ctx;
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiRangeProfilerEnable(&enable)));
  object_ = enable.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params data_size = {
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  data_size.pRangeProfilerObject = object_;
  data_size.pMetricNames = metric_ptrs_.data();
  data_size.numMetrics = metric_ptrs_.size();
  data_size.maxNumOfRanges = max_kernels_;
  data_size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_kernels_);
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiRangeProfilerGetCounterDataSize(&data_size)));
  counter_data_.assign(data_size.counterDataSize, 0);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params data_init = {
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  data_init.pRangeProfilerObject = object_;
  data_init.counterDataSize = counter_data_.size();
  data_init.pCounterData = counter_data_.data();
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiRangeProfilerCounterDataImageInitialize(&data_init)));

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
  RETURN_IF_ERROR(QPROF_CUPTI_FATAL(cuptiRangeProfilerSetConfig(&config)));

  CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = object_;
  return QPROF_CUPTI_FATAL(cuptiRangeProfilerStart(&start));
}

absl::Status RangeProfilerSession::End(std::vector<proto::Activity>* out,
                                       std::vector<std::string>* warnings) {
  if (object_ == nullptr) return absl::OkStatus();
  CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = object_;
  absl::Status status = QPROF_CUPTI_FATAL(cuptiRangeProfilerStop(&stop));
  if (status.ok() && !stop.isAllPassSubmitted) {
    warnings->push_back("range profiler: not all counter passes were submitted");
  }
  CUpti_RangeProfiler_DecodeData_Params decode = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = object_;
  if (status.ok()) status = QPROF_CUPTI_FATAL(cuptiRangeProfilerDecodeData(&decode));
  if (status.ok() && decode.numOfRangeDropped > 0) {
    warnings->push_back(absl::StrCat(decode.numOfRangeDropped,
                                     " kernels were not profiled (more than ", max_kernels_,
                                     " kernels in the metrics pass)"));
  }
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  if (status.ok()) status = QPROF_CUPTI_FATAL(cuptiRangeProfilerGetCounterDataInfo(&info));
  const size_t ranges = status.ok() ? info.numTotalRanges : 0;
  std::vector<double> values(metric_ptrs_.size());
  for (size_t r = 0; r < ranges; ++r) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params name = {
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
    name.pCounterDataImage = counter_data_.data();
    name.counterDataImageSize = counter_data_.size();
    name.rangeIndex = r;
    name.rangeDelimiter = "/";
    if (!QPROF_CUPTI_WARN(cuptiRangeProfilerCounterDataGetRangeInfo(&name)).ok()) continue;
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
    if (!QPROF_CUPTI_WARN(cuptiProfilerHostEvaluateToGpuValues(&eval)).ok()) continue;
    proto::Activity a;
    a.set_kind(proto::ACTIVITY_KIND_KERNEL);
    const char* range_name = name.rangeName != nullptr ? name.rangeName : "";
    a.set_name(DemangleKernelName(range_name));
    if (a.name() != range_name) a.set_mangled_name(range_name);
    FillKernelMetrics(plan_, plan_.metrics, values, a.mutable_metrics());
    (*a.mutable_metrics()->mutable_raw())["qprof.passes"] = static_cast<double>(passes_);
    out->push_back(std::move(a));
  }
  for (const std::string& m : plan_.not_offered) {
    warnings->push_back(absl::StrCat("metric ", m, " is not offered on chip ", chip_));
  }
  Teardown();
  return status;
}

}  // namespace qprof::profiler::cupti
