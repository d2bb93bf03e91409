// What the collector learns about CUDA graphs from CUPTI's resource callbacks, so that a
// replayed kernel can be told which launch created its node (its kernel name and grid for
// the metrics pass, its capture-time NVTX context for the trace).
//
// What CUPTI does, and what is assumed:
//  - A launch made while its stream captures creates a kernel node; CUPTI issues
//    GRAPHNODE_CREATED between the launch's API enter and exit callbacks (documented since
//    CUPTI 11.0), so the collector knows the launch (name, grid, correlation id) of every
//    captured node.
//  - Instantiating a graph clones its nodes into the executable graph (GRAPHNODE_CLONED,
//    original -> clone) and kernel records of replays carry the CLONE's node id; the clones
//    live in a graph whose id is the executable graph's (seen in Triton Proton's CUPTI
//    backend; not documented: the device check confirms it).
//  - Kernel replay profiles a graph launch kernel by kernel, one range per kernel node, in
//    the order the nodes were created (a single-stream capture is a chain, so creation
//    order is execution order). For a graph with parallel branches the order is not
//    documented; ranges are then checked by CTA count (range_match.h) and refused when
//    they do not line up.
// Nodes created outside a launch (cuGraphAddKernelNode) have no known kernel name.
//
// Memory: at most `max_nodes` nodes are remembered (later ones are counted); nodes and
// executable graphs are forgotten when CUPTI says they are destroyed.
// Thread-safety: every method may be called from any thread (CUPTI's callbacks come on the
// application's threads).
#ifndef QPROF_PROFILER_CUPTI_GRAPH_TRACKER_H_
#define QPROF_PROFILER_CUPTI_GRAPH_TRACKER_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace qprof::profiler::cupti {

// The launch a kernel node came from.
struct GraphKernelNode {
  uint64_t node_id = 0;      // this node (in the executable graph, for KernelsOf)
  std::string kernel;        // mangled name as the launch callback gave it ("" when unknown)
  uint64_t ctas = 0;         // grid size (0 when unknown)
  uint32_t launch_correlation = 0;  // the capturing launch's API correlation id (0: none)
  uint32_t capture_correlation = 0; // the cuStreamBeginCapture of that capture (0: unseen)
};

class GraphTracker {
 public:
  explicit GraphTracker(size_t max_nodes = size_t{1} << 20) : max_nodes_(max_nodes) {}

  // A kernel node created inside a launch call (the launch was captured).
  void NodeCaptured(uint32_t graph_id, const GraphKernelNode& node);
  // Any other node creation (kernel nodes added by API: name unknown; clones announce
  // themselves again through NodeCloned). Non-kernel nodes are not tracked.
  void NodeCreated(uint32_t graph_id, uint64_t node_id, bool kernel);
  // `node_id` in graph `graph_id` is a copy of `original_id`.
  void NodeCloned(uint32_t graph_id, uint64_t node_id, uint64_t original_id);
  void NodeDestroyed(uint64_t node_id);
  void GraphDestroyed(uint32_t graph_id);
  // An executable graph (handle `exec`, CUPTI id `exec_id`) instantiated from `graph_id`.
  void ExecCreated(const void* exec, uint32_t exec_id, uint32_t graph_id);
  void ExecDestroyed(const void* exec);

  // The kernel nodes of executable graph `exec`, in range order (see above). False when
  // the graph's instantiation was not seen.
  bool KernelsOf(const void* exec, std::vector<GraphKernelNode>* out) const;
  // The launch a node (a clone, or an original) came from; false when unknown.
  bool Origin(uint64_t node_id, GraphKernelNode* out) const;

  uint64_t nodes_over_limit() const;

 private:
  const GraphKernelNode* Find(uint64_t node_id) const;  // caller holds mu_
  bool Room();                                           // caller holds mu_; counts refusals

  const size_t max_nodes_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, GraphKernelNode> nodes_;     // kernel nodes by id
  std::unordered_map<uint32_t, std::vector<uint64_t>> graph_kernels_;  // in creation order
  std::unordered_map<const void*, std::pair<uint32_t, uint32_t>> execs_;  // -> (exec id, graph id)
  uint64_t over_limit_ = 0;
};

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_GRAPH_TRACKER_H_
