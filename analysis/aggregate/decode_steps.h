// Decode steps that a trace names, and the tokens each one produces: the source of tokens
// per step (and so tokens/s) for traces that carry no run info, as serving engines'
// profiles do not.
//
// The names (base/step_names.h): "step[DECODE bs=32]" and TraceLens's iteration annotation
// "execute_32_context_0(...)_generation_32(...)".
// The accumulator keeps one DecodeStepAcc per such range (they are as many as the steps)
// and adds every kernel launched inside it (host launch time within the range, on the
// range's thread) to its GPU span. Cost: one name parse per distinct NVTX path, and for
// kernels inside a step a binary search over the trace's step ranges.
#ifndef QPROF_ANALYSIS_AGGREGATE_DECODE_STEPS_H_
#define QPROF_ANALYSIS_AGGREGATE_DECODE_STEPS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/work/iteration_annotation.h"
#include "base/step_names.h"

namespace qprof::aggregate {

// The step a graph replay ran in, from its NVTX (user annotation) path: the innermost
// iteration annotation that states key lengths, else the innermost one (as the work rules
// read a stack, work/launch_work.h); nullopt when the path names none. A replayed kernel's
// stack is its capture's, so its step comes from here.
std::optional<work::IterationAnnotation> StepOfNvtxPath(std::string_view path);

// One named step: its range (host time, thread) and the GPU work launched inside it.
struct DecodeStepAcc {
  uint8_t kind = 0;             // DecodeStepName::Kind
  int64_t range_start = 0, range_end = 0;
  uint32_t pid = 0;
  uint64_t tid = 0;
  std::string name;
  int64_t first_ns = std::numeric_limits<int64_t>::max();
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  uint64_t kernels = 0;
  uint64_t kernel_ns = 0;       // their summed durations
};

// A trace's named steps, in range order once Sort() ran.
class DecodeSteps {
 public:
  // A range; kept when its own name is a decode-step name.
  void AddRange(std::string_view name, int64_t start, int64_t end, uint32_t pid, uint64_t tid);
  // A kernel launched at host time `launch_ns` on (pid, tid), run over [start, end].
  void AddKernel(int64_t launch_ns, uint32_t pid, uint64_t tid, int64_t start, int64_t end);
  std::vector<DecodeStepAcc>& steps() { return steps_; }
  const std::vector<DecodeStepAcc>& steps() const { return steps_; }

 private:
  void Sort();
  std::vector<DecodeStepAcc> steps_;
  bool sorted_ = true;
  int64_t longest_ = 0;  // the longest range: how far back a search must look
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_DECODE_STEPS_H_
