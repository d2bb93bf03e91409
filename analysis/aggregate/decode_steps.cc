#include "analysis/aggregate/decode_steps.h"

#include <algorithm>

namespace qprof::aggregate {
std::optional<work::IterationAnnotation> StepOfNvtxPath(std::string_view path) {
  std::optional<work::IterationAnnotation> first;
  size_t end = path.size();
  while (true) {
    const size_t slash = path.rfind('/', end == 0 ? 0 : end - 1);
    const size_t begin = slash == std::string_view::npos ? 0 : slash + 1;
    if (begin < end) {
      auto a = work::ParseIterationAnnotation(path.substr(begin, end - begin));
      if (a && a->has_keys) return a;
      if (a && !first) first = std::move(a);
    }
    if (slash == std::string_view::npos || slash == 0) break;
    end = slash;
  }
  return first;
}

void DecodeSteps::AddRange(std::string_view name, int64_t start, int64_t end, uint32_t pid,
                           uint64_t tid) {
  const DecodeStepName d = ParseDecodeStepName(name);
  if (d.kind == DecodeStepName::kNone || end < start) return;
  DecodeStepAcc s;
  s.kind = d.kind;
  s.range_start = start;
  s.range_end = end;
  s.pid = pid;
  s.tid = tid;
  s.name = std::string(name);
  if (!steps_.empty() && start < steps_.back().range_start) sorted_ = false;
  longest_ = std::max(longest_, end - start);
  steps_.push_back(std::move(s));
}

void DecodeSteps::Sort() {
  std::stable_sort(steps_.begin(), steps_.end(), [](const DecodeStepAcc& a, const DecodeStepAcc& b) {
    return a.range_start < b.range_start;
  });
  sorted_ = true;
}

// Ranges of one thread do not overlap unless nested, so the ranges that hold a launch start
// within the longest range's length before it.
void DecodeSteps::AddKernel(int64_t launch_ns, uint32_t pid, uint64_t tid, int64_t start,
                            int64_t end) {
  if (steps_.empty()) return;
  if (!sorted_) Sort();
  auto it = std::upper_bound(steps_.begin(), steps_.end(), launch_ns,
                             [](int64_t t, const DecodeStepAcc& s) { return t < s.range_start; });
  while (it != steps_.begin()) {
    --it;
    if (launch_ns - it->range_start > longest_) break;
    if (it->range_end < launch_ns || it->pid != pid || it->tid != tid) continue;
    it->first_ns = std::min(it->first_ns, start);
    it->last_ns = std::max(it->last_ns, end);
    ++it->kernels;
    it->kernel_ns += static_cast<uint64_t>(std::max<int64_t>(end - start, 0));
  }
}

}  // namespace qprof::aggregate
