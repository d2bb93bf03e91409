// A stand-in libcuda.so.1 for `qprof record` end to end without a GPU.
//
// Emulated driver behaviour (what a run on a real GPU must confirm, see docs/collector.md):
//  - cuInit: at the first call in a process, if CUDA_INJECTION64_PATH is set, the library
//    it names is loaded (dlopen, RTLD_NOW | RTLD_LOCAL) and its InitializeInjection() is
//    called, once, before cuInit returns and before any context exists. NVIDIA documents
//    this for CUDA_INJECTION64_PATH; the flags and the handling of a missing entry point
//    (here: a line on stderr, cuInit still succeeds) are our assumptions.
//  - The primary context is created lazily at the first launch, as the CUDA runtime does,
//    so CUPTI's CONTEXT_CREATED callback comes after InitializeInjection.
//  - cuProfilerStart/Stop (what cudaProfilerStart/Stop call) issue CUPTI's callbacks for
//    them on the fake GPU.
//  - cuDeviceGetCount/Name/Attribute, cuDeviceTotalMem_v2, cuCtxGetCurrent answer for the
//    fake GPU of the stand-in libcupti; called inside cuInit (from InitializeInjection)
//    they say so on stderr (the real driver is not ready for calls then).
// The fake GPU itself lives in the stand-in libcupti.so.13 (found with dlopen(RTLD_NOLOAD)
// once the injection library has loaded it): a real driver runs kernels with or without a
// profiler; here, without CUPTI loaded, a launch is simply not recorded.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "tests/profiler/cupti/fake/fake_cupti.h"  // interfaces only: no fake code linked
#include "tests/profiler/cupti/fake/fake_gpu_app_api.h"

using qprof::profiler::cupti::CuptiApi;
using qprof::profiler::cupti::fake::FakeGpuControl;

namespace {

std::mutex g_mu;
bool g_initialized = false;
CUcontext g_primary = nullptr;
// Set while cuInit runs InitializeInjection: the injection library must not call the
// driver then (the real driver is not ready for it); a call is said on stderr, which the
// end-to-end test looks for.
std::atomic<bool> g_inside_cu_init{false};

void CheckNotInsideCuInit(const char* call) {
  if (g_inside_cu_init.load()) {
    std::fprintf(stderr, "stand-in libcuda: %s called inside cuInit (during InitializeInjection)\n",
                 call);
  }
}

void* FromCupti(const char* entry) {
  void* cupti = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
  if (cupti == nullptr) return nullptr;  // nobody is profiling
  auto get = reinterpret_cast<void* (*)()>(dlsym(cupti, entry));
  dlclose(cupti);
  return get != nullptr ? get() : nullptr;
}

FakeGpuControl* Gpu() { return static_cast<FakeGpuControl*>(FromCupti("qprofFakeGpuControl")); }
CuptiApi* Api() { return static_cast<CuptiApi*>(FromCupti("qprofFakeGpuApi")); }

uint64_t Tid() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

// The primary context, made at the first use after cuInit (the runtime's lazy init).
CUcontext Primary(FakeGpuControl* gpu) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_primary == nullptr) g_primary = gpu->CreateContext(0);
  return g_primary;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int) {
  std::unique_lock<std::mutex> lock(g_mu);
  if (g_initialized) return CUDA_SUCCESS;
  g_initialized = true;
  lock.unlock();
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path != nullptr && path[0] != '\0') {
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    auto init = lib != nullptr ? reinterpret_cast<int (*)()>(dlsym(lib, "InitializeInjection"))
                               : nullptr;
    if (init == nullptr) {
      std::fprintf(stderr, "stand-in libcuda: cannot use %s: %s\n", path, dlerror());
    } else {
      g_inside_cu_init.store(true);
      init();
      g_inside_cu_init.store(false);
    }
  }
  return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext* ctx) {
  CheckNotInsideCuInit("cuCtxGetCurrent");
  CuptiApi* gpu = Api();
  if (gpu == nullptr) {
    *ctx = nullptr;
    return CUDA_SUCCESS;
  }
  return gpu->CtxGetCurrent(ctx);
}

