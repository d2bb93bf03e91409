// A scripted GPU behind the CuptiApi seam: what libcupti and libcuda would do for a
// program that launches kernels from several threads and streams, pushes NVTX ranges
// (default and named domains), copies, sets memory and replays graphs; plus the faults
// the collector must survive, on demand.
//
// Records are real CUpti_Activity* structs of the CUDA 13.0 headers (CUpti_ActivityKernel10,
// CUpti_ActivityAPI, CUpti_ActivityMarker2, ...) written into the buffers the collector
// hands out, packed at 8-byte alignment as CUPTI packs them, so the real decoder runs.
// What it emulates, and how (each from the CUDA 13.0 headers and CUPTI's documentation;
// where CUPTI documents nothing the comment says so, and scripts/device-check-cupti.sh
// measures it on a GPU):
//  - Buffers: a record goes into the current buffer, requested from the collector's
//    BufferRequested when there is none; when it is full it is completed. No buffer
//    (nullptr) means the record is dropped and counted, as CUPTI does; the count is
//    returned and reset by cuptiActivityGetNumDroppedRecords(NULL, 0) (global queue).
//  - Completed buffers are delivered on the fake's own thread (CUPTI's worker), or by a
//    flush on the calling thread: cuptiActivityFlushAll(0) returns every buffer whose
//    records are complete (all of them here), FORCED the same. Buffer callbacks are
//    process-wide: whoever registered last gets every buffer completed from then on, ours
//    included (RegisterForeignBufferCallbacks: what torch.profiler/Kineto does, with no
//    subscriber).
//  - Host-side records (API, markers, external correlation) are written when they happen;
//    GPU records (kernel, memcpy, memset) when the "device" hands them back, i.e. later:
//    at a flush, at SyncAll(), or when 64 are waiting (as CUPTI's device buffers fill).
//    OVERHEAD records come with every flush.
//  - Callbacks: one subscriber (cuptiSubscribe_v2 fails with
//    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and names the holder when another
//    is attached); resource callbacks at context creation/destruction and for graphs
//    (CUpti_GraphData in resourceDescriptor); driver API callbacks (enter and exit, with
//    symbolName, the launch's parameters and its return code) for launches, graph
//    launches and stream capture. A failed launch returns its code in the exit callback
//    and runs nothing.
//  - Stream capture: a launch on a capturing stream issues its callbacks (success) and
//    GRAPHNODE_CREATED between them, writes its API record, and runs nothing: no kernel
//    record, no range. Instantiation clones every node (GRAPHNODE_CREATED, then
//    GRAPHNODE_CLONED) into a graph whose id is the executable graph's (seen in Triton
//    Proton's CUPTI backend, not documented), then GRAPHEXEC_CREATED. Graph ids and
//    executable-graph ids come from separate counters, as on a real driver, so they
//    collide numerically (the first of each is 1). A replay writes one kernel record per
//    kernel node, carrying the clone's node id and the executable graph's id, all with
//    the graph launch's correlation id.
//  - Library-internal kernels (FakeLaunch::internal): a kernel record and, under the range
//    profiler, a range, but no launch callbacks (kernels a library or the driver launches
//    inside another call).
//  - NVTX reaches CUPTI only when NVTX_INJECTION64_PATH was set at the first NVTX call;
//    then each call also issues CUPTI's NVTX callback (CUPTI_CB_DOMAIN_NVTX, the call's
//    parameters in CUpti_NvtxData; a named domain is created by nvtxDomainCreateA first).
//  - cudaProfilerStart/Stop issue the driver's cuProfilerStart/Stop callbacks.
//  - Range profiler: auto range names ranges "0", "1", ... per context in the order it
//    profiles kernels (launches and replayed graph nodes alike, the nodes in creation
//    order: undocumented for graphs with parallel branches); the CTA count of each range
//    is the launch's grid, its thread count grid x block. A kernel makes a range only
//    between Start and Stop AND inside a pushed range (PushRange/PopRange, as we now
//    believe CUPTI does in auto range mode too); SetConfig refuses nesting other than
//    one level; Stop refuses a pass with a range still pushed (pops must match pushes).
//    Counter data image sizes follow the metric count and the range count as libcupti's
//    host library computes them (CounterDataBytes). Auto range serialises launches: by default one launch's enter
//    callback, range and exit callback are not interleaved with another thread's
//    (interleave_launch_callbacks: only the range is serialised; which one CUPTI does is
//    not documented). Counter data dies with its context: a session not ended before its
//    context is destroyed decodes nothing. One session per device: enabling the range
//    profiler on a second context of a device fails while one is enabled
//    (cupti_profiler_target.h: "may fail if any profiling session is active on the
//    context or its device"; the error code is not documented, the fake answers
//    CUPTI_ERROR_INVALID_OPERATION). A host object that refused one metric answers
//    CUPTI_ERROR_UNKNOWN to every later ConfigAddMetrics (libcupti 13.0.1 does this,
//    checked offline for GH100/GB202). Pass counts: a model (PassesFor), no kinder than the
//    real scheduler where it was measured offline.
// Thread-safety: every method may be called from any thread.
#ifndef QPROF_TESTS_PROFILER_CUPTI_FAKE_FAKE_CUPTI_H_
#define QPROF_TESTS_PROFILER_CUPTI_FAKE_FAKE_CUPTI_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "profiler/cupti/cupti_api.h"

