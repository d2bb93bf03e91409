// The fake GPU's scripted program: contexts, launches, graphs, copies, NVTX. Each
// operation writes the records CUPTI would (API record now, GPU record later) and issues
// the callbacks it would.
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <generated_nvtx_meta.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "tests/profiler/cupti/fake/fake_cupti.h"

namespace qprof::profiler::cupti::fake {
namespace {

template <typename T>
std::vector<uint8_t> Bytes(const T& record) {
  std::vector<uint8_t> out(sizeof(T));
  std::memcpy(out.data(), &record, sizeof(T));
  return out;
}

}  // namespace

// ---- The scripted program -----------------------------------------------------------------

CUcontext FakeCupti::CreateContext(uint32_t device) {
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(mu_);
    next_context_ += 0x100;
    ctx = reinterpret_cast<CUcontext>(next_context_);
    contexts_[ctx].device = device;
  }
  t_current_ = ctx;
  if (Enabled(CUPTI_ACTIVITY_KIND_DEVICE) && device < devices_.size()) {
    const FakeDevice& d = devices_[device];
    CUpti_ActivityDevice5 r;
    std::memset(&r, 0, sizeof(r));
    r.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    r.id = device;
    r.name = Intern(d.name);
    r.computeCapabilityMajor = d.cc_major;
    r.computeCapabilityMinor = d.cc_minor;
    r.numMultiprocessors = d.sm_count;
    r.globalMemorySize = d.memory_bytes;
    r.coreClockRate = d.clock_khz;
    Emit(&r, sizeof(r));
  }
  CUpti_ResourceData data = {};
  data.context = ctx;
  DispatchCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
  return ctx;
}

void FakeCupti::DestroyContext(CUcontext ctx) {
  CUpti_ResourceData data = {};
  data.context = ctx;
  DispatchCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &data);
  std::lock_guard<std::mutex> lock(mu_);
  contexts_.erase(ctx);
  range_by_ctx_.erase(ctx);
  // The counter data dies with the context: a session not ended by now decodes nothing.
  for (const auto& object : range_objects_) {
    if (object->ctx != ctx) continue;
    object->dead = true;
    object->kernels.clear();
    object->ctas.clear();
    object->names.clear();
  }
  if (t_current_ == ctx) t_current_ = nullptr;
}

uint32_t FakeCupti::ApiRecord(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t tid,
                              uint64_t start, uint64_t end) {
  const uint32_t correlation = next_correlation_.fetch_add(1);
  WriteApiRecord(kind, cbid, tid, start, end, correlation);
  return correlation;
}

void FakeCupti::WriteApiRecord(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t tid,
                               uint64_t start, uint64_t end, uint32_t correlation) {
  ExternalRecord(tid, correlation);
  if (!Enabled(kind)) return;
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof(a));
  a.kind = kind;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.processId = pid;
  a.threadId = static_cast<uint32_t>(tid);
  a.correlationId = correlation;
  Emit(&a, sizeof(a));
}

void FakeCupti::ExternalRecord(uint64_t tid, uint32_t correlation) {
  uint64_t external = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = external_ids_.find(tid);
    if (it == external_ids_.end() || it->second.empty()) return;
    external = it->second.back();
  }
  if (!Enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) return;
  CUpti_ActivityExternalCorrelation e;
  std::memset(&e, 0, sizeof(e));
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  e.externalId = external;
  e.correlationId = correlation;
  Emit(&e, sizeof(e));
}

void FakeCupti::PushExternalId(uint64_t tid, uint64_t external_id) {
  std::lock_guard<std::mutex> lock(mu_);
  external_ids_[tid].push_back(external_id);
}

void FakeCupti::PopExternalId(uint64_t tid) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = external_ids_.find(tid);
  if (it != external_ids_.end() && !it->second.empty()) it->second.pop_back();
}

uint64_t FakeCupti::GpuSlot(CUcontext ctx, uint32_t stream, uint64_t after, uint64_t duration) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t& free = contexts_[ctx].stream_free[stream];
  const uint64_t start = std::max(free, after + 2000);
  free = start + duration;
  return start;
}

