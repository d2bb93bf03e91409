// Which kernel each range of the range profiler measured.
//
// In auto range mode CUPTI names ranges "0", "1", ... in the order it profiles kernels on a
// context, and it cannot be told to name them (NVIDIA's answer on its forum: "CUPTI doesn't
// provide support to give custom range name for each launch in the auto range kernel
// profiling mode"). So the collector keeps, per context, the launches it expects a range
// for, in order (LaunchSequence), from CUPTI's callbacks, in segments:
//   - eager launches: a kernel launch that returned CUDA_SUCCESS and created no graph node
//     (a launch made during stream capture creates a node, runs nothing and makes no
//     range): one range each;
//   - graph launches: one segment per cuGraphLaunch, one entry per kernel node of the
//     executable graph (graph_tracker.h). Whether kernel replay makes one range per node,
//     one for the whole launch, or none is NOT documented.
// Each range is checked against its launch by what the range measured: its CTA count
// (sm__ctas_launched.sum) must equal the launch's grid, and its thread count
// (sm__threads_launched.sum) the grid times the block. Both cost no pass of their own on
// the chips checked offline. Shared memory and registers have no per-range counter.
//
// MatchRanges walks the segments with a range cursor:
//   - An eager launch whose range does not fit ends the context's matching: everything is
//     refused with the reason (a kernel a library launched inside another call makes a
//     range and no callback; a capture the collector did not see makes a callback and no
//     range), never shifted onto the neighbours' kernels.
//   - A graph launch is matched per segment. The hypotheses (per node in creation order;
//     one range for the whole launch, whose CTA and thread counts are then the sums over
//     its nodes; no range) are tried for every graph launch of the context at once, then
//     launch by launch where the next launches pin the choice down. A graph launch whose
//     ranges do not fit its nodes refuses that launch's kernels only, with the reason; the
//     eager ranges around it stay. When no choice is certain, the rest of the context is
//     refused.
//   - Neighbours whose order is not certain (eager launches from two threads, whose
//     callbacks may come in another order than CUPTI profiles them; nodes of a graph that
//     is not a single-stream chain) and that measure alike (same grid and block) cannot be
//     told apart by any check: both are refused rather than risk swapping their metrics.
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

#include "profiler/cupti/graph_tracker.h"

namespace qprof::profiler::cupti {

// A launch's geometry as its callback (or its captured node) gave it; 0 = unknown.
struct LaunchShape {
  uint64_t ctas = 0;     // gridDim.x * y * z
  uint64_t threads = 0;  // blockDim.x * y * z
};

class LaunchSequence {
 public:
  explicit LaunchSequence(size_t capacity) : capacity_(capacity) {}

  // One eager launch that should make one range, made by thread `thread`.
  void AddLaunch(const std::string& kernel, LaunchShape shape, uint64_t thread);
  // One graph launch of `graph`'s nodes (nullptr: its instantiation was not seen, so how
  // many ranges it makes is not known). `label`: how messages name it.
  void AddGraphLaunch(const GraphKernels* graph, uint64_t thread, const std::string& label);

  struct Entry {
    uint32_t name = 0;  // index into names_
    LaunchShape shape;
    uint64_t graph_node_id = 0;  // the executable graph's node for a replayed kernel
    uint64_t thread = 0;
    uint32_t segment = 0;
  };
  enum class SegmentKind { kEager, kGraph, kGraphUnknown };
  struct Segment {
    SegmentKind kind = SegmentKind::kEager;
    size_t first = 0;   // index of its first entry
    size_t count = 0;   // entries held (graph nodes past the capacity are not)
    bool order_known = true;
    std::string label;  // graph launches: "graph launch 3"
  };

  size_t held() const { return entries_.size(); }
  uint64_t total() const { return entries_.size() + past_limit_; }  // known launches
  uint64_t past_limit() const { return past_limit_; }  // launches beyond capacity, counted
  size_t distinct_names() const { return names_.size(); }
  const std::string& name(size_t i) const { return names_[entries_[i].name]; }
  const Entry& entry(size_t i) const { return entries_[i]; }
  const std::vector<Segment>& segments() const { return segments_; }
  uint64_t graph_launches() const { return graph_launches_; }

 private:
  Segment& Open(SegmentKind kind, uint64_t thread);
  bool Push(const std::string& kernel, LaunchShape shape, uint64_t node, uint64_t thread);

  size_t capacity_;
  uint64_t past_limit_ = 0;
  uint64_t graph_launches_ = 0;
  std::vector<Entry> entries_;
  std::vector<Segment> segments_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> name_index_;
};

// What a range measured; NaN when the chip has no such counter or evaluation failed.
struct RangeShape {
  double ctas;
  double threads;
};

// Ranges expected and recorded per kind of launch, for the device check's table.
struct LaunchKindCounts {
  uint64_t launches = 0;         // eager launches, or graph launches
  uint64_t ranges_expected = 0;  // one per eager launch / per kernel node
  uint64_t ranges_matched = 0;   // ranges the matching gave to this kind (named or refused)
};

struct RangeMatch {
  // Per range: the index of the launch (LaunchSequence entry) it measured, or -1 when
  // refused. Size: the number of ranges.
  std::vector<int64_t> launch_of_range;
  uint64_t named = 0;
  uint64_t refused = 0;
  std::vector<std::string> reasons;  // one line per refusal, most important first
  bool context_refused = false;      // an eager mismatch: nothing named at all
  uint64_t checked_by_ctas = 0;      // ranges whose CTA count was compared
  uint64_t checked_by_threads = 0;   // ... and whose thread count was
  uint64_t graph_launches_refused = 0;
  uint64_t neighbours_refused = 0;   // ranges refused as indistinguishable neighbours
  std::string graph_ranges;          // how graph launches came out ("one per node", ...)
  LaunchKindCounts eager, graph;
};

// `ranges`: ranges decoded from the counter data; `dropped`: ranges CUPTI could not store
// (numOfRangeDropped); `measured[r]`: what range r measured.
RangeMatch MatchRanges(const LaunchSequence& launches, size_t ranges, uint64_t dropped,
                       const std::vector<RangeShape>& measured);

}  // namespace qprof::profiler::cupti

#endif  // QPROF_PROFILER_CUPTI_RANGE_MATCH_H_
