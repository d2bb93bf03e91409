// Which kernel each range of the range profiler measured.
//
// In auto range mode CUPTI names ranges "0", "1", ... in the order it profiles kernels on a
// context, and it cannot be told to name them (NVIDIA's answer on its forum: "CUPTI doesn't
// provide support to give custom range name for each launch in the auto range kernel
// profiling mode"). So the collector keeps, per context, the launches it expects a range
// for, in order (LaunchSequence), from CUPTI's callbacks:
//   - a kernel launch that returned CUDA_SUCCESS and created no graph node (a launch made
//     during stream capture creates a node, runs nothing and makes no range);
//   - a graph launch: one entry per kernel node of the executable graph (graph_tracker.h),
//     since kernel replay profiles a replayed graph kernel by kernel, without launch
//     callbacks for them.
// It is not kind to assume the two sequences line up: a kernel a library launches inside
// another call makes a range and no launch callback, a capture the collector did not see
// makes a callback and no range. So every range is checked against its launch
// (MatchRanges): the counts must agree, and each range's measured CTA count
// (sm__ctas_launched.sum, free of passes on every chip checked) must equal the grid of the
// launch it is matched to. On any mismatch the context's ranges are refused with the
// reason, never shifted onto their neighbours' kernels.
//
// Memory: at most `capacity` launches are held per context (the counter data image has no
// room for more ranges); later ones are only counted. Kernel names are stored once each.
// Plain C++; thread-safety: none (the collector holds its metrics lock).
#ifndef QPROF_PROFILER_CUPTI_RANGE_MATCH_H_
#define QPROF_PROFILER_CUPTI_RANGE_MATCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace qprof::profiler::cupti {

class LaunchSequence {
 public:
  explicit LaunchSequence(size_t capacity) : capacity_(capacity) {}

  // One launch that should make one range. `ctas`: gridDimX * Y * Z (0 when unknown);
  // `graph_node_id`: the executable graph's node for a replayed kernel (0 otherwise).
  void Add(const std::string& kernel, uint64_t ctas, uint64_t graph_node_id);

  size_t held() const { return entries_.size(); }
  uint64_t total() const { return entries_.size() + past_limit_; }
  uint64_t past_limit() const { return past_limit_; }  // launches beyond capacity, counted
  size_t distinct_names() const { return names_.size(); }
  const std::string& name(size_t i) const { return names_[entries_[i].name]; }
  uint64_t ctas(size_t i) const { return entries_[i].ctas; }
  uint64_t graph_node_id(size_t i) const { return entries_[i].graph_node_id; }

 private:
  struct Entry {
    uint32_t name = 0;  // index into names_
    uint64_t ctas = 0;
    uint64_t graph_node_id = 0;
  };
  size_t capacity_;
  uint64_t past_limit_ = 0;
  std::vector<Entry> entries_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_index_;
};

struct RangeMatch {
  bool accepted = false;
  std::string reason;  // why the ranges were refused ("" when accepted)
  uint64_t checked_by_ctas = 0;  // ranges whose CTA count was compared with their launch
};

// `ranges`: ranges decoded from the counter data; `dropped`: ranges CUPTI could not store
// (numOfRangeDropped); `range_ctas[r]`: range r's measured CTA count, NaN when not
// measured (a chip without the counter). Range r is launch r when accepted.
RangeMatch MatchRanges(const LaunchSequence& launches, size_t ranges, uint64_t dropped,
                       const std::vector<double>& range_ctas);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_RANGE_MATCH_H_