CUresult cuDeviceGetCount(int* count) {
  CheckNotInsideCuInit("cuDeviceGetCount");
  CuptiApi* gpu = Api();
  if (gpu == nullptr) {
    *count = 1;
    return CUDA_SUCCESS;
  }
  return gpu->DeviceGetCount(count);
}

CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  CheckNotInsideCuInit("cuDeviceGetName");
  CuptiApi* gpu = Api();
  return gpu != nullptr ? gpu->DeviceGetName(name, len, dev) : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) {
  CheckNotInsideCuInit("cuDeviceGetAttribute");
  CuptiApi* gpu = Api();
  return gpu != nullptr ? gpu->DeviceGetAttribute(value, attribute, dev) : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  CheckNotInsideCuInit("cuDeviceTotalMem_v2");
  CuptiApi* gpu = Api();
  return gpu != nullptr ? gpu->DeviceTotalMem(bytes, dev) : CUDA_ERROR_NOT_INITIALIZED;
}

// cudaProfilerStart/Stop reach the driver as these.
CUresult cuProfilerStart() {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->ProfilerStart(Primary(gpu), Tid());
  return CUDA_SUCCESS;
}

CUresult cuProfilerStop() {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->ProfilerStop(Primary(gpu), Tid());
  return CUDA_SUCCESS;
}

int qprofFakeLaunchKernel(const char* name, unsigned stream, unsigned duration_ns) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->LaunchKernel(Primary(gpu), stream, name, duration_ns, Tid());
  return 0;
}

int qprofFakeLaunchKernelGrid(const char* name, unsigned stream, unsigned grid,
                              unsigned duration_ns) {
  FakeGpuControl* gpu = Gpu();
  if (gpu == nullptr) return 0;
  qprof::profiler::cupti::fake::FakeLaunch l;
  l.name = name;
  l.grid = grid;
  l.duration_ns = duration_ns;
  gpu->Launch(Primary(gpu), stream, l, Tid());
  return 0;
}

int qprofFakeBeginCapture(unsigned stream) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->BeginCapture(Primary(gpu), stream, Tid());
  return 0;
}

uint64_t qprofFakeEndCaptureAndInstantiate(unsigned stream) {
  FakeGpuControl* gpu = Gpu();
  if (gpu == nullptr) return 0;
  CUcontext ctx = Primary(gpu);
  const uint64_t graph = gpu->EndCapture(ctx, stream, Tid());
  return graph == 0 ? 0 : gpu->Instantiate(ctx, graph, Tid());
}

int qprofFakeLaunchGraphExec(uint64_t exec, unsigned stream) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr && exec != 0) gpu->LaunchGraph(Primary(gpu), stream, exec, Tid());
  return 0;
}

int qprofFakeGraphLaunch(const char* const* names, int n, unsigned stream) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) {
    gpu->GraphLaunch(Primary(gpu), stream, std::vector<std::string>(names, names + n), Tid());
  }
  return 0;
}

int qprofFakeMemcpy(unsigned copy_kind, uint64_t bytes, unsigned stream) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->Memcpy(Primary(gpu), stream, static_cast<uint8_t>(copy_kind), bytes, Tid());
  return 0;
}

int qprofFakeMemset(uint64_t bytes, unsigned stream) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->Memset(Primary(gpu), stream, bytes, Tid());
  return 0;
}

void qprofFakeNvtxPush(const char* domain, const char* name) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->NvtxPush(Tid(), name, domain);
}

void qprofFakeNvtxPop(const char* domain) {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->NvtxPop(Tid(), domain);
}

void qprofFakeSynchronize() {
  FakeGpuControl* gpu = Gpu();
  if (gpu != nullptr) gpu->SyncAll();
}

void qprofFakeDeviceReset() {
  FakeGpuControl* gpu = Gpu();
  if (gpu == nullptr) return;
  gpu->SyncAll();
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    ctx = g_primary;
    g_primary = nullptr;
  }
  if (ctx != nullptr) gpu->DestroyContext(ctx);
}

}  // extern "C"
