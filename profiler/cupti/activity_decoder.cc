#include "profiler/cupti/activity_decoder.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace qprof::profiler::cupti {
namespace {

int64_t Ns(uint64_t t) { return static_cast<int64_t>(t); }

}  // namespace

void LaunchIndex::Add(uint32_t correlation_id, const LaunchInfo& info) {
  auto [it, inserted] = by_correlation.emplace(correlation_id, info);
  if (!inserted && info.start_ns < it->second.start_ns) it->second = info;
}

const LaunchInfo* LaunchIndex::Find(uint32_t correlation_id) const {
  auto it = by_correlation.find(correlation_id);
  return it == by_correlation.end() ? nullptr : &it->second;
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

bool ActivityDecoder::KeepGpuRecord(uint64_t start, uint64_t end) {
  if (start == 0 || end <= start) {
    ++stats_.records_invalid;
    return false;
  }
  last_timestamp_ = std::max(last_timestamp_, Ns(end));
  if (Ns(start) < window_begin_ || Ns(start) >= window_end_) {
    ++stats_.records_outside_window;
    return false;
  }
  if (activities_.size() >= max_activities_) {
    ++stats_.over_cap;
    return false;
  }
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
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto& p = *reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      if (!KeepGpuRecord(p.start, p.end)) break;
      proto::Activity a;
      a.set_kind(proto::ACTIVITY_KIND_MEMCPY);
      a.set_device_id(p.deviceId);
      a.set_stream_id(p.streamId);
      a.set_start_ns(Ns(p.start));
      a.set_end_ns(Ns(p.end));
      a.set_correlation_id(p.correlationId);
      a.set_bytes(p.bytes);
      a.set_copy_kind("PtoP");
      a.set_name("Memcpy PtoP");
      a.set_graph_id(p.graphId);
      a.set_graph_node_id(p.graphNodeId);
      activities_.push_back(std::move(a));
      break;
    }
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
      external_ids_[e.correlationId] = e.externalId;
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
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_KERNEL);
  a.set_device_id(k.deviceId);
  a.set_stream_id(k.streamId);
  a.set_start_ns(Ns(k.start));
  a.set_end_ns(Ns(k.end));
  a.set_correlation_id(k.correlationId);
  if (k.name != nullptr) {
    a.set_mangled_name(k.name);
    a.set_name(DemangleKernelName(k.name));
  }
  a.mutable_grid()->set_x(static_cast<uint32_t>(k.gridX));
  a.mutable_grid()->set_y(static_cast<uint32_t>(k.gridY));
  a.mutable_grid()->set_z(static_cast<uint32_t>(k.gridZ));
  a.mutable_block()->set_x(static_cast<uint32_t>(k.blockX));
  a.mutable_block()->set_y(static_cast<uint32_t>(k.blockY));
  a.mutable_block()->set_z(static_cast<uint32_t>(k.blockZ));
  a.set_registers_per_thread(k.registersPerThread);
  a.set_static_shared_bytes(static_cast<uint32_t>(k.staticSharedMemory));
  a.set_dynamic_shared_bytes(static_cast<uint32_t>(k.dynamicSharedMemory));
  if (k.graphId != 0) {
    ++stats_.graph_kernels;
    a.set_graph_id(k.graphId);
    a.set_graph_node_id(k.graphNodeId);
  }
  activities_.push_back(std::move(a));
}

void ActivityDecoder::AddMemcpy(const CUpti_ActivityMemcpy6& m) {
  if (!KeepGpuRecord(m.start, m.end)) return;
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_MEMCPY);
  a.set_device_id(m.deviceId);
  a.set_stream_id(m.streamId);
  a.set_start_ns(Ns(m.start));
  a.set_end_ns(Ns(m.end));
  a.set_correlation_id(m.correlationId);
  a.set_bytes(m.bytes);
  a.set_copy_kind(CopyKindName(m.copyKind));
  a.set_name(std::string("Memcpy ") + CopyKindName(m.copyKind));
  a.set_graph_id(m.graphId);
  a.set_graph_node_id(m.graphNodeId);
  activities_.push_back(std::move(a));
}

void ActivityDecoder::AddMemset(const CUpti_ActivityMemset4& m) {
  if (!KeepGpuRecord(m.start, m.end)) return;
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_MEMSET);
  a.set_device_id(m.deviceId);
  a.set_stream_id(m.streamId);
  a.set_start_ns(Ns(m.start));
  a.set_end_ns(Ns(m.end));
  a.set_correlation_id(m.correlationId);
  a.set_bytes(m.bytes);
  a.set_name("Memset");
  a.set_graph_id(m.graphId);
  a.set_graph_node_id(m.graphNodeId);
  activities_.push_back(std::move(a));
}

