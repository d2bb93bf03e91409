// The fake GPU's scripted program: contexts, launches, graphs, copies, NVTX. Each
// operation writes the records CUPTI would (API record now, GPU record later) and issues
// the callbacks it would.
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

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
  if (t_current_ == ctx) t_current_ = nullptr;
}

uint32_t FakeCupti::ApiRecord(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t tid,
                              uint64_t start, uint64_t end) {
  const uint32_t correlation = next_correlation_.fetch_add(1);
  if (Enabled(kind)) {
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
  return correlation;
}

uint64_t FakeCupti::GpuSlot(CUcontext ctx, uint32_t stream, uint64_t after, uint64_t duration) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t& free = contexts_[ctx].stream_free[stream];
  const uint64_t start = std::max(free, after + 2000);
  free = start + duration;
  return start;
}

void FakeCupti::LaunchCallbacks(CUcontext ctx, const std::string& name, uint32_t correlation) {
  CUpti_CallbackData data = {};
  data.functionName = "cuLaunchKernel";
  data.symbolName = Intern(name);
  data.context = ctx;
  data.correlationId = correlation;
  CUresult rc = CUDA_SUCCESS;
  data.functionReturnValue = &rc;
  data.callbackSite = CUPTI_API_ENTER;
  DispatchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &data);
  data.callbackSite = CUPTI_API_EXIT;
  DispatchCallback(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &data);
}

uint32_t FakeCupti::LaunchKernel(CUcontext ctx, uint32_t stream, const std::string& name,
                                 uint64_t duration_ns, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation =
      ApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, tid,
                start, HostNow(300));
  {
    // Auto range serialises kernel launches: a launch's callbacks and its range are not
    // interleaved with another thread's.
    std::lock_guard<std::mutex> serial(launch_mu_);
    LaunchCallbacks(ctx, name, correlation);
    AddRange(ctx, name);
  }
  if (!Enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return correlation;
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof(k));
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = Intern(name);
  k.start = GpuSlot(ctx, stream, start, duration_ns);
  k.end = k.start + duration_ns;
  k.correlationId = correlation;
  {
    std::lock_guard<std::mutex> lock(mu_);
    k.deviceId = contexts_.count(ctx) ? contexts_[ctx].device : 0;
  }
  k.streamId = stream;
  k.gridX = 132; k.gridY = 1; k.gridZ = 1;
  k.blockX = 256; k.blockY = 1; k.blockZ = 1;
  k.registersPerThread = 64;
  k.dynamicSharedMemory = 16384;
  EmitGpu(Bytes(k));
  return correlation;
}

uint32_t FakeCupti::GraphLaunch(CUcontext ctx, uint32_t stream,
                                const std::vector<std::string>& kernels, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation =
      ApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, tid,
                start, HostNow(300));
  if (!Enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) return correlation;
  const uint64_t graph = next_graph_.fetch_add(1);
  uint32_t device = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    device = contexts_.count(ctx) ? contexts_[ctx].device : 0;
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = Intern(kernels[i]);
    k.start = GpuSlot(ctx, stream, start, 1000);
    k.end = k.start + 1000;
    k.correlationId = correlation;
    k.deviceId = device;
    k.streamId = stream;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 128; k.blockY = k.blockZ = 1;
    k.graphId = static_cast<uint32_t>(graph);
    k.graphNodeId = graph * 1000 + i;
    EmitGpu(Bytes(k));
  }
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

void FakeCupti::NvtxPush(uint64_t tid, const std::string& name, const std::string& domain) {
  if (!NvtxInjected()) return;
  const uint32_t id = next_marker_.fetch_add(1);
  {
    std::lock_guard<std::mutex> lock(mu_);
    nvtx_stacks_[tid][domain].push_back(id);
  }
  EmitMarker(true, id, tid, Intern(name), domain.empty() ? nullptr : Intern(domain));
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
}

uint32_t FakeCupti::NvtxRangeStart(uint64_t tid, const std::string& name, const std::string& domain) {
  if (!NvtxInjected()) return 0;
  const uint32_t id = next_marker_.fetch_add(1);
  EmitMarker(true, id, tid, Intern(name), domain.empty() ? nullptr : Intern(domain));
  return id;
}

void FakeCupti::NvtxRangeEnd(uint32_t id, uint64_t tid) {
  if (!NvtxInjected() || id == 0) return;
  EmitMarker(false, id, tid, nullptr, nullptr);
}

}  // namespace qprof::profiler::cupti::fake