void FakeCupti::DriverCallback(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, CUcontext ctx,
                               const char* symbol, const void* params, CUresult rc,
                               uint32_t correlation) {
  CUpti_CallbackData data = {};
  data.callbackSite = site;
  data.functionName = "cu (fake)";
  data.functionParams = params;
  data.symbolName = symbol;
  data.context = ctx;
  data.correlationId = correlation;
  CUresult result = rc;
  data.functionReturnValue = site == CUPTI_API_EXIT ? &result : nullptr;
  DispatchCallback(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &data);
}

uint32_t FakeCupti::GridOf(const std::string& kernel) {
  uint32_t h = 2166136261u;  // FNV-1a: the same grid for a name in every process
  for (unsigned char c : kernel) h = (h ^ c) * 16777619u;
  return 1 + h % 997;
}

void FakeCupti::KernelRecord(CUcontext ctx, uint32_t stream, const std::string& name,
                             uint32_t grid, uint32_t block, uint64_t start, uint64_t duration,
                             uint32_t correlation, uint32_t graph_id, uint64_t node_id) {
  if (!Enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return;
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = Intern(name);
  k.start = GpuSlot(ctx, stream, start, duration);
  k.end = k.start + duration;
  k.correlationId = correlation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    k.deviceId = contexts_.count(ctx) ? contexts_[ctx].device : 0;
  }
  k.streamId = stream;
  k.gridX = static_cast<int32_t>(grid); k.gridY = 1; k.gridZ = 1;
  k.blockX = block; k.blockY = 1; k.blockZ = 1;
  k.registersPerThread = 64;
  k.dynamicSharedMemory = 16384;
  k.graphId = graph_id;
  k.graphNodeId = node_id;
  EmitGpu(Bytes(k));
}

uint32_t FakeCupti::LaunchKernel(CUcontext ctx, uint32_t stream, const std::string& name,
                                 uint64_t duration_ns, uint64_t tid) {
  FakeLaunch l;
  l.name = name;
  l.duration_ns = duration_ns;
  return Launch(ctx, stream, l, tid);
}

uint32_t FakeCupti::Launch(CUcontext ctx, uint32_t stream, const FakeLaunch& l, uint64_t tid) {
  const uint32_t grid = l.grid != 0 ? l.grid : GridOf(l.name);
  const uint64_t start = HostNow();
  if (l.internal) {
    // A kernel a library launches inside its own call (here a memset): the call's API
    // record, a range, the kernel record; no launch callbacks.
    const uint32_t correlation = ApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME,
                                           CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, tid,
                                           start, HostNow(300));
    {
      std::lock_guard<std::mutex> serial(launch_mu_);
      AddRange(ctx, l.name, grid, l.block);
    }
    KernelRecord(ctx, stream, l.name, grid, l.block, start, l.duration_ns, correlation, 0, 0);
    return correlation;
  }
  const uint32_t correlation = next_correlation_.fetch_add(1);
  cuLaunchKernel_params params = {};
  params.gridDimX = grid;
  params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = l.block;
  params.blockDimY = params.blockDimZ = 1;
  params.hStream = reinterpret_cast<CUstream>(static_cast<uintptr_t>(stream));
  const char* symbol = Intern(l.name);
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  uint64_t capture = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto c = contexts_.find(ctx);
    if (c != contexts_.end()) {
      auto it = c->second.capturing.find(stream);
      if (it != c->second.capturing.end()) capture = it->second;
    }
  }
  if (capture != 0) {
    // Captured: a node is made between the callbacks; nothing runs.
    DriverCallback(kCbid, CUPTI_API_ENTER, ctx, symbol, &params, CUDA_SUCCESS, correlation);
    const uint64_t node = next_node_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      graphs_[capture].nodes.push_back(GraphNode{node, l.name, grid, l.block});
    }
    if (!faults.hide_capture_nodes) {
      GraphResource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, capture, node, 0, 0, 0);
    }
    DriverCallback(kCbid, CUPTI_API_EXIT, ctx, symbol, &params, CUDA_SUCCESS, correlation);
    WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                   tid, start, HostNow(300), correlation);
    return correlation;
  }
  const bool runs = l.result == CUDA_SUCCESS;
  if (faults.interleave_launch_callbacks) {
    DriverCallback(kCbid, CUPTI_API_ENTER, ctx, symbol, &params, CUDA_SUCCESS, correlation);
    {
      std::lock_guard<std::mutex> serial(launch_mu_);
      if (runs) AddRange(ctx, l.name, grid, l.block);
    }
    DriverCallback(kCbid, CUPTI_API_EXIT, ctx, symbol, &params, l.result, correlation);
  } else {
    // Auto range serialises launches: one launch's callbacks and range at a time.
    std::lock_guard<std::mutex> serial(launch_mu_);
    DriverCallback(kCbid, CUPTI_API_ENTER, ctx, symbol, &params, CUDA_SUCCESS, correlation);
    if (runs) AddRange(ctx, l.name, grid, l.block);
    DriverCallback(kCbid, CUPTI_API_EXIT, ctx, symbol, &params, l.result, correlation);
  }
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, tid,
                 start, HostNow(300), correlation);
  if (runs) KernelRecord(ctx, stream, l.name, grid, l.block, start, l.duration_ns, correlation, 0, 0);
  return correlation;
}