void ActivityDecoder::AddApi(const CUpti_ActivityAPI& api) {
  LaunchInfo info;
  info.pid = api.processId;
  info.tid = api.threadId;
  info.start_ns = Ns(api.start);
  info.cbid = api.cbid;
  info.runtime = api.kind == CUPTI_ACTIVITY_KIND_RUNTIME;
  last_timestamp_ = std::max(last_timestamp_, Ns(api.end));
  launches_.Add(api.correlationId, info);
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
    nvtx_.OnStart(m.id, m.name != nullptr ? m.name : "", Ns(m.timestamp), pid, tid);
  } else if (m.flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    nvtx_.OnEnd(m.id, Ns(m.timestamp));
  }
  // Instantaneous and sync markers carry no range: nothing to attribute.
}

void ActivityDecoder::AddDevice(const CUpti_ActivityDevice5& d) {
  proto::DeviceInfo info;
  info.set_id(d.id);
  if (d.name != nullptr) info.set_name(d.name);
  info.set_kind("gpu");
  info.set_cc_major(d.computeCapabilityMajor);
  info.set_cc_minor(d.computeCapabilityMinor);
  info.set_arch("sm_" + std::to_string(d.computeCapabilityMajor) +
                std::to_string(d.computeCapabilityMinor));
  info.set_sm_count(d.numMultiprocessors);
  info.set_memory_bytes(d.globalMemorySize);
  // CUPTI reports bandwidth in KB/s and the core clock in kHz.
  info.set_memory_bandwidth_gbps(static_cast<double>(d.globalMemoryBandwidth) * 1e3 / 1e9);
  info.set_clock_mhz(static_cast<double>(d.coreClockRate) / 1e3);
  devices_.push_back(std::move(info));
}

void ActivityDecoder::Finish(proto::Trace* trace) {
  nvtx_.Finish(last_timestamp_);
  std::stable_sort(activities_.begin(), activities_.end(),
                   [](const proto::Activity& a, const proto::Activity& b) {
                     return a.start_ns() < b.start_ns();
                   });
  for (proto::Activity& a : activities_) {
    const uint32_t corr = static_cast<uint32_t>(a.correlation_id());
    if (const LaunchInfo* launch = launches_.Find(corr)) {
      a.set_pid(launch->pid);
      a.set_tid(launch->tid);
      a.set_nvtx_path(nvtx_.PathAt(launch->tid, launch->start_ns));
    } else {
      ++stats_.unattributed;
    }
    auto ext = external_ids_.find(corr);
    if (ext != external_ids_.end()) {
      (*a.mutable_args())["external_id"] = std::to_string(ext->second);
    }
    *trace->add_activities() = std::move(a);
  }
  activities_.clear();
  for (const ClosedRange* r : nvtx_.AllRanges()) {
    proto::NvtxRange* out = trace->add_ranges();
    out->set_path(r->path);
    out->set_name(r->name);
    out->set_start_ns(r->start_ns);
    out->set_end_ns(r->end_ns);
    out->set_pid(r->pid);
    out->set_tid(r->tid);
    out->set_depth(r->depth);
  }
  for (proto::DeviceInfo& d : devices_) {
    bool present = false;
    for (const proto::DeviceInfo& have : trace->header().devices()) {
      present = present || (have.id() == d.id() && have.kind() == "gpu");
    }
    if (!present) *trace->mutable_header()->add_devices() = std::move(d);
  }
  devices_.clear();
  proto::CollectorStats* s = trace->mutable_header()->mutable_collector();
  s->set_records_total(s->records_total() + stats_.records_total);
  s->set_records_invalid(s->records_invalid() + stats_.records_invalid);
  s->set_overhead_ns(s->overhead_ns() + stats_.overhead_ns);
  if (stats_.unattributed > 0) {
    s->add_warnings(std::to_string(stats_.unattributed) +
                    " GPU records had no launch API record (no thread/NVTX path)");
  }
  if (nvtx_.unclosed() > 0) {
    s->add_warnings(std::to_string(nvtx_.unclosed()) +
                    " NVTX ranges were still open at the end; closed at the last timestamp");
  }
  if (stats_.over_cap > 0) {
    s->add_warnings(std::to_string(stats_.over_cap) + " GPU records beyond the limit of " +
                    std::to_string(max_activities_) +
                    " kept in memory were left out (use --duration to profile a window)");
  }
  if (stats_.records_outside_window > 0) {
    s->add_warnings(std::to_string(stats_.records_outside_window) +
                    " GPU records outside the --duration window were left out");
  }
}

}  // namespace qprof::profiler::cupti
