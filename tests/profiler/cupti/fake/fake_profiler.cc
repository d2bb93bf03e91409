// The fake GPU's range profiler, profiler host API, driver and library calls.
#include <algorithm>
#include <cstring>
#include <set>

#include "tests/profiler/cupti/fake/fake_cupti.h"

namespace qprof::profiler::cupti::fake {
namespace {

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

const std::vector<std::string>& Suffixes(CUpti_MetricType type) {
  static const std::vector<std::string> counter = {
      ".sum", ".avg", ".max", ".min", ".avg.pct_of_peak_sustained_active",
      ".avg.pct_of_peak_sustained_elapsed", ".sum.pct_of_peak_sustained_active"};
  static const std::vector<std::string> ratio = {".pct", ".ratio", ".max_rate"};
  static const std::vector<std::string> throughput = {
      ".avg.pct_of_peak_sustained_elapsed", ".avg.pct_of_peak_sustained_active",
      ".max.pct_of_peak_sustained_elapsed"};
  return type == CUPTI_METRIC_TYPE_COUNTER ? counter
         : type == CUPTI_METRIC_TYPE_RATIO ? ratio
                                           : throughput;
}

std::pair<std::string, std::string> Split(const std::string& full) {
  const size_t dot = full.find('.');
  return dot == std::string::npos ? std::make_pair(full, std::string())
                                  : std::make_pair(full.substr(0, dot), full.substr(dot));
}

}  // namespace

std::vector<std::string> FakeCupti::ChipBaseMetrics(const std::string& chip, CUpti_MetricType type) {
  // Subsets of libcupti 13.0.1's offline lists (cuptiProfilerHostGetBaseMetrics).
  if (type == CUPTI_METRIC_TYPE_THROUGHPUT) return {"dram__throughput", "sm__throughput"};
  if (type == CUPTI_METRIC_TYPE_RATIO) return {"smsp__average_inst_executed_pipe_fma_per_warp"};
  std::vector<std::string> common = {"sm__pipe_tensor_cycles_active", "sm__pipe_fma_cycles_active",
                                     "sm__pipe_fmaheavy_cycles_active",
                                     "sm__inst_executed_pipe_fma", "gpu__time_duration",
                                     "sm__ctas_launched", "sm__threads_launched"};
  if (chip == "GH100") {
    for (const char* m : {"sm__inst_executed_pipe_tensor", "sm__inst_executed_pipe_tensor_op_hmma",
                          "sm__inst_executed_pipe_tensor_op_gmma"}) common.push_back(m);
  } else if (chip == "GB100") {
    for (const char* m : {"sm__pipe_tc_cycles_active", "sm__inst_executed_pipe_tensor",
                          "sm__inst_executed_pipe_tensor_subpipe_hmma", "sm__inst_executed_pipe_tc"}) {
      common.push_back(m);
    }
  } else if (chip == "GB202") {
    for (const char* m : {"sm__inst_executed_pipe_tensor",
                          "sm__inst_executed_pipe_tensor_subpipe_hmma"}) common.push_back(m);
  }  // any other chip: no tensor instruction counter at all
  return common;
}

double FakeCupti::MetricValue(const std::string& kernel, const std::string& metric) {
  const bool tensor = Contains(kernel, "mma") || Contains(kernel, "gemm");
  if (Contains(metric, "pipe_tensor_cycles") || Contains(metric, "pipe_tc_cycles")) {
    return tensor ? 80.0 : 0.5;
  }
  if (Contains(metric, "inst_executed_pipe_tensor") || Contains(metric, "inst_executed_pipe_tc")) {
    return tensor ? 4096.0 : 0.0;
  }
  if (Contains(metric, "pipe_fma")) return tensor ? 5.0 : 60.0;
  if (Contains(metric, "dram__throughput")) return 30.0;
  if (Contains(metric, "sm__throughput")) return 45.0;
  return 1.0;
}

CUptiResult FakeCupti::GetVersion(uint32_t* version) {
  *version = faults.version;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::GetResultString(CUptiResult result, const char** str) {
  switch (result) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
      break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_UNKNOWN: *str = "CUPTI_ERROR_UNKNOWN"; break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::GetErrorMessage(CUptiResult result, const char** str) {
  *str = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
             ? "Insufficient privileges (fake GPU)"
             : "error reported by the fake GPU";
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::GetDeviceId(CUcontext context, uint32_t* device_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = contexts_.find(context);
  if (it == contexts_.end()) return CUPTI_ERROR_INVALID_CONTEXT;
  *device_id = it->second.device;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ProfilerInitialize(CUpti_Profiler_Initialize_Params*) {
  Log("ProfilerInitialize");
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params*) {
  Log("ProfilerDeInitialize");
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::DeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  if (p->deviceIndex >= devices_.size()) return CUPTI_ERROR_INVALID_DEVICE;
  p->pChipName = Intern(devices_[p->deviceIndex].chip);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::ProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  if (faults.counters_denied) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = 64;
  } else {
    std::memset(p->pCounterAvailabilityImage, 0xA5, p->counterAvailabilityImageSize);
  }
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  auto host = std::make_unique<HostObject>();
  host->chip = p->pChipName != nullptr ? p->pChipName : "";
  for (int t = 0; t < 3; ++t) {
    host->base[t] = ChipBaseMetrics(host->chip, static_cast<CUpti_MetricType>(t));
    for (const std::string& m : host->base[t]) host->base_ptrs[t].push_back(m.c_str());
  }
  p->pHostObject = reinterpret_cast<CUpti_Profiler_Host_Object*>(host.get());
  std::lock_guard<std::mutex> lock(mu_);
  host_objects_.push_back(std::move(host));
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params*) {
  return CUPTI_SUCCESS;  // objects live as long as the fake (pointers stay valid)
}

CUptiResult FakeCupti::HostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) {
  auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  const int t = static_cast<int>(p->metricType);
  if (host == nullptr || t < 0 || t > 2) return CUPTI_ERROR_INVALID_PARAMETER;
  p->ppMetricNames = host->base_ptrs[t].data();
  p->numMetrics = host->base_ptrs[t].size();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::HostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params* p) {
  auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  const int t = static_cast<int>(p->metricType);
  if (host == nullptr || p->pMetricName == nullptr || t < 0 || t > 2) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  const std::string base = Split(p->pMetricName).first;
  if (std::find(host->base[t].begin(), host->base[t].end(), base) == host->base[t].end()) {
    return CUPTI_ERROR_INVALID_METRIC_NAME;
  }
  host->sub_ptrs.clear();
  for (const std::string& suffix : Suffixes(p->metricType)) {
    if (faults.refused_metrics.count(base + suffix)) continue;
    host->sub_ptrs.push_back(Intern(suffix));
  }
  p->ppSubMetrics = host->sub_ptrs.data();
  p->numOfSubmetrics = host->sub_ptrs.size();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  Log("HostConfigAddMetrics(" + std::to_string(p->numMetrics) + ")");
  auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  if (host == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (host->poisoned) return CUPTI_ERROR_UNKNOWN;  // as libcupti 13.0.1 after a refusal
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const std::string full = p->ppMetricNames[i];
    auto [base, suffix] = Split(full);
    bool valid = false;
    for (int t = 0; t < 3 && !valid; ++t) {
      const auto& list = host->base[t];
      if (std::find(list.begin(), list.end(), base) == list.end()) continue;
      const auto& subs = Suffixes(static_cast<CUpti_MetricType>(t));
      valid = std::find(subs.begin(), subs.end(), suffix) != subs.end();
    }
    if (!valid || faults.refused_metrics.count(full)) {
      host->poisoned = true;
      return CUPTI_ERROR_INVALID_PARAMETER;
    }
  }
  for (size_t i = 0; i < p->numMetrics; ++i) host->metrics.push_back(p->ppMetricNames[i]);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  if (host == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  p->configImageSize =
      faults.empty_config_image || host->metrics.empty() ? 0 : 16 + 8 * host->metrics.size();
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  auto* host = reinterpret_cast<HostObject*>(p->pHostObject);
  if (host == nullptr || p->pConfigImage == nullptr || p->configImageSize < 16) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  std::memset(p->pConfigImage, 0, p->configImageSize);
  const uint64_t n = host->metrics.size();
  const uint64_t passes = PassesFor(host->metrics);
  std::memcpy(p->pConfigImage, &n, sizeof(n));
  std::memcpy(p->pConfigImage + 8, &passes, sizeof(passes));
  return CUPTI_SUCCESS;
}

// The config image holds the pass count the fake scheduled (see HostGetConfigImage).
CUptiResult FakeCupti::HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (p->pConfigImage == nullptr || p->configImageSize < 16) return CUPTI_ERROR_INVALID_PARAMETER;
  uint64_t passes = 0;
  std::memcpy(&passes, p->pConfigImage + 8, sizeof(passes));
  p->numOfPasses = faults.zero_passes ? 0 : passes;
  return CUPTI_SUCCESS;
}

// A model of libcupti 13.0's pass scheduling, no kinder than the real one where
// profiler_cupti_real_test measured it offline: the utilisations, DRAM throughput and the
// CTA count share one pass; every two instruction counters add one; sm__throughput (a max
// over many unit throughputs) adds seven. GH100's default plan: 1 + 2 = 3 passes (real: 3),
// full: 10 (real: 10); GB100 3 and 10 (real: 3 and 9); GB202 3 (real: 2).
size_t FakeCupti::PassesFor(const std::vector<std::string>& metrics) {
  size_t inst = 0;
  bool sm_throughput = false;
  for (const std::string& m : metrics) {
    if (Contains(m, "inst_executed")) ++inst;
    if (Contains(m, "sm__throughput")) sm_throughput = true;
  }
  return metrics.empty() ? 0 : 1 + (inst + 1) / 2 + (sm_throughput ? 7 : 0);
}

CUptiResult FakeCupti::HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  std::lock_guard<std::mutex> lock(mu_);
  // The newest object first: a later session's image may sit where an ended one's was.
  for (auto it = range_objects_.rbegin(); it != range_objects_.rend(); ++it) {
    const auto& object = *it;
    if (object->image != p->pCounterDataImage) continue;
    if (p->rangeIndex >= object->kernels.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < p->numMetrics; ++i) {
      const std::string metric = p->ppMetricNames[i];
      const size_t r = p->rangeIndex;
      p->pMetricValues[i] = metric == "sm__ctas_launched.sum"      ? static_cast<double>(object->ctas[r])
                            : metric == "sm__threads_launched.sum" ? static_cast<double>(object->threads[r])
                                                                   : MetricValue(object->kernels[r], metric);
    }
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

bool FakeCupti::RangeObjectUsable(const RangeObject* object) const {
  return object != nullptr && !object->dead;
}

CUptiResult FakeCupti::RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  Log("RangeProfilerEnable");
  std::lock_guard<std::mutex> lock(mu_);
  if (contexts_.count(p->ctx) == 0) return CUPTI_ERROR_INVALID_CONTEXT;
  const uint32_t device = contexts_[p->ctx].device;
  // One profiling session per device (the error code is not documented).
  for (const auto& other : range_objects_) {
    if (other->enabled && !other->dead && other->device == device && other->ctx != p->ctx) {
      return CUPTI_ERROR_INVALID_OPERATION;
    }
  }
  auto object = std::make_unique<RangeObject>();
  object->ctx = p->ctx;
  object->device = device;
  range_by_ctx_[p->ctx] = object.get();
  p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(object.get());
  range_objects_.push_back(std::move(object));
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  if (object == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  object->started = false;
  object->enabled = false;
  object->image = nullptr;  // the collector frees its image after disabling
  auto it = range_by_ctx_.find(object->ctx);
  if (it != range_by_ctx_.end() && it->second == object) range_by_ctx_.erase(it);
  return CUPTI_SUCCESS;
}

size_t FakeCupti::RawCounters(const std::string& chip, const std::vector<std::string>& metrics) {
  struct Row {
    const char* chip;
    const char* metric;
    const char* raw;
  };
  static const Row kRows[] = {
#include "tests/profiler/cupti/fake/raw_counters_13_0.inc"
  };
  std::set<std::string> raw;
  for (const std::string& m : metrics) {
    bool known = false;
    for (const Row& row : kRows) {
      if (chip != row.chip || m != row.metric) continue;
      known = true;
      std::string ids = row.raw;
      for (size_t at = 0; at < ids.size();) {
        const size_t end = std::min(ids.find(' ', at), ids.size());
        raw.insert(ids.substr(at, end - at));
        at = end + 1;
      }
    }
    if (!known) raw.insert(m);  // not in the table: one raw counter of its own
  }
  return raw.size();
}

// libnvperf_host 13.0's counter data image size, measured offline for every chip and both
// metric sets (tests/profiler/cupti/cupti_real_test.cc holds this to the library): a fixed
// 2248 bytes, the counter data prefix (100 + 24 per raw counter), and per range 64 bytes
// of range name, 16 bytes, and 32 bytes per raw counter. Raw counters kept without their
// per-unit instances: with instances the library's size is some 300 times larger (379 MB
// for GH100's default set at 2048 ranges); which one libcupti's range profiler asks for
// is not documented, and the device check prints libcupti's own figure.
size_t FakeCupti::CounterDataBytes(const std::string& chip, const std::vector<std::string>& metrics,
                                   size_t ranges) {
  const size_t raw = RawCounters(chip, metrics);
  return 2248 + (100 + 24 * raw) + ranges * (64 + 16 + 32 * raw);
}

CUptiResult FakeCupti::RangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  if (object == nullptr || p->pMetricNames == nullptr || p->numMetrics == 0 ||
      p->maxNumRangeTreeNodes < p->maxNumOfRanges) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  std::vector<std::string> metrics(p->pMetricNames, p->pMetricNames + p->numMetrics);
  std::string chip;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (object->device < devices_.size()) chip = devices_[object->device].chip;
  }
  p->counterDataSize = CounterDataBytes(chip, metrics, p->maxNumOfRanges);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  std::lock_guard<std::mutex> lock(mu_);
  reinterpret_cast<RangeObject*>(p->pRangeProfilerObject)->image = p->pCounterData;
  return CUPTI_SUCCESS;
}

// Auto range with kernel replay only (what the collector asks for), and the nesting the
// header requires: "For Auto range mode, this should be set to 1" (numNestingLevels); the
// minimum level profiled is the first pushed range.
CUptiResult FakeCupti::RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  if (p->range != CUPTI_AutoRange || p->replayMode != CUPTI_KernelReplay || p->pConfig == nullptr ||
      p->configSize == 0 || p->numNestingLevels != 1 || p->minNestingLevel != 1 ||
      p->targetNestingLevel > p->numNestingLevels) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  object->max_ranges = p->maxRangesPerPass;
  object->nesting_levels = p->numNestingLevels;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  Log("RangeProfilerStart");
  std::lock_guard<std::mutex> lock(mu_);
  reinterpret_cast<RangeObject*>(p->pRangeProfilerObject)->started = true;
  return CUPTI_SUCCESS;
}

// The header documents INVALID_OPERATION when the range profiler is not enabled; pushing
// before Start and popping more than was pushed answer the same here (CUPTI documents
// neither case).
CUptiResult FakeCupti::RangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) {
  Log("RangeProfilerPushRange");
  std::lock_guard<std::mutex> lock(mu_);
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  if (!RangeObjectUsable(object) || !object->enabled || !object->started) {
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  ++object->pushed;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) {
  Log("RangeProfilerPopRange");
  std::lock_guard<std::mutex> lock(mu_);
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  if (!RangeObjectUsable(object) || !object->enabled || object->pushed == 0) {
    return CUPTI_ERROR_INVALID_OPERATION;
  }
  --object->pushed;
  return CUPTI_SUCCESS;
}

// A session whose context was destroyed has nothing left to stop or decode (the code
// CUPTI answers then is not documented; the fake says the context is invalid).
CUptiResult FakeCupti::RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  Log("RangeProfilerStop");
  std::lock_guard<std::mutex> lock(mu_);
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  if (!RangeObjectUsable(object)) return CUPTI_ERROR_INVALID_CONTEXT;
  // "The number of pop range API call should be same as number of push ranges": a pass
  // stopped inside a pushed range is refused (the code CUPTI answers is not documented).
  if (object->pushed != 0) return CUPTI_ERROR_INVALID_OPERATION;
  object->started = false;
  p->isAllPassSubmitted = faults.passes_not_submitted ? 0 : 1;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* object = reinterpret_cast<RangeObject*>(p->pRangeProfilerObject);
  if (!RangeObjectUsable(object)) return CUPTI_ERROR_INVALID_CONTEXT;
  p->numOfRangeDropped = object->dropped;
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::RangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  std::lock_guard<std::mutex> lock(mu_);
  // The newest object first: a later session's image may sit where an ended one's was.
  for (auto it = range_objects_.rbegin(); it != range_objects_.rend(); ++it) {
    const auto& object = *it;
    if (object->image != p->pCounterDataImage) continue;
    p->numTotalRanges = object->kernels.size();
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult FakeCupti::RangeProfilerCounterDataGetRangeInfo(
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
  std::lock_guard<std::mutex> lock(mu_);
  // The newest object first: a later session's image may sit where an ended one's was.
  for (auto it = range_objects_.rbegin(); it != range_objects_.rend(); ++it) {
    const auto& object = *it;
    if (object->image != p->pCounterDataImage) continue;
    if (p->rangeIndex >= object->names.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    p->rangeName = object->names[p->rangeIndex].c_str();
    return CUPTI_SUCCESS;
  }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

// Auto range profiles a kernel only between Start and Stop and inside a pushed range (as
// we now believe CUPTI does: NVIDIA's sample pushes one in auto range mode, and runs
// without a push record no range).
void FakeCupti::AddRange(CUcontext ctx, const std::string& kernel, uint32_t grid, uint32_t block) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = range_by_ctx_.find(ctx);
  if (it == range_by_ctx_.end() || !it->second->started || it->second->pushed == 0) return;
  RangeObject* object = it->second;
  if (object->kernels.size() >= object->max_ranges) {
    ++object->dropped;
    return;
  }
  if (!object->held_back.set && faults.swap_ranges.count(object->kernels.size()) > 0) {
    // This range is recorded after the next one (faults.swap_ranges).
    object->held_back = RangeObject::Held{kernel, grid, block, true};
    return;
  }
  auto record = [object](const std::string& k, uint32_t g, uint32_t b) {
    // Auto range: ranges are named by their index on the context, not by kernel.
    object->names.push_back(std::to_string(object->kernels.size()));
    object->kernels.push_back(k);
    object->ctas.push_back(g);
    object->threads.push_back(static_cast<uint64_t>(g) * b);
  };
  record(kernel, grid, block);
  if (object->held_back.set) {
    record(object->held_back.kernel, object->held_back.grid, object->held_back.block);
    object->held_back = RangeObject::Held{};
  }
}

void FakeCupti::AddGraphRange(CUcontext ctx, const std::vector<GraphNode>& nodes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = range_by_ctx_.find(ctx);
  if (it == range_by_ctx_.end() || !it->second->started || it->second->pushed == 0) return;
  RangeObject* object = it->second;
  if (object->kernels.size() >= object->max_ranges) {
    ++object->dropped;
    return;
  }
  uint32_t ctas = 0;
  uint64_t threads = 0;
  for (const GraphNode& n : nodes) {
    ctas += n.grid;
    threads += static_cast<uint64_t>(n.grid) * n.block;
  }
  object->names.push_back(std::to_string(object->kernels.size()));
  object->kernels.push_back(nodes.front().kernel);  // values of the first node, for the fake
  object->ctas.push_back(ctas);
  object->threads.push_back(threads);
}

// ---- Driver ---------------------------------------------------------------------------------

CUresult FakeCupti::CtxGetCurrent(CUcontext* ctx) {
  if (inside_cu_init_) ++driver_calls_in_init_;
  *ctx = t_current_;
  return CUDA_SUCCESS;
}

CUresult FakeCupti::DeviceGetCount(int* count) {
  if (inside_cu_init_) ++driver_calls_in_init_;
  *count = static_cast<int>(devices_.size());
  return CUDA_SUCCESS;
}

CUresult FakeCupti::DeviceGetName(char* name, int len, CUdevice dev) {
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size() || len <= 0) return CUDA_ERROR_INVALID_DEVICE;
  std::strncpy(name, devices_[dev].name.c_str(), static_cast<size_t>(len) - 1);
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult FakeCupti::DeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) {
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size()) return CUDA_ERROR_INVALID_DEVICE;
  const FakeDevice& d = devices_[dev];
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = d.cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = d.cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = d.sm_count; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = d.clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *value = d.memory_clock_khz; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *value = d.bus_width_bits; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult FakeCupti::DeviceTotalMem(size_t* bytes, CUdevice dev) {
  if (dev < 0 || static_cast<size_t>(dev) >= devices_.size()) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = devices_[dev].memory_bytes;
  return CUDA_SUCCESS;
}

}  // namespace qprof::profiler::cupti::fake