uint32_t FakeCupti::Memcpy(CUcontext ctx, uint32_t stream, uint8_t copy_kind, uint64_t bytes,
                           uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation =
      ApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, tid,
                start, HostNow(300));
  if (!Enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return correlation;
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.bytes = bytes;
  m.start = GpuSlot(ctx, stream, start, 5000);
  m.end = m.start + 5000;
  m.streamId = stream;
  m.correlationId = correlation;
  EmitGpu(Bytes(m));
  return correlation;
}

uint32_t FakeCupti::Memset(CUcontext ctx, uint32_t stream, uint64_t bytes, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation =
      ApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, tid,
                start, HostNow(300));
  if (!Enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return correlation;
  CUpti_ActivityMemset4 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  m.bytes = bytes;
  m.start = GpuSlot(ctx, stream, start, 3000);
  m.end = m.start + 3000;
  m.streamId = stream;
  m.correlationId = correlation;
  EmitGpu(Bytes(m));
  return correlation;
}

bool FakeCupti::NvtxInjected() {
  // NVTX reads its injection variable once, at the process's first NVTX call.
  int expected = -1;
  const char* inject = std::getenv("NVTX_INJECTION64_PATH");
  const bool injected = inject != nullptr && inject[0] != '\0' &&
                        (nvtx_requires_path.empty() || nvtx_requires_path == inject);
  nvtx_state_.compare_exchange_strong(expected, injected ? 1 : 0);
  return nvtx_state_ == 1;
}

void FakeCupti::EmitMarker(bool start, uint32_t id, uint64_t tid, const char* name,
                           const char* domain) {
  if (!Enabled(CUPTI_ACTIVITY_KIND_MARKER)) return;
  CUpti_ActivityMarker2 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = start ? CUPTI_ACTIVITY_FLAG_MARKER_START : CUPTI_ACTIVITY_FLAG_MARKER_END;
  m.timestamp = HostNow();
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = pid;
  m.objectId.pt.threadId = static_cast<uint32_t>(tid);
  m.name = name;
  m.domain = domain;
  Emit(&m, sizeof(m));
}