namespace qprof::profiler::cupti::fake {

struct FakeDevice {
  std::string name = "Fake H100 (qprof test stand-in)";
  std::string chip = "GH100";
  int cc_major = 9, cc_minor = 0, sm_count = 132;
  size_t memory_bytes = size_t{80} << 30;
  int clock_khz = 1980000, memory_clock_khz = 2619000, bus_width_bits = 5120;
};

struct FakeFaults {
  // Another CUPTI client holds the subscriber (e.g. "Nsight Systems").
  std::string other_subscriber;
  // cuptiProfilerGetCounterAvailability -> CUPTI_ERROR_INSUFFICIENT_PRIVILEGES.
  bool counters_denied = false;
  // Full metric names the chip refuses in ConfigAddMetrics although its base metric is
  // listed (their sub-metric is not offered either, so validation can see it).
  std::set<std::string> refused_metrics;
  // The host object makes an empty config image.
  bool empty_config_image = false;
  // cuptiProfilerHostGetNumOfPasses answers 0 for a non-empty config image.
  bool zero_passes = false;
  // Completed buffers are not delivered until a flush: CUPTI asks for buffers faster
  // than it hands them back, so the collector's cap is reached and records are dropped.
  bool hold_completed_buffers = false;
  // Every n-th GPU record is dropped by "CUPTI" and counted (0: never).
  int drop_every = 0;
  // cuptiActivityGetNextRecord answers CUPTI_ERROR_MAX_LIMIT_REACHED after this many
  // records of each buffer (-1: at the real end).
  int walk_stops_after = -1;
  // At the forced flush, one completed buffer's BufferCompleted is already running on
  // another CUPTI thread and returns only after the flush has returned.
  bool late_completion = false;
  // At the forced flush, one buffer is kept back (CUPTI misbehaving): DeliverKept()
  // hands it to the collector later, after it stopped.
  bool keep_one_past_flush = false;
  // cuptiActivityEnable(CONCURRENT_KERNEL) -> CUPTI_ERROR_NOT_SUPPORTED.
  bool refuse_kernel_activity = false;
  // At the forced flush, the last n GPU records still on the device are of kernels still
  // running: they come back with start = end = 0 (as CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
  // returns incomplete records).
  int running_at_forced_flush = 0;
  // At the forced flush, after the last buffer was handed back, n records are found lost
  // on the device (its buffer overflowed) and counted on the global queue: only a read of
  // the dropped count after the flush sees them (when CUPTI counts such losses relative
  // to the flush's buffer callbacks is not documented).
  int drops_after_last_delivery = 0;
  // cuptiRangeProfilerStop reports isAllPassSubmitted = 0.
  bool passes_not_submitted = false;
  // Only the range is serialised between threads launching at once, not the callbacks
  // around it (see the top of this file).
  bool interleave_launch_callbacks = false;
  // Captured launches issue no GRAPHNODE_CREATED: a launch that succeeds and makes no
  // range for a reason the collector cannot see (the way to make one in a test).
  bool hide_capture_nodes = false;
  // Range indices k whose range CUPTI records after range k + 1's: two neighbouring
  // kernels profiled in the other order than their launch callbacks came (launches from
  // two threads; whether CUPTI can do this is not documented).
  std::set<size_t> swap_ranges;
  // What kernel replay makes of a graph launch (NOT documented; the device check
  // measures it): one range per kernel node in creation order (the fake's default), one
  // range for the whole launch (CTA and thread counts summed over its nodes), none, or
  // one per node in reverse order.
  enum class GraphRanges { kPerNode, kOnePerLaunch, kNone, kReversed };
  GraphRanges graph_ranges = GraphRanges::kPerNode;
  // cuptiGetVersion's answer.
  uint32_t version = 130001;
  bool driver_present = true;
};

// The scripted program's side, as virtual functions only: the stand-in libcuda calls
// them on the fake that lives in the stand-in libcupti without linking a second copy of
// the fake's code.
// One kernel launch of the scripted program.
struct FakeLaunch {
  std::string name;
  uint32_t grid = 0;           // CTAs (gridDimX; Y = Z = 1); 0: a fixed function of the name
  uint32_t block = 256;        // threads per CTA (blockDimX; Y = Z = 1)
  uint64_t duration_ns = 1000;
  CUresult result = CUDA_SUCCESS;  // not CUDA_SUCCESS: the launch fails, nothing runs
  bool internal = false;       // launched inside a library call: no launch callbacks
};

class FakeGpuControl {
 public:
  virtual ~FakeGpuControl() = default;
  virtual CUcontext CreateContext(uint32_t device) = 0;
  virtual void DestroyContext(CUcontext ctx) = 0;
  virtual uint32_t Launch(CUcontext ctx, uint32_t stream, const FakeLaunch& launch,
                          uint64_t tid) = 0;
  virtual uint32_t LaunchKernel(CUcontext ctx, uint32_t stream, const std::string& name,
                                uint64_t duration_ns, uint64_t tid) = 0;
  // cudaStreamBeginCapture / EndCapture (returns the graph), cudaGraphInstantiate
  // (returns the executable graph), cudaGraphLaunch. Handles are the fake's ids.
  virtual void BeginCapture(CUcontext ctx, uint32_t stream, uint64_t tid) = 0;
  virtual uint64_t EndCapture(CUcontext ctx, uint32_t stream, uint64_t tid) = 0;
  virtual uint64_t Instantiate(CUcontext ctx, uint64_t graph, uint64_t tid) = 0;
  virtual uint32_t LaunchGraph(CUcontext ctx, uint32_t stream, uint64_t exec, uint64_t tid) = 0;
  // A graph of `kernels` captured and instantiated at the first call with that list (on
  // `stream`, by this thread), then replayed.
  virtual uint32_t GraphLaunch(CUcontext ctx, uint32_t stream,
                               const std::vector<std::string>& kernels, uint64_t tid) = 0;
  virtual uint32_t Memcpy(CUcontext ctx, uint32_t stream, uint8_t copy_kind, uint64_t bytes,
                          uint64_t tid) = 0;
  virtual uint32_t Memset(CUcontext ctx, uint32_t stream, uint64_t bytes, uint64_t tid) = 0;
  // cudaProfilerStart / cudaProfilerStop: the driver's cuProfilerStart/Stop callbacks.
  virtual void ProfilerStart(CUcontext ctx, uint64_t tid) = 0;
  virtual void ProfilerStop(CUcontext ctx, uint64_t tid) = 0;
  virtual void NvtxPush(uint64_t tid, const std::string& name, const std::string& domain) = 0;
  virtual void NvtxPop(uint64_t tid, const std::string& domain) = 0;
  virtual void SyncAll() = 0;
};

class FakeCupti final : public CuptiApi, public FakeGpuControl {
 public:
  explicit FakeCupti(std::vector<FakeDevice> devices = {FakeDevice{}});
  ~FakeCupti() override;

