#include "profiler/cupti/activity_decoder.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace qprof::profiler::cupti {
namespace {

int64_t Ns(uint64_t t) { return static_cast<int64_t>(t); }

// The external-id map keeps as many ids as the launch index.
constexpr size_t kExternalIdCapacity = size_t{1} << 18;

// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none.
size_t Utf8SequenceLength(const unsigned char* s, size_t i, size_t n) {
  const unsigned char c = s[i];
  if (c < 0x80) return 1;
  size_t len = 0;
  uint32_t min = 0;
  if ((c & 0xE0) == 0xC0) len = 2, min = 0x80;
  else if ((c & 0xF0) == 0xE0) len = 3, min = 0x800;
  else if ((c & 0xF8) == 0xF0) len = 4, min = 0x10000;
  else return 0;
  if (i + len > n) return 0;
  uint32_t cp = c & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

}  // namespace

std::string ValidUtf8(const char* text) {
  if (text == nullptr) return "";
  const size_t n = std::strlen(text);
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  std::string out;
  out.reserve(n);
  for (size_t i = 0; i < n;) {
    const size_t len = Utf8SequenceLength(s, i, n);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text + i, len);
      i += len;
    }
  }
  return out;
}

void LaunchIndex::Add(uint32_t correlation_id, LaunchInfo info) {
  auto it = by_correlation_.find(correlation_id);
  if (it != by_correlation_.end()) {
    if (info.start_ns < it->second.start_ns) it->second = std::move(info);
    return;
  }
  by_correlation_.emplace(correlation_id, std::move(info));
  order_.push_back(correlation_id);
  while (order_.size() > capacity_) {
    by_correlation_.erase(order_.front());
    order_.pop_front();
  }
}

const LaunchInfo* LaunchIndex::Find(uint32_t correlation_id) const {
  auto it = by_correlation_.find(correlation_id);
  return it == by_correlation_.end() ? nullptr : &it->second;
}

const char* CopyKindName(uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "unknown";
  }
}