void FakeCupti::NvtxCallback(CUpti_CallbackId cbid, const void* params, const void* result) {
  CUpti_NvtxData d = {};
  d.functionName = "nvtx (fake)";
  d.functionParams = params;
  d.functionReturnValue = result;
  DispatchCallback(CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

void* FakeCupti::NvtxDomain(const std::string& domain) {
  void* handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = nvtx_domains_.find(domain);
    if (it != nvtx_domains_.end()) return it->second;
    handle = reinterpret_cast<void*>(0xD0000 + 0x10 * nvtx_domains_.size());
    nvtx_domains_[domain] = handle;
  }
  nvtxDomainCreateA_params p = {Intern(domain)};
  nvtxDomainHandle_t h = static_cast<nvtxDomainHandle_t>(handle);
  NvtxCallback(CUPTI_CBID_NVTX_nvtxDomainCreateA, &p, &h);
  return handle;
}

namespace {

nvtxEventAttributes_t Ascii(const char* message) {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

}  // namespace

void FakeCupti::NvtxPush(uint64_t tid, const std::string& name, const std::string& domain) {
  if (!NvtxInjected()) return;
  const uint32_t id = next_marker_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    nvtx_stacks_[tid][domain].push_back(id);
  }
  EmitMarker(true, id, tid, Intern(name), domain.empty() ? nullptr : Intern(domain));
  int depth = 0;
  if (domain.empty()) {
    nvtxRangePushA_params p = {Intern(name)};
    NvtxCallback(CUPTI_CBID_NVTX_nvtxRangePushA, &p, &depth);
  } else {
    const nvtxEventAttributes_t a = Ascii(Intern(name));
    nvtxDomainRangePushEx_params p = {};
    p.domain = static_cast<nvtxDomainHandle_t>(NvtxDomain(domain));
    p.core.eventAttrib = &a;
    NvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &p, &depth);
  }
}

void FakeCupti::NvtxPop(uint64_t tid, const std::string& domain) {
  if (!NvtxInjected()) return;
  uint32_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& stack = nvtx_stacks_[tid][domain];
    if (stack.empty()) return;
    id = stack.back();
    stack.pop_back();
  }
  EmitMarker(false, id, tid, nullptr, domain.empty() ? nullptr : Intern(domain));
  int depth = 0;
  if (domain.empty()) {
    nvtxRangePop_params p = {};
    NvtxCallback(CUPTI_CBID_NVTX_nvtxRangePop, &p, &depth);
  } else {
    nvtxDomainRangePop_params p = {static_cast<nvtxDomainHandle_t>(NvtxDomain(domain))};
    NvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangePop, &p, &depth);
  }
}

uint32_t FakeCupti::NvtxRangeStart(uint64_t tid, const std::string& name, const std::string& domain) {
  if (!NvtxInjected()) return 0;
  const uint32_t id = next_marker_.fetch_add(1);
  EmitMarker(true, id, tid, Intern(name), domain.empty() ? nullptr : Intern(domain));
  nvtxRangeId_t range = id;
  if (domain.empty()) {
    nvtxRangeStartA_params p = {Intern(name)};
    NvtxCallback(CUPTI_CBID_NVTX_nvtxRangeStartA, &p, &range);
  } else {
    const nvtxEventAttributes_t a = Ascii(Intern(name));
    nvtxDomainRangeStartEx_params p = {};
    p.domain = static_cast<nvtxDomainHandle_t>(NvtxDomain(domain));
    p.core.eventAttrib = &a;
    NvtxCallback(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &p, &range);
  }
  return id;
}

void FakeCupti::NvtxRangeEnd(uint32_t id, uint64_t tid) {
  if (!NvtxInjected() || id == 0) return;
  EmitMarker(false, id, tid, nullptr, nullptr);
  nvtxRangeEnd_params p = {id};
  NvtxCallback(CUPTI_CBID_NVTX_nvtxRangeEnd, &p, nullptr);
}

void FakeCupti::ProfilerStart(CUcontext ctx, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation = next_correlation_.fetch_add(1);
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuProfilerStart;
  DriverCallback(kCbid, CUPTI_API_ENTER, ctx, nullptr, nullptr, CUDA_SUCCESS, correlation);
  DriverCallback(kCbid, CUPTI_API_EXIT, ctx, nullptr, nullptr, CUDA_SUCCESS, correlation);
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, tid,
                 start, HostNow(300), correlation);
}

void FakeCupti::ProfilerStop(CUcontext ctx, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation = next_correlation_.fetch_add(1);
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
  DriverCallback(kCbid, CUPTI_API_ENTER, ctx, nullptr, nullptr, CUDA_SUCCESS, correlation);
  DriverCallback(kCbid, CUPTI_API_EXIT, ctx, nullptr, nullptr, CUDA_SUCCESS, correlation);
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, tid,
                 start, HostNow(300), correlation);
}

}  // namespace qprof::profiler::cupti::fake
