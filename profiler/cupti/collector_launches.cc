// Launches, stream capture and CUDA graphs as CUPTI's callbacks report them, and the
// metrics-mode sessions they feed (one range profiler session per context, at most one
// per device). See collector_core.h for the threads and locks, range_match.h for how
// ranges are tied to launches, graph_tracker.h and capture_paths.h for graphs.
#include <cupti_driver_cbid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <thread>

#include "profiler/cupti/collector_callbacks.h"
#include "profiler/cupti/collector_core.h"
#include "profiler/cupti/cupti_call.h"

namespace qprof::profiler::cupti {
namespace {

// The launch this thread is inside (between its API enter and exit callbacks). A graph
// node created meanwhile was created by it: the launch was captured, ran nothing and
// makes no range (CUPTI issues GRAPHNODE_CREATED between a launch's enter and exit).
struct LaunchInFlight {
  bool active = false;
  bool captured = false;
  const char* kernel = nullptr;
  LaunchShape shape;
  uint64_t stream = 0;
  uint32_t correlation = 0;
};
thread_local LaunchInFlight t_launch;
// This thread is inside cuGraphInstantiate*: a node created meanwhile is a clone (it is
// announced again by GRAPHNODE_CLONED), not a node added to a graph.
thread_local bool t_instantiating = false;
// The cuStreamBeginCapture this thread made and has not ended (its API correlation id).
thread_local uint32_t t_capture = 0;

bool IsKernelLaunch(CUpti_CallbackId cbid) {
  return std::find(std::begin(kDriverLaunchCallbacks), std::end(kDriverLaunchCallbacks), cbid) !=
         std::end(kDriverLaunchCallbacks);
}

bool IsGraphLaunch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

bool IsBeginCapture(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2 ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz;
}

bool IsInstantiate(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2 ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams_ptsz;
}

// Launches from several threads are told apart by their thread (range_match.h): the OS
// thread id, which is not reused at once when a thread ends (a std::thread::id is).
uint64_t ThisThread() { return static_cast<uint64_t>(syscall(SYS_gettid)); }

bool IsEndCapture(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz;
}

uint64_t Grid(uint64_t x, uint64_t y, uint64_t z) { return x * y * z; }

template <typename P>
LaunchShape ShapeOfDims(const P& p) {
  return LaunchShape{Grid(p.gridDimX, p.gridDimY, p.gridDimZ),
                     Grid(p.blockDimX, p.blockDimY, p.blockDimZ)};
}

template <typename P>
LaunchShape ShapeOfConfig(const P& p) {
  if (p.config == nullptr) return LaunchShape{};
  const CUlaunchConfig& c = *p.config;
  return LaunchShape{Grid(c.gridDimX, c.gridDimY, c.gridDimZ),
                     Grid(c.blockDimX, c.blockDimY, c.blockDimZ)};
}

// The launch's grid and block from its parameters (a range's CTA and thread counts must
// equal them); zeros when the parameters do not say.
LaunchShape ShapeOf(CUpti_CallbackId cbid, const void* params) {
  if (params == nullptr) return LaunchShape{};
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      return ShapeOfDims(*static_cast<const cuLaunchKernel_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return ShapeOfDims(*static_cast<const cuLaunchKernel_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      return ShapeOfDims(*static_cast<const cuLaunchCooperativeKernel_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return ShapeOfDims(*static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      return ShapeOfConfig(*static_cast<const cuLaunchKernelEx_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      return ShapeOfConfig(*static_cast<const cuLaunchKernelEx_ptsz_params*>(params));
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid: {
      const auto* p = static_cast<const cuLaunchGrid_params*>(params);
      return LaunchShape{p->grid_width > 0 && p->grid_height > 0
                             ? Grid(p->grid_width, p->grid_height, 1) : 0, 0};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync: {
      const auto* p = static_cast<const cuLaunchGridAsync_params*>(params);
      return LaunchShape{p->grid_width > 0 && p->grid_height > 0
                             ? Grid(p->grid_width, p->grid_height, 1) : 0, 0};
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunch: return LaunchShape{1, 0};  // a grid of one block
    default: return LaunchShape{};
  }
}

// The launch's stream (a graph captured from one stream is a chain).
uint64_t StreamOf(CUpti_CallbackId cbid, const void* params) {
  if (params == nullptr) return 0;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      return reinterpret_cast<uintptr_t>(static_cast<const cuLaunchKernel_params*>(params)->hStream);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      return reinterpret_cast<uintptr_t>(
          static_cast<const cuLaunchKernel_ptsz_params*>(params)->hStream);
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      return p->config != nullptr ? reinterpret_cast<uintptr_t>(p->config->hStream) : 0;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const auto* p = static_cast<const cuLaunchKernelEx_ptsz_params*>(params);
      return p->config != nullptr ? reinterpret_cast<uintptr_t>(p->config->hStream) : 0;
    }
    default: return 0;
  }
}

const void* GraphExecOf(CUpti_CallbackId cbid, const void* params) {
  if (params == nullptr) return nullptr;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch) {
    return static_cast<const cuGraphLaunch_params*>(params)->hGraph;
  }
  return static_cast<const cuGraphLaunch_ptsz_params*>(params)->hGraphExec;
}

bool Succeeded(const CUpti_CallbackData& data) {
  const auto* rc = static_cast<const CUresult*>(data.functionReturnValue);
  return rc == nullptr || *rc == CUDA_SUCCESS;
}

}  // namespace

void CollectorCore::OnDriverCallback(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  const bool enter = data.callbackSite == CUPTI_API_ENTER;
  if (IsKernelLaunch(cbid)) {
    if (enter) {
      if (metrics_mode() && gate_ != nullptr) SyncSessionWithGate(data.context);
      t_launch = LaunchInFlight{true, false, data.symbolName, LaunchShape{}, 0, data.correlationId};
      t_launch.shape = ShapeOf(cbid, data.functionParams);
      t_launch.stream = StreamOf(cbid, data.functionParams);
      return;
    }
    const LaunchInFlight launch = t_launch;
    t_launch = LaunchInFlight{};
    if (launch.captured) {
      launches_captured_.fetch_add(1, std::memory_order_relaxed);
      return;  // a node of a graph, not a kernel run: no range
    }
    // Only at exit, and only a launch that succeeded: a failed launch makes no range.
    if (!metrics_mode() || !Succeeded(data) || launch.kernel == nullptr) return;
    std::lock_guard<std::mutex> lock(metrics_mu_);
    RecordLaunchLocked(data.context, launch.kernel, launch.shape, ThisThread());
    return;
  }
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart ||
      cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
    OnProfilerApi(cbid, data);
    return;
  }
  if (IsInstantiate(cbid)) {
    t_instantiating = enter;
    if (!enter && !Succeeded(data)) graphs_.DropPendingClones();
    return;
  }
  if (IsBeginCapture(cbid)) {
    if (!enter && Succeeded(data)) t_capture = data.correlationId;
    return;
  }
  if (IsEndCapture(cbid)) {
    if (!enter) t_capture = 0;
    return;
  }
  if (!IsGraphLaunch(cbid)) return;
  if (enter) {
    if (metrics_mode() && gate_ != nullptr) SyncSessionWithGate(data.context);
    return;
  }
  if (!Succeeded(data)) return;
  graph_launches_.fetch_add(1, std::memory_order_relaxed);
  if (!metrics_mode()) return;
  // Kernel replay profiles a replayed graph with no launch callbacks for its kernels;
  // how many ranges it makes is matched per launch (range_match.h).
  GraphKernels graph;
  const bool known = graphs_.KernelsOf(GraphExecOf(cbid, data.functionParams), &graph);
  std::lock_guard<std::mutex> lock(metrics_mu_);
  RecordGraphLaunchLocked(data.context, known ? &graph : nullptr, ThisThread());
}

void CollectorCore::OnGraphResource(CUpti_CallbackId cbid, const CUpti_GraphData& g) {
  uint64_t node = 0;
  uint32_t graph = 0;
  if (g.node != nullptr) (void)api_.GetGraphNodeId(g.node, &node);
  if (g.graph != nullptr) (void)api_.GetGraphId(g.graph, &graph);
  const bool kernel = g.nodeType == CU_GRAPH_NODE_TYPE_KERNEL;
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: {
      if (!kernel || node == 0) return;
      if (!t_launch.active) {
        // A clone announcing itself (GRAPHNODE_CLONED follows), or a node added by API.
        if (!t_instantiating) graphs_.NodeAdded(graph, node);
        return;
      }
      t_launch.captured = true;
      GraphKernelNode n;
      n.node_id = node;
      n.kernel = t_launch.kernel != nullptr ? t_launch.kernel : "";
      n.ctas = t_launch.shape.ctas;
      n.threads = t_launch.shape.threads;
      n.stream = t_launch.stream;
      n.launch_correlation = t_launch.correlation;
      n.capture_correlation = t_capture;
      graphs_.NodeCaptured(graph, n);
      if (!metrics_mode()) {
        std::lock_guard<std::mutex> lock(graph_events_mu_);
        graph_events_.push_back(GraphEvent{node, 0, t_launch.correlation, t_capture});
      }
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: {
      uint64_t original = 0;
      if (g.originalNode != nullptr) (void)api_.GetGraphNodeId(g.originalNode, &original);
      if (!kernel || node == 0 || original == 0) return;
      graphs_.NodeCloned(node, original);
      if (!metrics_mode()) {
        std::lock_guard<std::mutex> lock(graph_events_mu_);
        graph_events_.push_back(GraphEvent{node, original, 0, 0});
      }
      return;
    }
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING:
      if (node != 0) graphs_.NodeDestroyed(node);
      return;
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
      if (graph != 0) graphs_.GraphDestroyed(graph);
      return;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
      // Keyed by the executable graph's handle: its id is another id space than graph ids.
      if (g.graphExec != nullptr) graphs_.ExecCreated(g.graphExec, graph);
      return;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
      if (g.graphExec != nullptr) graphs_.ExecDestroyed(g.graphExec);
      return;
    default:
      return;
  }
}

void CollectorCore::ApplyGraphEvents() {
  std::vector<GraphEvent> events;
  {
    std::lock_guard<std::mutex> lock(graph_events_mu_);
    events.swap(graph_events_);
  }
  if (events.empty()) return;
  std::lock_guard<std::mutex> lock(decoder_mu_);
  for (const GraphEvent& e : events) {
    if (e.original_id != 0) {
      decoder_.AddClonedNode(e.node_id, e.original_id);
    } else {
      decoder_.AddCapturedNode(e.node_id, e.launch_correlation, e.capture_correlation);
    }
  }
}

// ---- Metrics sessions ------------------------------------------------------------------

void CollectorCore::RecordLaunchLocked(CUcontext ctx, const std::string& kernel, LaunchShape shape,
                                       uint64_t thread) {
  auto session = sessions_.find(ctx);
  if (session != sessions_.end() && session->second->active()) {
    // Outside the pushed range (a capture range closed) a kernel makes no range.
    if (!session->second->is_open()) return;
    auto seq = launches_.find(ctx);
    if (seq != launches_.end()) seq->second.AddLaunch(kernel, shape, thread);
    return;
  }
  auto waiting = waiting_.find(ctx);
  if (waiting != waiting_.end()) ++waiting->second.second;  // run without counters
}

void CollectorCore::RecordGraphLaunchLocked(CUcontext ctx, const GraphKernels* graph,
                                            uint64_t thread) {
  auto session = sessions_.find(ctx);
  if (session != sessions_.end() && session->second->active()) {
    if (!session->second->is_open()) return;
    auto seq = launches_.find(ctx);
    if (seq == launches_.end()) return;
    const std::string label = "graph launch " + std::to_string(seq->second.graph_launches() + 1);
    seq->second.AddGraphLaunch(graph, thread, label);
    return;
  }
  auto waiting = waiting_.find(ctx);
  if (waiting != waiting_.end()) {
    waiting->second.second += graph != nullptr ? graph->nodes.size() : 1;
  }
}

void CollectorCore::StartMetrics() {
  // Inside cuInit (the injection library) the driver must not be called: the context
  // created next reaches us through CONTEXT_CREATED, as in NVIDIA's injection sample.
  if (options_.in_driver_init) return;
  CUcontext ctx = nullptr;
  if (api_.CtxGetCurrent(&ctx) == CUDA_SUCCESS && ctx != nullptr) BeginMetricsOn(ctx);
}

void CollectorCore::BeginMetricsOn(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  BeginMetricsLocked(ctx);
}

std::string CollectorCore::ContextName(CUcontext ctx) {
  auto it = context_numbers_.emplace(ctx, static_cast<int>(context_numbers_.size()) + 1).first;
  uint32_t device = 0;
  const bool known = api_.GetDeviceId(ctx, &device) == CUPTI_SUCCESS;
  return "context " + std::to_string(it->second) +
         (known ? " (device " + std::to_string(device) + ")" : "");
}

void CollectorCore::BeginMetricsLocked(CUcontext ctx) {
  if (!metrics_failure_.ok() || sessions_.count(ctx) != 0 || waiting_.count(ctx) != 0) return;
  context_numbers_.emplace(ctx, static_cast<int>(context_numbers_.size()) + 1);
  if (!profiler_initialized_) {
    CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    CoreStatus s = QPROF_CUPTI_FATAL(api_, api_.ProfilerInitialize(&init));
    if (!s.ok()) {
      SetMetricsFailure(s);
      return;
    }
    profiler_initialized_ = true;
  }
  // CUPTI allows one profiling session per device: a second context of a device waits
  // until the first one's session ends, instead of failing (and, worse, ending the
  // metrics pass for every later context).
  uint32_t device = 0;
  if (api_.GetDeviceId(ctx, &device) == CUPTI_SUCCESS) {
    for (const auto& [other, session] : sessions_) {
      if (session->active() && session->device() == device) {
        waiting_[ctx] = {device, 0};
        return;
      }
    }
  }
  auto session = std::make_unique<RangeProfilerSession>(api_, options_.max_metric_kernels,
                                                        options_.extra_metrics,
                                                        options_.metric_set);
  // Profiling starts inside the pushed range unless a capture range or the delay says
  // the work launched now is not to be recorded (SyncSessionWithGate opens it later).
  const bool open = gate_ == nullptr || gate_->OpenAt(Now());
  CoreStatus s = session->Begin(ctx, open);
  if (!s.ok()) {
    SetMetricsFailure(s);
    return;
  }
  ++metric_sessions_;
  if (session->passes() > metric_passes_) {
    metric_passes_ = session->passes();
    // Said when the cost is known, before any kernel of this context is replayed.
    LogWarning("metrics (" + std::string(MetricSetName(options_.metric_set)) + " set, " +
               std::to_string(session->plan().metrics.size()) + " metrics) on chip " +
               session->chip() + ": " + std::to_string(session->passes()) +
               " counter passes, so every kernel is replayed " +
               std::to_string(session->passes()) + " times");
  }
  for (const std::string& m : session->plan().missing) {
    if (std::find(metrics_missing_.begin(), metrics_missing_.end(), m) == metrics_missing_.end()) {
      metrics_missing_.push_back(m);
    }
  }
  launches_.erase(ctx);
  launches_.emplace(ctx, LaunchSequence(options_.max_metric_kernels));
  sessions_[ctx] = std::move(session);
}

void CollectorCore::EndMetricsOn(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  EndMetricsLocked(ctx);
}

void CollectorCore::EndMetricsLocked(CUcontext ctx) {
  auto waited = waiting_.find(ctx);
  if (waited != waiting_.end()) {
    contexts_not_profiled_.push_back(
        ContextName(ctx) + ": never profiled, another context of its device held the device's "
        "range profiler session (CUPTI allows one per device) until it ended; " +
        std::to_string(waited->second.second) + " kernels ran without counters");
    waiting_.erase(waited);
    context_numbers_.erase(ctx);  // a later context may get the same handle
    return;
  }
  auto it = sessions_.find(ctx);
  if (it == sessions_.end()) return;
  const uint32_t device = it->second->device();
  auto seq = launches_.find(ctx);
  const LaunchSequence none(0);
  const LaunchSequence& launches = seq != launches_.end() ? seq->second : none;
  launches_past_limit_ += launches.past_limit();
  std::string refused;
  CoreStatus s = it->second->End(launches, &metric_kernels_, &metric_warnings_, &range_stats_,
                                 &refused);
  if (!s.ok() && metrics_failure_.ok()) SetMetricsFailure(s);
  if (!refused.empty()) refused_reasons_.push_back(ContextName(ctx) + ": " + refused);
  sessions_.erase(it);
  if (seq != launches_.end()) launches_.erase(seq);
  context_numbers_.erase(ctx);  // a later context may get the same handle
  if (stopped_) return;         // Stop() ends every session: nothing is started any more
  // The device is free: a context that waited for it gets its session now (its kernels
  // launched meanwhile ran without counters, and are said).
  for (auto w = waiting_.begin(); w != waiting_.end(); ++w) {
    if (w->second.first != device) continue;
    const CUcontext next = w->first;
    const uint64_t missed = w->second.second;
    waiting_.erase(w);
    if (missed > 0) {
      contexts_not_profiled_.push_back(
          ContextName(next) + ": its first " + std::to_string(missed) + " kernels ran without "
          "counters while another context of its device held the device's range profiler "
          "session (CUPTI allows one per device)");
    }
    BeginMetricsLocked(next);
    break;
  }
}

RangeEndStats CollectorCore::metric_range_stats() {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  return range_stats_;
}

size_t CollectorCore::metric_launches_held() {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  size_t held = 0;
  for (const auto& [ctx, seq] : launches_) held += seq.held();
  return held;
}

// Caller holds metrics_mu_ (or runs before any callback can).
void CollectorCore::SetMetricsFailure(const CoreStatus& failure) {
  if (!metrics_failure_.ok()) return;
  metrics_failure_ = failure;
  LogWarning(MetricsUnavailableReason(failure));
}

}  // namespace qprof::profiler::cupti