std::string DemangleKernelName(const char* name) {
  if (name == nullptr) return "";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

const std::pair<std::string, std::string>& ActivityDecoder::KernelName(const char* mangled) {
  auto it = names_.find(mangled);
  if (it != names_.end() && it->second.first == mangled) {
    ++stats_.name_cache_hits;
    return it->second;
  }
  ++stats_.demangled;
  std::string text = ValidUtf8(mangled);
  std::string demangled = ValidUtf8(DemangleKernelName(mangled).c_str());
  auto& slot = names_[mangled];
  slot = {std::move(text), std::move(demangled)};
  return slot;
}

bool ActivityDecoder::KeepGpuRecord(uint64_t start, uint64_t end) {
  ++stats_.records_gpu;
  if (start == 0 || end <= start) {
    ++stats_.records_invalid;
    if (start == 0 && end == 0) ++stats_.records_incomplete;
    return false;
  }
  last_timestamp_ = std::max(last_timestamp_, Ns(end));
  if (Ns(start) < window_begin_ || Ns(start) >= window_end_) {
    ++stats_.records_outside_window;
    return false;
  }
  if (kept_ >= max_activities_) {
    ++stats_.over_cap;
    return false;
  }
  ++kept_;
  return true;
}

void ActivityDecoder::Add(const CUpti_Activity* record) {
  ++stats_.records_total;
  if (record == nullptr) {
    ++stats_.records_invalid;
    return;
  }
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      AddKernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      AddMemcpy(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      AddMemcpyPtoP(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      AddMemset(*reinterpret_cast<const CUpti_ActivityMemset4*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      AddApi(*reinterpret_cast<const CUpti_ActivityAPI*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      AddMarker(*reinterpret_cast<const CUpti_ActivityMarker2*>(record));
      break;
    case CUPTI_ACTIVITY_KIND_MARKER_DATA:
      break;  // colour/payload/category: nothing in the trace schema uses them yet
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto& o = *reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      if (o.end > o.start) stats_.overhead_ns += o.end - o.start;
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& e = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      if (external_ids_.emplace(e.correlationId, e.externalId).second) {
        external_order_.push_back(e.correlationId);
        while (external_order_.size() > kExternalIdCapacity) {
          external_ids_.erase(external_order_.front());
          external_order_.pop_front();
        }
      } else {
        external_ids_[e.correlationId] = e.externalId;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE:
      AddDevice(*reinterpret_cast<const CUpti_ActivityDevice5*>(record));
      break;
    default:
      ++stats_.records_unknown;
      break;
  }
}

void ActivityDecoder::AddKernel(const CUpti_ActivityKernel10& k) {
  ++stats_.kernels;
  if (!KeepGpuRecord(k.start, k.end)) return;
  ActivityData a;
  a.kind = ActivityKindData::kKernel;
  a.device_id = k.deviceId;
  a.stream_id = k.streamId;
  a.start_ns = Ns(k.start);
  a.end_ns = Ns(k.end);
  a.correlation_id = k.correlationId;
  if (k.name != nullptr) {
    const auto& [mangled, demangled] = KernelName(k.name);
    a.mangled_name = mangled;
    a.name = demangled;
  }
  a.grid = Dim3Data{static_cast<uint32_t>(k.gridX), static_cast<uint32_t>(k.gridY),
                    static_cast<uint32_t>(k.gridZ)};
  a.block = Dim3Data{static_cast<uint32_t>(k.blockX), static_cast<uint32_t>(k.blockY),
                     static_cast<uint32_t>(k.blockZ)};
  a.registers_per_thread = k.registersPerThread;
  a.static_shared_bytes = static_cast<uint32_t>(k.staticSharedMemory);
  a.dynamic_shared_bytes = static_cast<uint32_t>(k.dynamicSharedMemory);
  if (k.graphId != 0) {
    ++stats_.graph_kernels;
    a.graph_id = k.graphId;
    a.graph_node_id = k.graphNodeId;
  }
  Route(std::move(a));
}

void ActivityDecoder::AddMemcpy(const CUpti_ActivityMemcpy6& m) {
  if (!KeepGpuRecord(m.start, m.end)) return;
  ActivityData a;
  a.kind = ActivityKindData::kMemcpy;
  a.device_id = m.deviceId;
  a.stream_id = m.streamId;
  a.start_ns = Ns(m.start);
  a.end_ns = Ns(m.end);
  a.correlation_id = m.correlationId;
  a.bytes = m.bytes;
  a.copy_kind = CopyKindName(m.copyKind);
  a.name = std::string("Memcpy ") + a.copy_kind;
  a.graph_id = m.graphId;
  a.graph_node_id = m.graphNodeId;
  Route(std::move(a));
}

void ActivityDecoder::AddMemcpyPtoP(const CUpti_ActivityMemcpyPtoP4& p) {
  if (!KeepGpuRecord(p.start, p.end)) return;
  ActivityData a;
  a.kind = ActivityKindData::kMemcpy;
  a.device_id = p.deviceId;
  a.stream_id = p.streamId;
  a.start_ns = Ns(p.start);
  a.end_ns = Ns(p.end);
  a.correlation_id = p.correlationId;
  a.bytes = p.bytes;
  a.copy_kind = "PtoP";
  a.name = "Memcpy PtoP";
  a.graph_id = p.graphId;
  a.graph_node_id = p.graphNodeId;
  Route(std::move(a));
}

void ActivityDecoder::AddMemset(const CUpti_ActivityMemset4& m) {
  if (!KeepGpuRecord(m.start, m.end)) return;
  ActivityData a;
  a.kind = ActivityKindData::kMemset;
  a.device_id = m.deviceId;
  a.stream_id = m.streamId;
  a.start_ns = Ns(m.start);
  a.end_ns = Ns(m.end);
  a.correlation_id = m.correlationId;
  a.bytes = m.bytes;
  a.name = "Memset";
  a.graph_id = m.graphId;
  a.graph_node_id = m.graphNodeId;
  Route(std::move(a));
}

void ActivityDecoder::Attribute(const LaunchInfo& launch, ActivityData* a) const {
  a->pid = launch.pid;
  a->tid = launch.tid;
  a->nvtx_path = launch.nvtx_path;
  a->nvtx_domain_paths = launch.domain_paths;
  // The API call's start, on the same clock as the GPU records: the idle causes need it.
  a->launch_ns = launch.start_ns;
}

void ActivityDecoder::AddCapturedNode(uint64_t node_id, uint32_t launch_correlation,
                                      uint32_t capture_correlation) {
  capture_paths_.NodeCaptured(node_id, launch_correlation, capture_correlation,
                              [this](uint32_t correlation, std::string* path) {
                                const LaunchInfo* read = launches_.Find(correlation);
                                if (read == nullptr) return false;
                                *path = read->nvtx_path;
                                return true;
                              });
}

void ActivityDecoder::AddClonedNode(uint64_t node_id, uint64_t original_id) {
  capture_paths_.NodeCloned(node_id, original_id);
}

void ActivityDecoder::Emit(ActivityData a) {
  // Capture ranges are decided by when the work was launched: known only now.
  if (capture_gate_ != nullptr && !capture_gate_->OpenAt(a.launch_ns ? *a.launch_ns : a.start_ns)) {
    ++stats_.records_outside_window;
    if (kept_ > 0) --kept_;  // counted as kept by KeepGpuRecord
    return;
  }
  if (a.kind == ActivityKindData::kKernel && a.graph_node_id != 0) {
    std::string below;
    if (capture_paths_.PathBelowCapture(a.graph_node_id, &below)) {
      ++stats_.graph_kernels_capture_path;
      if (!below.empty()) {
        a.args["graph_launch_nvtx_path"] = a.nvtx_path;
        a.nvtx_path = a.nvtx_path.empty() ? below : a.nvtx_path + "/" + below;
        a.args["nvtx_path_source"] = "graph capture";
      }
    } else {
      ++stats_.graph_kernels_unmapped;
    }
  }
  auto ext = external_ids_.find(static_cast<uint32_t>(a.correlation_id));
  if (ext != external_ids_.end()) a.args["external_id"] = std::to_string(ext->second);
  ++stats_.emitted;
  ready_.push_back(std::move(a));
}

void ActivityDecoder::Route(ActivityData a) {
  const uint32_t corr = static_cast<uint32_t>(a.correlation_id);
  if (const LaunchInfo* launch = launches_.Find(corr)) {
    Attribute(*launch, &a);
    Emit(std::move(a));
  } else if (!expect_launch_records_) {
    ++stats_.unattributed;
    Emit(std::move(a));
  } else {
    pending_[corr].push_back(Pending{std::move(a), 0});
  }
}

void ActivityDecoder::AddApi(const CUpti_ActivityAPI& api) {
  LaunchInfo info;
  info.pid = api.processId;
  info.tid = api.threadId;
  info.start_ns = Ns(api.start);
  info.cbid = api.cbid;
  info.runtime = api.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
  info.nvtx_path = nvtx_.PathOn(info.tid, &info.domain_paths);
  capture_paths_.OnApiRecord(api.correlationId, info.nvtx_path);
  last_timestamp_ = std::max(last_timestamp_, Ns(api.end));
  launches_.Add(api.correlationId, std::move(info));
  auto held = pending_.find(api.correlationId);
  if (held == pending_.end()) return;
  const LaunchInfo* launch = launches_.Find(api.correlationId);
  for (Pending& p : held->second) {
    if (launch != nullptr) Attribute(*launch, &p.activity);
    Emit(std::move(p.activity));
  }
  pending_.erase(held);
}

void ActivityDecoder::AddMarker(const CUpti_ActivityMarker2& m) {
  last_timestamp_ = std::max(last_timestamp_, Ns(m.timestamp));
  uint32_t pid = 0;
  uint64_t tid = 0;
  if (m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
      m.objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS) {
    pid = m.objectId.pt.processId;
    tid = m.objectId.pt.threadId;
  }
  if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    nvtx_.OnStart(m.id, ValidUtf8(m.name), ValidUtf8(m.domain), Ns(m.timestamp), pid, tid);
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    nvtx_.OnEnd(m.id, Ns(m.timestamp));
  }
  // Instantaneous and sync markers carry no range: nothing to attribute.
}

void ActivityDecoder::AddDevice(const CUpti_ActivityDevice5& d) {
  DeviceData info;
  info.id = d.id;
  info.name = ValidUtf8(d.name);
  info.kind = "gpu";
  info.cc_major = d.computeCapabilityMajor;
  info.cc_minor = d.computeCapabilityMinor;
  info.arch = "sm_" + std::to_string(d.computeCapabilityMajor) +
              std::to_string(d.computeCapabilityMinor);
  info.sm_count = d.numMultiprocessors;
  info.memory_bytes = d.globalMemorySize;
  // CUPTI reports bandwidth in KB/s and the core clock in kHz.
  info.memory_bandwidth_gbps = static_cast<double>(d.globalMemoryBandwidth) * 1e3 / 1e9;
  info.clock_mhz = static_cast<double>(d.coreClockRate) / 1e3;
  devices_.push_back(std::move(info));
}

void ActivityDecoder::TakeReady(DecodedBatch* out, bool final) {
  // Held records: released unattributed when too old, or at the end.
  for (auto it = pending_.begin(); it != pending_.end();) {
    std::vector<Pending>& list = it->second;
    bool release = final;
    for (Pending& p : list) release = release || ++p.age > kMaxPendingBatches;
    if (!release) {
      ++it;
      continue;
    }
    for (Pending& p : list) {
      ++stats_.unattributed;
      Emit(std::move(p.activity));
    }
    it = pending_.erase(it);
  }
  if (out->activities.empty()) {
    out->activities.swap(ready_);  // the usual case: no copy of ~0.5 KB per record
  } else {
    for (ActivityData& a : ready_) out->activities.push_back(std::move(a));
  }
  ready_.clear();
  if (final) nvtx_.CloseAll(last_timestamp_);
  nvtx_.TakeClosed(&out->ranges);
  for (DeviceData& d : devices_) out->devices.push_back(std::move(d));
  devices_.clear();
}

}  // namespace qprof::profiler::cupti
