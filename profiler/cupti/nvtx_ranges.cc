#include "profiler/cupti/nvtx_ranges.h"

#include <algorithm>

namespace qprof::profiler::cupti {

void NvtxRangeIndex::OnStart(uint64_t marker_id, const std::string& name, int64_t ts_ns,
                             uint32_t pid, uint64_t tid) {
  starts_[marker_id] = Start{name, ts_ns, pid, tid};
}

void NvtxRangeIndex::OnEnd(uint64_t marker_id, int64_t ts_ns) { ends_[marker_id] = ts_ns; }

void NvtxRangeIndex::Finish(int64_t end_of_trace_ns) {
  if (finished_) return;
  finished_ = true;
  for (auto& [id, start] : starts_) {
    ClosedRange r;
    r.name = std::move(start.name);
    r.start_ns = start.start_ns;
    r.pid = start.pid;
    r.tid = start.tid;
    auto end = ends_.find(id);
    if (end == ends_.end()) {
      ++unclosed_;
      r.end_ns = std::max(end_of_trace_ns, r.start_ns);
    } else {
      r.end_ns = end->second;
      ends_.erase(end);
    }
    by_thread_[r.tid].push_back(std::move(r));
  }
  unmatched_ends_ = ends_.size();
  starts_.clear();
  ends_.clear();

  // Nesting per thread: sort by (start asc, end desc) so a parent precedes the children
  // that start with it, then sweep with a stack of open ancestors.
  for (auto& [tid, ranges] : by_thread_) {
    std::sort(ranges.begin(), ranges.end(), [](const ClosedRange& a, const ClosedRange& b) {
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns > b.end_ns;
    });
    std::vector<int> stack;
    for (int i = 0; i < static_cast<int>(ranges.size()); ++i) {
      ClosedRange& r = ranges[i];
      while (!stack.empty() && ranges[stack.back()].end_ns <= r.start_ns) stack.pop_back();
      r.parent = stack.empty() ? -1 : stack.back();
      r.depth = static_cast<uint32_t>(stack.size());
      r.path = r.parent < 0 ? r.name : ranges[r.parent].path + "/" + r.name;
      stack.push_back(i);
    }
  }
}

const std::string& NvtxRangeIndex::PathAt(uint64_t tid, int64_t t_ns) const {
  static const std::string kEmpty;
  auto it = by_thread_.find(tid);
  if (it == by_thread_.end()) return kEmpty;
  const std::vector<ClosedRange>& ranges = it->second;
  // Last range that started at or before t. Any range containing t started no later,
  // and with proper nesting it is this range or one of its ancestors: walk parents.
  auto after = std::upper_bound(ranges.begin(), ranges.end(), t_ns,
                                [](int64_t t, const ClosedRange& r) { return t < r.start_ns; });
  if (after == ranges.begin()) return kEmpty;
  int i = static_cast<int>(after - ranges.begin()) - 1;
  while (i >= 0) {
    if (ranges[i].end_ns > t_ns) return ranges[i].path;
    i = ranges[i].parent;
  }
  return kEmpty;
}

std::vector<const ClosedRange*> NvtxRangeIndex::AllRanges() const {
  std::vector<uint64_t> tids;
  for (const auto& [tid, unused] : by_thread_) tids.push_back(tid);
  std::sort(tids.begin(), tids.end());
  std::vector<const ClosedRange*> out;
  for (uint64_t tid : tids) {
    for (const ClosedRange& r : by_thread_.at(tid)) out.push_back(&r);
  }
  return out;
}

}  // namespace qprof::profiler::cupti
