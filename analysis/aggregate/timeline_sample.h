// TimelineSample: the kernels of a bounded set of decode steps, for the reports' timeline.
//
// The timeline shows one representative step (the one of median span), but which step that
// is is known only at the end. The sample keeps every step's kernels while they fit in
// kMaxEvents; past that it keeps only steps whose number is a multiple of a stride that
// doubles each time the budget overflows (so the kept steps spread over the whole run). At
// most kMaxPerStep kernels of a step are kept: the first by (start, name), as the report
// shows. When the median step was dropped, the report shows the kept step of nearest span
// and says so (Profile.timeline_note).
//
// Merging two samples applies the larger stride to both: the result depends on the steps
// and kernels only, not on how the inputs were split.
#ifndef QPROF_ANALYSIS_AGGREGATE_TIMELINE_SAMPLE_H_
#define QPROF_ANALYSIS_AGGREGATE_TIMELINE_SAMPLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/partial.pb.h"

namespace qprof::aggregate {

struct SampledLaunch {
  int64_t start_ns = 0;     // on its trace's clock
  int64_t dur_ns = 0;
  uint32_t group = 0;       // index of the kernel (ProfileState::groups)
  uint32_t trace = 0;
  uint32_t device = 0;
  uint64_t stream = 0;
  std::string nvtx_path;
};

class TimelineSample {
 public:
  static constexpr size_t kMaxEvents = 16384;
  static constexpr size_t kMaxPerStep = 5000;

  // Kernel names by group index, for ordering ties (start, then name).
  using Names = std::vector<std::string>;

  bool Wants(int64_t step) const { return step >= 0 && step % stride_ == 0; }
  void Add(int64_t step, SampledLaunch launch, const Names& names);
  // `group_map` maps other's group indices to ours; its traces are shifted by trace_offset.
  void Merge(TimelineSample&& other, const std::vector<uint32_t>& group_map,
             uint32_t trace_offset, const Names& names);
  // The kept kernels of `step` in (start, name) order, at most kMaxPerStep; nullopt when
  // the step was not kept.
  std::optional<std::vector<SampledLaunch>> Step(int64_t step, const Names& names) const;
  std::vector<int64_t> KeptSteps() const;
  int64_t stride() const { return stride_; }

  void ToProto(proto::PartialTimeline* out) const;
  // False when the message is inconsistent (partial files come from outside). The heaps
  // are rebuilt with `names`.
  bool FromProto(const proto::PartialTimeline& in, uint32_t traces, const Names& names);

 private:
  void Insert(std::vector<SampledLaunch>* v, SampledLaunch launch, const Names& names);
  void Enforce();
  void DropUnwanted();

  int64_t stride_ = 1;
  size_t total_ = 0;
  std::map<int64_t, std::vector<SampledLaunch>> steps_;
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_TIMELINE_SAMPLE_H_