  FakeFaults faults;
  // Where "libcupti" lives (LibraryPath()); the stand-in library sets its own path.
  std::string library_path = "/fake/cuda/lib64/libcupti.so.13";
  // Process id written into API and marker records.
  uint32_t pid = 4242;
  // When set, NVTX reaches "CUPTI" only if NVTX_INJECTION64_PATH names exactly this file.
  std::string nvtx_requires_path;

  // ---- The scripted program (each returns the correlation id of its API call) ---------
  CUcontext CreateContext(uint32_t device) override;  // current on the calling thread
  void DestroyContext(CUcontext ctx) override;
  uint32_t Launch(CUcontext ctx, uint32_t stream, const FakeLaunch& launch,
                  uint64_t tid) override;
  uint32_t LaunchKernel(CUcontext ctx, uint32_t stream, const std::string& name,
                        uint64_t duration_ns, uint64_t tid) override;
  void BeginCapture(CUcontext ctx, uint32_t stream, uint64_t tid) override;
  uint64_t EndCapture(CUcontext ctx, uint32_t stream, uint64_t tid) override;
  uint64_t Instantiate(CUcontext ctx, uint64_t graph, uint64_t tid) override;
  uint32_t LaunchGraph(CUcontext ctx, uint32_t stream, uint64_t exec, uint64_t tid) override;
  uint32_t GraphLaunch(CUcontext ctx, uint32_t stream, const std::vector<std::string>& kernels,
                       uint64_t tid) override;
  // cuptiActivityPushExternalCorrelationId / Pop on thread `tid`: while pushed, every API
  // call of that thread writes an EXTERNAL_CORRELATION record with the id.
  void PushExternalId(uint64_t tid, uint64_t external_id);
  void PopExternalId(uint64_t tid);
  // Another tool calls cuptiActivityRegisterCallbacks after the collector did: from now on
  // its callbacks get every buffer (it frees them, as Kineto does).
  void RegisterForeignBufferCallbacks();
  // CUPTI asks for a buffer now (a record to write): true when the collector gave one.
  bool RequestBufferNow();
  uint32_t Memcpy(CUcontext ctx, uint32_t stream, uint8_t copy_kind, uint64_t bytes,
                  uint64_t tid) override;
  uint32_t Memset(CUcontext ctx, uint32_t stream, uint64_t bytes, uint64_t tid) override;
  void ProfilerStart(CUcontext ctx, uint64_t tid) override;
  void ProfilerStop(CUcontext ctx, uint64_t tid) override;
  void NvtxPush(uint64_t tid, const std::string& name, const std::string& domain = "") override;
  void NvtxPop(uint64_t tid, const std::string& domain = "") override;
  // nvtxRangeStartA/nvtxRangeEnd: not nested by thread; may end on another thread.
  uint32_t NvtxRangeStart(uint64_t tid, const std::string& name, const std::string& domain = "");
  void NvtxRangeEnd(uint32_t id, uint64_t tid);
  // The device hands its finished records back (cudaDeviceSynchronize).
  void SyncAll() override;
  // Delivers the buffer kept back by keep_one_past_flush (if any), on this thread.
  void DeliverKept();
  // Simulates being inside cuInit: driver calls made meanwhile are counted.
  void SetInsideCuInit(bool inside) { inside_cu_init_ = inside; }

