// What the collector learns about CUDA graphs from CUPTI's resource callbacks, so that a
// replayed kernel can be told which launch created its node (its kernel name and launch
// geometry for the metrics pass, its capture-time NVTX context for the trace).
//
// What CUPTI does, and what is assumed:
//  - A launch made while its stream captures creates a kernel node; CUPTI issues
//    GRAPHNODE_CREATED between the launch's API enter and exit callbacks (documented since
//    CUPTI 11.0), so the collector knows the launch (name, grid, block, stream, correlation
//    id) of every captured node.
//  - Instantiating a graph clones its nodes into the executable graph (GRAPHNODE_CLONED,
//    original -> clone) and kernel records of replays carry the CLONE's node id (seen in
//    Triton Proton's CUPTI backend; not documented: the device check confirms it).
//    Instantiation runs on one thread and ends with GRAPHEXEC_CREATED: the clones
//    announced on that thread since its cuGraphInstantiate began belong to that executable
//    graph. They are kept under the executable graph's HANDLE. Graph ids, executable-graph
//    ids and node ids are separate id spaces on a real driver (cuptiGetGraphId,
//    cuptiGetGraphExecId, cuptiGetGraphNodeId): nothing here keys one by another's id, so
//    an executable graph whose id equals some graph's id cannot take that graph's nodes.
//  - Kernel replay profiles a graph launch kernel by kernel, one range per kernel node, in
//    the order the nodes were created (a single-stream capture is a chain, so creation
//    order is execution order). NOTHING documents this: range_match.h checks every graph
//    launch's ranges against its nodes and refuses that launch's kernels alone when they do
//    not fit; scripts/device-check-cupti.sh measures what CUPTI does. A graph with nodes
//    from several streams (fork/join) or added by API has no known order between them
//    (`order_known` false).
// Nodes created outside a launch (cuGraphAddKernelNode) have no known kernel name.
//
// Memory: at most `max_nodes` nodes are remembered (later ones are counted); nodes,
// graphs and executable graphs are forgotten when CUPTI says they are destroyed.
// Thread-safety: every method may be called from any thread (CUPTI's callbacks come on the
// application's threads).
#ifndef QPROF_PROFILER_CUPTI_GRAPH_TRACKER_H_
#define QPROF_PROFILER_CUPTI_GRAPH_TRACKER_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace qprof::profiler::cupti {

// The launch a kernel node came from.
struct GraphKernelNode {
  uint64_t node_id = 0;      // this node (in the executable graph, for KernelsOf)
  std::string kernel;        // mangled name as the launch callback gave it ("" when unknown)
  uint64_t ctas = 0;         // grid size (0 when unknown)
  uint64_t threads = 0;      // threads per CTA (0 when unknown)
  uint64_t stream = 0;       // the capturing launch's stream handle (0: unknown)
  uint32_t launch_correlation = 0;  // the capturing launch's API correlation id (0: none)
  uint32_t capture_correlation = 0; // the cuStreamBeginCapture of that capture (0: unseen)
};

// An executable graph's kernel nodes, in the order their ranges are expected.
struct GraphKernels {
  std::vector<GraphKernelNode> nodes;
  // Every node captured from one stream in one capture: a chain, so creation order is
  // execution order. False when nodes came from several streams or were added by API.
  bool order_known = false;
};

class GraphTracker {
 public:
  explicit GraphTracker(size_t max_nodes = size_t{1} << 20) : max_nodes_(max_nodes) {}

  // A kernel node created inside a launch call (the launch was captured).
  void NodeCaptured(uint32_t graph_id, const GraphKernelNode& node);
  // A kernel node added by API to graph `graph_id` (not inside a launch, not a clone).
  void NodeAdded(uint32_t graph_id, uint64_t node_id);
  // `node_id` is a copy of `original_id`, made by the instantiation running on this thread.
  void NodeCloned(uint64_t node_id, uint64_t original_id);
  void NodeDestroyed(uint64_t node_id);
  void GraphDestroyed(uint32_t graph_id);
  // This thread's instantiation of graph `graph_id` made executable graph `exec`: it takes
  // the clones this thread announced since its last ExecCreated.
  void ExecCreated(const void* exec, uint32_t graph_id);
  void ExecDestroyed(const void* exec);
  // This thread's instantiation failed: its clones belong to nothing.
  void DropPendingClones();

  // The kernel nodes of executable graph `exec`, in range order (see above): its clones
  // when CUPTI announced them, else the nodes of the graph it came from. False when its
  // instantiation was not seen.
  bool KernelsOf(const void* exec, GraphKernels* out) const;
  // The launch a node (a clone, or an original) came from; false when unknown.
  bool Origin(uint64_t node_id, GraphKernelNode* out) const;

  uint64_t nodes_over_limit() const;

 private:
  struct Exec {
    uint32_t graph_id = 0;
    std::vector<uint64_t> clones;  // in the order of their originals in the graph
  };
  const GraphKernelNode* Find(uint64_t node_id) const;  // caller holds mu_
  bool Room();                                           // caller holds mu_; counts refusals
  void Describe(const std::vector<uint64_t>& ids, GraphKernels* out) const;  // holds mu_

  const size_t max_nodes_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, GraphKernelNode> nodes_;     // kernel nodes by node id
  std::unordered_map<uint32_t, std::vector<uint64_t>> graph_kernels_;  // graph id -> nodes
  std::unordered_map<const void*, Exec> execs_;             // by executable-graph handle
  std::map<std::thread::id, std::vector<std::pair<uint64_t, uint64_t>>> pending_;  // clones
  uint64_t over_limit_ = 0;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_GRAPH_TRACKER_H_
