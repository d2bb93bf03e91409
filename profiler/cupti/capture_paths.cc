#include "profiler/cupti/capture_paths.h"

namespace qprof::profiler::cupti {

std::string CapturePaths::Below(const std::string& path, const std::string& base) {
  if (base.empty()) return path;
  if (path == base) return "";
  if (path.size() > base.size() && path.compare(0, base.size(), base) == 0 &&
      path[base.size()] == '/') {
    return path.substr(base.size() + 1);
  }
  return path;
}

void CapturePaths::NodeCaptured(uint64_t node_id, uint32_t launch_correlation,
                                uint32_t capture_correlation, const PathOfRecord& read) {
  if (below_.size() >= max_nodes_) {
    ++over_limit_;
    return;
  }
  if (capture_correlation != 0 && capture_path_.count(capture_correlation) == 0) {
    std::string path;
    if (read(capture_correlation, &path)) {
      capture_path_[capture_correlation] = path;
    } else {
      capture_wanted_[capture_correlation] = true;
    }
  }
  std::string launch_path;
  if (read(launch_correlation, &launch_path)) {
    Resolve(node_id, launch_path, capture_correlation);
  } else {
    waiting_launch_[launch_correlation].push_back(Waiting{node_id, capture_correlation});
  }
}

void CapturePaths::NodeCloned(uint64_t node_id, uint64_t original_id) {
  if (node_id == original_id) return;
  original_[node_id] = original_id;
}

void CapturePaths::OnApiRecord(uint32_t correlation, const std::string& path) {
  auto wanted = capture_wanted_.find(correlation);
  if (wanted != capture_wanted_.end()) {
    capture_path_[correlation] = path;
    capture_wanted_.erase(wanted);
  }
  auto waiting = waiting_launch_.find(correlation);
  if (waiting == waiting_launch_.end()) return;
  for (const Waiting& w : waiting->second) Resolve(w.node_id, path, w.capture_correlation);
  waiting_launch_.erase(waiting);
}

void CapturePaths::Resolve(uint64_t node_id, const std::string& launch_path,
                           uint32_t capture_correlation) {
  auto base = capture_path_.find(capture_correlation);
  below_[node_id] = Below(launch_path, base == capture_path_.end() ? "" : base->second);
}

bool CapturePaths::PathBelowCapture(uint64_t node_id, std::string* path) const {
  // Clones of clones (a graph cloned, then instantiated): a few hops at most.
  for (int hop = 0; hop < 8; ++hop) {
    auto it = below_.find(node_id);
    if (it != below_.end()) {
      *path = it->second;
      return true;
    }
    auto up = original_.find(node_id);
    if (up == original_.end()) return false;
    node_id = up->second;
  }
  return false;
}

}  // namespace qprof::profiler::cupti
