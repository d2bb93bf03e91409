// The fake GPU's CUDA graphs: stream capture, instantiation (nodes cloned into the
// executable graph), replays, and the resource callbacks CUPTI issues for them.
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "tests/profiler/cupti/fake/fake_cupti.h"

namespace qprof::profiler::cupti::fake {
namespace {

template <typename T>
T Handle(uint64_t id) {
  return reinterpret_cast<T>(static_cast<uintptr_t>(id));
}

}  // namespace

CUptiResult FakeCupti::GetGraphNodeId(CUgraphNode node, uint64_t* node_id) {
  if (node == nullptr || node_id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *node_id = reinterpret_cast<uintptr_t>(node);
  return CUPTI_SUCCESS;
}

CUptiResult FakeCupti::GetGraphId(CUgraph graph, uint32_t* graph_id) {
  if (graph == nullptr || graph_id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *graph_id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(graph));
  return CUPTI_SUCCESS;
}

// Executable graphs count from 1 on their own, apart from graphs, as on a real driver:
// the first graph and the first executable graph are both 1.
CUptiResult FakeCupti::GetGraphExecId(CUgraphExec exec, uint32_t* exec_id) {
  if (exec == nullptr || exec_id == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *exec_id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(exec));
  return CUPTI_SUCCESS;
}

void FakeCupti::GraphResource(CUpti_CallbackId cbid, uint64_t graph, uint64_t node,
                              uint64_t original_graph, uint64_t original_node, uint64_t exec) {
  CUpti_GraphData g = {};
  g.graph = Handle<CUgraph>(graph);
  g.node = Handle<CUgraphNode>(node);
  g.originalGraph = Handle<CUgraph>(original_graph);
  g.originalNode = Handle<CUgraphNode>(original_node);
  g.nodeType = CU_GRAPH_NODE_TYPE_KERNEL;
  g.graphExec = Handle<CUgraphExec>(exec);
  CUpti_ResourceData r = {};
  r.resourceDescriptor = &g;
  DispatchCallback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &r);
}

void FakeCupti::BeginCapture(CUcontext ctx, uint32_t stream, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation = next_correlation_.fetch_add(1);
  const uint64_t graph = next_graph_.fetch_add(1);
  cuStreamBeginCapture_v2_params params = {};
  params.hStream = Handle<CUstream>(stream);
  params.mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2;
  DriverCallback(kCbid, CUPTI_API_ENTER, ctx, nullptr, &params, CUDA_SUCCESS, correlation);
  {
    std::lock_guard<std::mutex> lock(mu_);
    graphs_[graph] = Graph{};
    contexts_[ctx].capturing[stream] = graph;
  }
  GraphResource(CUPTI_CBID_RESOURCE_GRAPH_CREATED, graph, 0, 0, 0, 0);
  DriverCallback(kCbid, CUPTI_API_EXIT, ctx, nullptr, &params, CUDA_SUCCESS, correlation);
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                 tid, start, HostNow(300), correlation);
}

uint64_t FakeCupti::EndCapture(CUcontext ctx, uint32_t stream, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation = next_correlation_.fetch_add(1);
  cuStreamEndCapture_params params = {};
  params.hStream = Handle<CUstream>(stream);
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture;
  DriverCallback(kCbid, CUPTI_API_ENTER, ctx, nullptr, &params, CUDA_SUCCESS, correlation);
  uint64_t graph = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& capturing = contexts_[ctx].capturing;
    auto it = capturing.find(stream);
    if (it != capturing.end()) {
      graph = it->second;
      capturing.erase(it);
    }
  }
  DriverCallback(kCbid, CUPTI_API_EXIT, ctx, nullptr, &params,
                 graph != 0 ? CUDA_SUCCESS : CUDA_ERROR_ILLEGAL_STATE, correlation);
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
                 tid, start, HostNow(300), correlation);
  return graph;
}

