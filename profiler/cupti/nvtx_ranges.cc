#include "profiler/cupti/nvtx_ranges.h"

#include <algorithm>

namespace qprof::profiler::cupti {

void NvtxTracker::OnStart(uint64_t marker_id, const std::string& name, const std::string& domain,
                          int64_t ts_ns, uint32_t pid, uint64_t tid) {
  std::vector<uint64_t>& stack = stacks_[tid][domain];
  Open r;
  r.name = name;
  r.domain = domain;
  r.start_ns = ts_ns;
  r.pid = pid;
  r.tid = tid;
  r.depth = static_cast<uint32_t>(stack.size());
  r.path = stack.empty() ? name : open_.at(stack.back()).path + "/" + name;
  open_[marker_id] = std::move(r);
  stack.push_back(marker_id);
  auto early = early_ends_.find(marker_id);
  if (early != early_ends_.end()) {
    const int64_t end = early->second;
    early_ends_.erase(early);
    Close(marker_id, end);
  }
}

void NvtxTracker::OnEnd(uint64_t marker_id, int64_t ts_ns) {
  if (open_.count(marker_id) == 0) {
    early_ends_[marker_id] = ts_ns;
    return;
  }
  Close(marker_id, ts_ns);
}

void NvtxTracker::Close(uint64_t marker_id, int64_t end_ns) {
  auto it = open_.find(marker_id);
  if (it == open_.end()) return;
  Open& r = it->second;
  auto& domains = stacks_[r.tid];
  std::vector<uint64_t>& stack = domains[r.domain];
  // Usually the top (push/pop); start/end ranges may close out of order.
  auto pos = std::find(stack.rbegin(), stack.rend(), marker_id);
  if (pos != stack.rend()) stack.erase(std::next(pos).base());
  if (stack.empty()) domains.erase(r.domain);
  if (domains.empty()) stacks_.erase(r.tid);
  RangeData out;
  out.path = r.domain.empty() ? r.path : r.domain + "::" + r.path;
  out.name = r.name;
  out.start_ns = r.start_ns;
  out.end_ns = std::max(end_ns, r.start_ns);
  out.pid = r.pid;
  out.tid = r.tid;
  out.depth = r.depth;
  closed_.push_back(std::move(out));
  open_.erase(it);
}

std::string NvtxTracker::PathOn(uint64_t tid, std::map<std::string, std::string>* domain_paths) const {
  auto t = stacks_.find(tid);
  if (t == stacks_.end()) return "";
  std::string path;
  for (const auto& [domain, stack] : t->second) {
    if (stack.empty()) continue;
    const std::string& p = open_.at(stack.back()).path;
    if (domain.empty()) {
      path = p;
    } else if (domain_paths != nullptr) {
      (*domain_paths)[domain] = p;
    }
  }
  return path;
}

void NvtxTracker::TakeClosed(std::vector<RangeData>* out) {
  for (RangeData& r : closed_) out->push_back(std::move(r));
  closed_.clear();
}

void NvtxTracker::CloseAll(int64_t end_ns) {
  std::vector<std::pair<int64_t, uint64_t>> ids;  // close in start order
  for (const auto& [id, r] : open_) ids.emplace_back(r.start_ns, id);
  std::sort(ids.begin(), ids.end());
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {  // innermost first
    ++unclosed_;
    Close(it->second, end_ns);
  }
}

}  // namespace qprof::profiler::cupti
