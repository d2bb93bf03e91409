// CUDA-graph capture of one decode step for CudaDecoder: begin/end around the step's
// launches with nothing leaked when capture or instantiation fails, and the range each
// node of the captured chain was created in (CudaGraphInfo.chain), so replays can be
// attributed per layer (runtime/cuda/host/graph_paths.h). Internal to runtime/cuda.
#ifndef QPROF_RUNTIME_CUDA_STEP_GRAPH_H_
#define QPROF_RUNTIME_CUDA_STEP_GRAPH_H_

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/cuda/cuda_decoder.h"

namespace qprof::runtime::cuda {

// Range bookkeeping of a step body: NVTX push/pop; while capturing also the node count
// at each range change (NVTX calls are not captured into the graph, so a replay runs
// under the range open at its launch: the marks say which range each node came from).
class StepRanges {
 public:
  StepRanges(bool capture, cudaStream_t stream) : capture_(capture), stream_(stream) {}
  void Push(const std::string& name);
  void Pop();
  // Range path (below the step) of each node index, from the marks taken while capturing.
  std::string PathOfNode(size_t index) const;
  bool capturing() const { return capture_; }

 private:
  size_t NodesNow() const;  // nodes in the graph being captured on stream_
  std::string Path() const;
  bool capture_;
  cudaStream_t stream_;
  std::vector<std::string> stack_;
  std::vector<std::pair<size_t, std::string>> marks_;  // (first node index, path)
};

// Scoped push/pop on a StepRanges (may be null: no ranges at all).
class StepRange {
 public:
  StepRange(StepRanges* r, const std::string& name) : r_(r) {
    if (r_ != nullptr) r_->Push(name);
  }
  ~StepRange() {
    if (r_ != nullptr) r_->Pop();
  }
  StepRange(const StepRange&) = delete;
  StepRange& operator=(const StepRange&) = delete;

 private:
  StepRanges* r_;
};

// Captures `body(ranges)` on `stream` (thread-local capture mode) and instantiates it.
// On success *exec owns the executable graph and *info has the timings, the node count and
// the chain (empty with a note when the graph is not one chain). On failure nothing is
// left allocated and the stream is no longer capturing.
absl::Status CaptureStep(cudaStream_t stream, const std::function<absl::Status(StepRanges*)>& body,
                         cudaGraphExec_t* exec, CudaGraphInfo* info);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_STEP_GRAPH_H_