uint64_t FakeCupti::Instantiate(CUcontext ctx, uint64_t graph, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation = next_correlation_.fetch_add(1);
  const uint64_t exec = next_exec_.fetch_add(1);
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags;
  DriverCallback(kCbid, CUPTI_API_ENTER, ctx, nullptr, nullptr, CUDA_SUCCESS, correlation);
  std::vector<GraphNode> originals;
  {
    std::lock_guard<std::mutex> lock(mu_);
    originals = graphs_[graph].nodes;
  }
  std::vector<GraphNode> clones;
  for (const GraphNode& n : originals) {
    GraphNode clone = n;
    clone.id = next_node_.fetch_add(1);
    clones.push_back(clone);
    // The clone is created (outside any launch), then announced as a clone. It lives in
    // a graph whose id is the executable graph's (Triton Proton saw this; undocumented):
    // a number that is also some other graph's id.
    GraphResource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, exec, clone.id, 0, 0, 0);
    GraphResource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, exec, clone.id, graph, n.id, 0);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    execs_[exec].nodes = clones;
  }
  GraphResource(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, graph, 0, 0, 0, exec);
  DriverCallback(kCbid, CUPTI_API_EXIT, ctx, nullptr, nullptr, CUDA_SUCCESS, correlation);
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v10000,
                 tid, start, HostNow(300), correlation);
  return exec;
}

uint32_t FakeCupti::LaunchGraph(CUcontext ctx, uint32_t stream, uint64_t exec, uint64_t tid) {
  const uint64_t start = HostNow();
  const uint32_t correlation = next_correlation_.fetch_add(1);
  std::vector<GraphNode> nodes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = execs_.find(exec);
    if (it != execs_.end()) nodes = it->second.nodes;
  }
  cuGraphLaunch_params params = {};
  params.hGraph = Handle<CUgraphExec>(exec);
  params.hStream = Handle<CUstream>(stream);
  constexpr CUpti_CallbackId kCbid = CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch;
  {
    // Kernel replay profiles the graph kernel by kernel: a range per node, in creation
    // order, and no launch callbacks for them.
    std::lock_guard<std::mutex> serial(launch_mu_);
    DriverCallback(kCbid, CUPTI_API_ENTER, ctx, nullptr, &params, CUDA_SUCCESS, correlation);
    switch (faults.graph_ranges) {
      case FakeFaults::GraphRanges::kPerNode:
        for (const GraphNode& n : nodes) AddRange(ctx, n.kernel, n.grid, n.block);
        break;
      case FakeFaults::GraphRanges::kReversed:
        for (auto n = nodes.rbegin(); n != nodes.rend(); ++n) AddRange(ctx, n->kernel, n->grid, n->block);
        break;
      case FakeFaults::GraphRanges::kOnePerLaunch:
        if (!nodes.empty()) AddGraphRange(ctx, nodes);
        break;
      case FakeFaults::GraphRanges::kNone:
        break;
    }
    DriverCallback(kCbid, CUPTI_API_EXIT, ctx, nullptr, &params, CUDA_SUCCESS, correlation);
  }
  WriteApiRecord(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, tid,
                 start, HostNow(300), correlation);
  for (const GraphNode& n : nodes) {
    KernelRecord(ctx, stream, n.kernel, n.grid, n.block, start, 1000, correlation,
                 static_cast<uint32_t>(exec), n.id);
  }
  return correlation;
}

uint32_t FakeCupti::GraphLaunch(CUcontext ctx, uint32_t stream,
                                const std::vector<std::string>& kernels, uint64_t tid) {
  uint64_t exec = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = graph_cache_.find(kernels);
    if (it != graph_cache_.end()) exec = it->second;
  }
  if (exec == 0) {
    BeginCapture(ctx, stream, tid);
    for (const std::string& k : kernels) {
      FakeLaunch l;
      l.name = k;
      Launch(ctx, stream, l, tid);
    }
    exec = Instantiate(ctx, EndCapture(ctx, stream, tid), tid);
    std::lock_guard<std::mutex> lock(mu_);
    graph_cache_[kernels] = exec;
  }
  return LaunchGraph(ctx, stream, exec, tid);
}

}  // namespace qprof::profiler::cupti::fake