  // ---- What happened ------------------------------------------------------------------
  uint64_t gpu_records_made() const { return gpu_made_.load(); }
  uint64_t gpu_records_dropped() const { return gpu_dropped_.load(); }
  uint64_t records_dropped_total() const { return dropped_total_.load(); }  // every kind
  uint64_t driver_calls_inside_cu_init() const { return driver_calls_in_init_.load(); }
  std::vector<std::string> calls() const;  // "ActivityDisable(10)", "ActivityFlushAll(1)", ...
  size_t IndexOfCall(const std::string& call) const;  // first index, or SIZE_MAX
  bool buffer_callbacks_registered() const;
  // Threads that walked buffers (GetNextRecord) and that delivered them (BufferCompleted).
  std::set<std::thread::id> walk_threads() const;
  std::set<std::thread::id> delivery_threads() const;
  bool nvtx_reached_cupti() const { return nvtx_state_ == 1; }
  uint64_t buffers_taken_by_foreign_tool() const { return foreign_taken_.load(); }
  // The grid the fake gives a kernel launched without one (FakeLaunch::grid == 0).
  static uint32_t GridOf(const std::string& kernel);

  // ---- CuptiApi -------------------------------------------------------------------------
  CUptiResult GetVersion(uint32_t* version) override;
  CUptiResult GetResultString(CUptiResult result, const char** str) override;
  CUptiResult GetErrorMessage(CUptiResult result, const char** str) override;
  std::string LibraryPath() override { return library_path; }
  CUptiResult Subscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                        void* userdata, CUpti_SubscriberParams* params) override;
  CUptiResult Unsubscribe(CUpti_SubscriberHandle subscriber) override;
  CUptiResult EnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                           CUpti_CallbackDomain domain) override;
  CUptiResult EnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                             CUpti_CallbackDomain domain, CUpti_CallbackId cbid) override;
  CUptiResult ActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                        CUpti_BuffersCallbackCompleteFunc completed) override;
  CUptiResult ActivityEnable(CUpti_ActivityKind kind) override;
  CUptiResult ActivityDisable(CUpti_ActivityKind kind) override;
  CUptiResult ActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) override;
  CUptiResult ActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) override;
  CUptiResult ActivityFlushAll(uint32_t flag) override;
  CUptiResult ActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                           size_t* dropped) override;
  CUptiResult ActivityGetNextRecord(uint8_t* buffer, size_t valid_size,
                                    CUpti_Activity** record) override;
  CUptiResult GetTimestamp(uint64_t* timestamp) override;
  CUptiResult GetDeviceId(CUcontext context, uint32_t* device_id) override;
  CUptiResult GetGraphNodeId(CUgraphNode node, uint64_t* node_id) override;
  CUptiResult GetGraphId(CUgraph graph, uint32_t* graph_id) override;
  CUptiResult GetGraphExecId(CUgraphExec exec, uint32_t* exec_id) override;
  CUptiResult ProfilerInitialize(CUpti_Profiler_Initialize_Params* p) override;
  CUptiResult ProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) override;
  CUptiResult DeviceGetChipName(CUpti_Device_GetChipName_Params* p) override;
  CUptiResult ProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) override;
  CUptiResult HostInitialize(CUpti_Profiler_Host_Initialize_Params* p) override;
  CUptiResult HostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) override;
  CUptiResult HostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) override;
  CUptiResult HostGetSubMetrics(CUpti_Profiler_Host_GetSubMetrics_Params* p) override;
  CUptiResult HostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) override;
  CUptiResult HostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) override;
  CUptiResult HostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) override;
  CUptiResult HostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) override;
  CUptiResult HostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) override;
  CUptiResult RangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) override;
  CUptiResult RangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) override;
  CUptiResult RangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) override;
  CUptiResult RangeProfilerCounterDataImageInitialize(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) override;
  CUptiResult RangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) override;
  CUptiResult RangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) override;
  CUptiResult RangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) override;
  CUptiResult RangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) override;
  CUptiResult RangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) override;
  CUptiResult RangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) override;
  CUptiResult RangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) override;
  CUptiResult RangeProfilerCounterDataGetRangeInfo(
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) override;
  bool DriverPresent() override { return faults.driver_present; }
  CUresult CtxGetCurrent(CUcontext* ctx) override;
  CUresult DeviceGetCount(int* count) override;
  CUresult DeviceGetName(char* name, int len, CUdevice dev) override;
  CUresult DeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice dev) override;
  CUresult DeviceTotalMem(size_t* bytes, CUdevice dev) override;

  // Metric values the fake "measures" for a kernel: tensor pipe busy for names with
  // "mma" or "gemm", FMA pipe busy otherwise.
  static double MetricValue(const std::string& kernel, const std::string& metric);
  // Base metric names per type for a chip, as libcupti 13.0.1 lists them (subset).
  static std::vector<std::string> ChipBaseMetrics(const std::string& chip, CUpti_MetricType type);
  // Counter passes the fake schedules for a config (a model of libcupti's; see the .cc).
  static size_t PassesFor(const std::vector<std::string>& metrics);
  // The counter data image size for `metrics` and `ranges` ranges on `chip`, as
  // libnvperf_host computes it (see the .cc), from the raw counters the metrics need
  // (raw_counters_13_0.inc; a metric not in it counts one raw counter of its own).
  static size_t CounterDataBytes(const std::string& chip, const std::vector<std::string>& metrics,
                                 size_t ranges);
  static size_t RawCounters(const std::string& chip, const std::vector<std::string>& metrics);

 private:
  struct Context {
    uint32_t device = 0;
    std::map<uint32_t, uint64_t> stream_free;  // when each stream's last work ends
    std::map<uint32_t, uint64_t> capturing;    // stream -> graph being captured
  };
  struct GraphNode {
    uint64_t id = 0;
    std::string kernel;
    uint32_t grid = 0;
    uint32_t block = 256;
  };
  struct Graph {
    std::vector<GraphNode> nodes;  // kernel nodes, in creation order
  };
  struct Buffer {
    uint8_t* data = nullptr;
    size_t size = 0;
    size_t used = 0;
  };
  struct Subscriber {
    CUpti_CallbackFunc callback = nullptr;
    void* userdata = nullptr;
    std::set<CUpti_CallbackDomain> domains;
    std::set<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>> callbacks;
  };
  struct HostObject {
    std::string chip;
    bool poisoned = false;
    std::vector<std::string> metrics;
    std::vector<std::string> base[3];
    std::vector<const char*> base_ptrs[3];
    std::vector<const char*> sub_ptrs;
  };
  struct RangeObject {
    CUcontext ctx = nullptr;
    uint32_t device = 0;
    bool enabled = true;   // until cuptiRangeProfilerDisable
    bool dead = false;     // its context was destroyed: the counter data is gone
    bool started = false;
    int pushed = 0;        // ranges pushed and not popped (PushRange/PopRange)
    uint16_t nesting_levels = 0;
    size_t max_ranges = 0;
    size_t dropped = 0;
    const uint8_t* image = nullptr;
    std::vector<std::string> kernels;  // range k = k-th kernel profiled while started
    std::vector<uint32_t> ctas;        // ... and its grid
    std::vector<uint64_t> threads;     // ... and its threads (grid x block)
    struct Held {                      // a range recorded late (faults.swap_ranges)
      std::string kernel;
      uint32_t grid = 0, block = 0;
      bool set = false;
    } held_back;
    std::vector<std::string> names;    // "0", "1", ...
  };

  void Log(std::string call) const;
  const char* Intern(const std::string& s);
  uint64_t HostNow(uint64_t advance_ns = 500);
  bool Enabled(CUpti_ActivityKind kind) const;
  void Emit(const void* record, size_t size);  // host-side record: written now
  bool NvtxInjected();
  void EmitMarker(bool start, uint32_t id, uint64_t tid, const char* name, const char* domain);
  // CUPTI's NVTX callbacks (CUpti_NvtxData) for an NVTX call, when NVTX reaches CUPTI.
  void NvtxCallback(CUpti_CallbackId cbid, const void* params, const void* result);
  void* NvtxDomain(const std::string& domain);  // nvtxDomainCreateA at its first use
  void EmitGpu(std::vector<uint8_t> record);   // device-side: written later
  void DrainGpuLocked(bool all);
  void CompleteCurrentLocked();
  void DeliverOne(uint8_t* buffer, size_t valid, std::thread::id* by);
  void DeliveryLoop();
  void DispatchCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  uint32_t ApiRecord(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t tid,
                     uint64_t start, uint64_t end);
  void WriteApiRecord(CUpti_ActivityKind kind, CUpti_CallbackId cbid, uint64_t tid,
                      uint64_t start, uint64_t end, uint32_t correlation);
  uint64_t GpuSlot(CUcontext ctx, uint32_t stream, uint64_t after, uint64_t duration);
  void DriverCallback(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, CUcontext ctx,
                      const char* symbol, const void* params, CUresult rc, uint32_t correlation);
  void GraphResource(CUpti_CallbackId cbid, uint64_t graph, uint64_t node, uint64_t original_graph,
                     uint64_t original_node, uint64_t exec);
  void AddRange(CUcontext ctx, const std::string& kernel, uint32_t grid, uint32_t block);
  // One range for a whole graph launch: its counts are the sums over the nodes.
  void AddGraphRange(CUcontext ctx, const std::vector<GraphNode>& nodes);
  void KernelRecord(CUcontext ctx, uint32_t stream, const std::string& name, uint32_t grid,
                    uint32_t block, uint64_t start, uint64_t duration, uint32_t correlation, uint32_t graph_id,
                    uint64_t node_id);
  void ExternalRecord(uint64_t tid, uint32_t correlation);
  void EmitOverhead(uint64_t start, uint64_t end);
  bool RangeObjectUsable(const RangeObject* object) const;  // caller holds mu_
  static void CUPTIAPI ForeignRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI ForeignCompleted(CUcontext ctx, uint32_t stream, uint8_t* buffer,
                                        size_t size, size_t valid);

  static thread_local CUcontext t_current_;  // the calling thread's current context
  const std::vector<FakeDevice> devices_;
  mutable std::mutex mu_;  // state below (never held while calling the collector)
  std::vector<std::string> calls_;
  std::map<CUcontext, Context> contexts_;
  std::set<CUpti_ActivityKind> enabled_;
  CUpti_BuffersCallbackRequestFunc requested_ = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed_ = nullptr;
  std::unique_ptr<Subscriber> subscriber_;
  std::deque<std::pair<uint8_t*, size_t>> completed_queue_;
  std::pair<uint8_t*, size_t> kept_{nullptr, 0};
  size_t dropped_ = 0;
  std::set<std::thread::id> walk_threads_;
  std::set<std::thread::id> delivery_threads_;
  std::set<std::string> interned_;
  std::map<uint64_t, std::map<std::string, std::vector<uint32_t>>> nvtx_stacks_;
  std::map<std::string, void*> nvtx_domains_;  // name -> the handle nvtxDomainCreateA gave
  std::map<CUcontext, RangeObject*> range_by_ctx_;
  std::vector<std::unique_ptr<RangeObject>> range_objects_;
  std::vector<std::unique_ptr<HostObject>> host_objects_;
  std::map<uint64_t, Graph> graphs_;          // by graph id
  std::map<uint64_t, Graph> execs_;           // by executable-graph id (another id space)
  std::map<std::vector<std::string>, uint64_t> graph_cache_;  // GraphLaunch's executables
  std::map<uint64_t, std::vector<uint64_t>> external_ids_;    // tid -> pushed ids

  std::mutex launch_mu_;  // one launch's callbacks and range at a time
  std::mutex emit_mu_;  // record order within buffers; held while requesting a buffer
  Buffer current_;
  std::vector<std::vector<uint8_t>> gpu_waiting_;

  std::thread delivery_;
  std::condition_variable delivery_cv_;
  bool stop_delivery_ = false;
  int delivering_ = 0;  // buffers the delivery thread is handing back now (under mu_)
  std::mutex late_mu_;
  std::condition_variable late_cv_;
  // The late completion: 1 thread started, 2 inside the collector's callback, 3 the
  // flush returned, 4 done.
  int late_stage_ = 0;
  std::thread::id late_thread_id_;
  std::thread late_thread_;

  std::atomic<uint64_t> host_clock_{1'000'000'000};
  std::atomic<uint32_t> next_correlation_{1};
  std::atomic<uint32_t> next_marker_{1};
  std::atomic<uint64_t> next_graph_{1};
  std::atomic<uint64_t> next_exec_{1};   // its own counter: collides with graph ids
  std::atomic<uint64_t> next_node_{1};
  std::atomic<uint64_t> foreign_taken_{0};
  std::atomic<uint64_t> gpu_made_{0};
  std::atomic<uint64_t> gpu_dropped_{0};
  std::atomic<uint64_t> dropped_total_{0};
  std::atomic<uint64_t> driver_calls_in_init_{0};
  std::atomic<bool> inside_cu_init_{false};
  std::atomic<int> nvtx_state_{-1};  // -1 unknown, 0 not injected, 1 injected
  uintptr_t next_context_ = 0x1000;
};

}  // namespace qprof::profiler::cupti::fake

#endif  // QPROF_TESTS_PROFILER_CUPTI_FAKE_FAKE_CUPTI_H_
