#include "profiler/cupti/graph_tracker.h"

namespace qprof::profiler::cupti {

const GraphKernelNode* GraphTracker::Find(uint64_t node_id) const {
  auto it = nodes_.find(node_id);
  return it == nodes_.end() ? nullptr : &it->second;
}

bool GraphTracker::Room() {
  if (nodes_.size() < max_nodes_) return true;
  ++over_limit_;
  return false;
}

void GraphTracker::NodeCaptured(uint32_t graph_id, const GraphKernelNode& node) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Find(node.node_id) == nullptr && !Room()) return;
  const bool fresh = nodes_.count(node.node_id) == 0;
  nodes_[node.node_id] = node;
  if (fresh) graph_kernels_[graph_id].push_back(node.node_id);
}

void GraphTracker::NodeCreated(uint32_t graph_id, uint64_t node_id, bool kernel) {
  if (!kernel) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (Find(node_id) != nullptr || !Room()) return;  // a clone that announced itself first
  GraphKernelNode unknown;
  unknown.node_id = node_id;
  nodes_[node_id] = unknown;
  graph_kernels_[graph_id].push_back(node_id);
}

void GraphTracker::NodeCloned(uint32_t graph_id, uint64_t node_id, uint64_t original_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const GraphKernelNode* original = Find(original_id);
  if (original == nullptr) return;  // not a kernel node (or one we could not hold)
  GraphKernelNode copy = *original;
  copy.node_id = node_id;
  auto it = nodes_.find(node_id);
  if (it != nodes_.end()) {
    it->second = copy;  // announced by NodeCreated already: same place in the order
    return;
  }
  if (!Room()) return;
  nodes_[node_id] = copy;
  graph_kernels_[graph_id].push_back(node_id);
}

void GraphTracker::NodeDestroyed(uint64_t node_id) {
  std::lock_guard<std::mutex> lock(mu_);
  nodes_.erase(node_id);  // its clones keep their own copy
}

void GraphTracker::GraphDestroyed(uint32_t graph_id) {
  std::lock_guard<std::mutex> lock(mu_);
  graph_kernels_.erase(graph_id);
}

void GraphTracker::ExecCreated(const void* exec, uint32_t exec_id, uint32_t graph_id) {
  std::lock_guard<std::mutex> lock(mu_);
  execs_[exec] = {exec_id, graph_id};
}

void GraphTracker::ExecDestroyed(const void* exec) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return;
  graph_kernels_.erase(it->second.first);
  execs_.erase(it);
}

bool GraphTracker::KernelsOf(const void* exec, std::vector<GraphKernelNode>* out) const {
  out->clear();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return false;
  // The clones (the executable graph's own nodes, whose ids replays carry) when CUPTI
  // announced them; else the nodes of the graph it was instantiated from.
  auto list = graph_kernels_.find(it->second.first);
  if (list == graph_kernels_.end() || list->second.empty()) {
    list = graph_kernels_.find(it->second.second);
  }
  if (list == graph_kernels_.end()) return true;  // a graph with no kernel node
  for (uint64_t id : list->second) {
    const GraphKernelNode* n = Find(id);
    GraphKernelNode node = n != nullptr ? *n : GraphKernelNode{};
    node.node_id = id;
    out->push_back(std::move(node));
  }
  return true;
}

bool GraphTracker::Origin(uint64_t node_id, GraphKernelNode* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  const GraphKernelNode* n = Find(node_id);
  if (n == nullptr) return false;
  *out = *n;
  return true;
}

uint64_t GraphTracker::nodes_over_limit() const {
  std::lock_guard<std::mutex> lock(mu_);
  return over_limit_;
}

}  // namespace qprof::profiler::cupti
