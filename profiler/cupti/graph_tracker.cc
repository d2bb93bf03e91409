#include "profiler/cupti/graph_tracker.h"

#include <algorithm>

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

void GraphTracker::NodeAdded(uint32_t graph_id, uint64_t node_id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Find(node_id) != nullptr || !Room()) return;
  GraphKernelNode unknown;
  unknown.node_id = node_id;
  nodes_[node_id] = unknown;
  graph_kernels_[graph_id].push_back(node_id);
}

void GraphTracker::NodeCloned(uint64_t node_id, uint64_t original_id) {
  std::lock_guard<std::mutex> lock(mu_);
  const GraphKernelNode* original = Find(original_id);
  if (original == nullptr) return;  // not a kernel node (or one we could not hold)
  if (Find(node_id) == nullptr && !Room()) return;
  GraphKernelNode copy = *original;
  copy.node_id = node_id;
  nodes_[node_id] = copy;
  pending_[std::this_thread::get_id()].emplace_back(node_id, original_id);
}

void GraphTracker::NodeDestroyed(uint64_t node_id) {
  std::lock_guard<std::mutex> lock(mu_);
  nodes_.erase(node_id);  // its clones keep their own copy
}

void GraphTracker::GraphDestroyed(uint32_t graph_id) {
  std::lock_guard<std::mutex> lock(mu_);
  graph_kernels_.erase(graph_id);
}

void GraphTracker::ExecCreated(const void* exec, uint32_t graph_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Exec e;
  e.graph_id = graph_id;
  auto pending = pending_.find(std::this_thread::get_id());
  if (pending != pending_.end()) {
    // Clones in the order of their originals in the graph (creation order); a clone
    // whose original is not in it keeps the order it was announced in, after those.
    const std::vector<uint64_t>* originals = nullptr;
    auto g = graph_kernels_.find(graph_id);
    if (g != graph_kernels_.end()) originals = &g->second;
    auto rank = [originals](uint64_t original) -> size_t {
      if (originals == nullptr) return SIZE_MAX;
      auto it = std::find(originals->begin(), originals->end(), original);
      return it == originals->end() ? SIZE_MAX : static_cast<size_t>(it - originals->begin());
    };
    std::stable_sort(pending->second.begin(), pending->second.end(),
                     [&](const auto& a, const auto& b) { return rank(a.second) < rank(b.second); });
    for (const auto& [clone, original] : pending->second) e.clones.push_back(clone);
    pending_.erase(pending);
  }
  execs_[exec] = std::move(e);
}

void GraphTracker::DropPendingClones() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(std::this_thread::get_id());
}

void GraphTracker::ExecDestroyed(const void* exec) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return;
  for (uint64_t clone : it->second.clones) nodes_.erase(clone);
  execs_.erase(it);
}

void GraphTracker::Describe(const std::vector<uint64_t>& ids, GraphKernels* out) const {
  bool one_stream = true;
  uint64_t stream = 0;
  uint32_t capture = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const GraphKernelNode* n = Find(ids[i]);
    GraphKernelNode node = n != nullptr ? *n : GraphKernelNode{};
    node.node_id = ids[i];
    if (node.kernel.empty() || node.stream == 0 || node.capture_correlation == 0 ||
        (i > 0 && (node.stream != stream || node.capture_correlation != capture))) {
      one_stream = false;
    }
    stream = node.stream;
    capture = node.capture_correlation;
    out->nodes.push_back(std::move(node));
  }
  out->order_known = one_stream;
}

bool GraphTracker::KernelsOf(const void* exec, GraphKernels* out) const {
  *out = GraphKernels{};
  std::lock_guard<std::mutex> lock(mu_);
  auto it = execs_.find(exec);
  if (it == execs_.end()) return false;
  if (!it->second.clones.empty()) {
    Describe(it->second.clones, out);
    return true;
  }
  auto list = graph_kernels_.find(it->second.graph_id);
  if (list != graph_kernels_.end()) Describe(list->second, out);
  if (out->nodes.empty()) out->order_known = true;  // a graph with no kernel node
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
