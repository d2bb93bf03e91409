#include "runtime/cuda/step_graph.h"

#include <nvtx3/nvToolsExt.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/common/cuda/cuda_status.h"

namespace qprof::runtime::cuda {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Owns a cudaGraph_t until released.
class GraphGuard {
 public:
  ~GraphGuard() {
    if (g_ != nullptr) cudaGraphDestroy(g_);
  }
  cudaGraph_t* out() { return &g_; }
  cudaGraph_t get() const { return g_; }

 private:
  cudaGraph_t g_ = nullptr;
};

CapturedNode::Kind KindOf(cudaGraphNodeType t) {
  switch (t) {
    case cudaGraphNodeTypeKernel: return CapturedNode::Kind::kKernel;
    case cudaGraphNodeTypeMemset: return CapturedNode::Kind::kMemset;
    case cudaGraphNodeTypeMemcpy: return CapturedNode::Kind::kMemcpy;
    default: return CapturedNode::Kind::kOther;
  }
}

// The nodes of `g` in dependency order when they form one chain (a single-stream capture
// does), with kinds and kernel names; an empty vector and a note otherwise.
std::vector<cudaGraphNode_t> Chain(cudaGraph_t g, size_t total, std::string* note) {
  std::vector<cudaGraphNode_t> chain;
  size_t roots = 0;
  if (cudaGraphGetRootNodes(g, nullptr, &roots) != cudaSuccess || roots != 1) {
    *note = absl::StrCat("captured graph has ", roots, " root nodes, not one chain");
    return {};
  }
  cudaGraphNode_t node = nullptr;
  cudaGraphGetRootNodes(g, &node, &roots);
  while (node != nullptr && chain.size() <= total) {
    chain.push_back(node);
    size_t next = 0;
    if (cudaGraphNodeGetDependentNodes(node, nullptr, nullptr, &next) != cudaSuccess || next > 1) {
      *note = absl::StrCat("captured graph forks after node ", chain.size() - 1);
      return {};
    }
    cudaGraphNode_t following = nullptr;
    if (next == 1) cudaGraphNodeGetDependentNodes(node, &following, nullptr, &next);
    node = following;
  }
  if (chain.size() != total) {
    *note = absl::StrCat("chain of ", chain.size(), " nodes in a graph of ", total);
    return {};
  }
  return chain;
}

}  // namespace

size_t StepRanges::NodesNow() const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t g = nullptr;
  if (cudaStreamGetCaptureInfo(stream_, &status, nullptr, &g) != cudaSuccess ||
      status != cudaStreamCaptureStatusActive || g == nullptr) {
    return 0;
  }
  size_t n = 0;
  if (cudaGraphGetNodes(g, nullptr, &n) != cudaSuccess) return 0;
  return n;
}

std::string StepRanges::Path() const { return absl::StrJoin(stack_, "/"); }

// While capturing, the ranges are pushed too (NVTX is a host call: nothing of it is
// captured), so that a profiler following the capture (CUPTI: the collector's capture
// paths, profiler/cupti/capture_paths.h) sees which range each node was created in; the
// marks give the same for this process's own trace (host/graph_paths.h).
void StepRanges::Push(const std::string& name) {
  stack_.push_back(name);
  if (capture_) marks_.emplace_back(NodesNow(), Path());
  nvtxRangePushA(name.c_str());
}

void StepRanges::Pop() {
  if (stack_.empty()) return;
  stack_.pop_back();
  if (capture_) marks_.emplace_back(NodesNow(), Path());
  nvtxRangePop();
}

std::string StepRanges::PathOfNode(size_t index) const {
  std::string path;
  for (const auto& [first, p] : marks_) {
    if (first > index) break;
    path = p;
  }
  return path;
}

absl::Status CaptureStep(cudaStream_t stream, const std::function<absl::Status(StepRanges*)>& body,
                         cudaGraphExec_t* exec, CudaGraphInfo* info) {
  *exec = nullptr;
  StepRanges ranges(/*capture=*/true, stream);
  const int64_t t0 = NowNs();
  QPROF_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const absl::Status launched = body(&ranges);
  GraphGuard graph;  // destroyed on every path below: the leak of a failed capture
  const cudaError_t ended = cudaStreamEndCapture(stream, graph.out());
  RETURN_IF_ERROR(launched);
  QPROF_CUDA_RETURN_IF_ERROR(ended);
  info->capture_ns = NowNs() - t0;
  size_t total = 0;
  QPROF_CUDA_RETURN_IF_ERROR(cudaGraphGetNodes(graph.get(), nullptr, &total));
  info->nodes = static_cast<int>(total);
  info->chain.clear();
  info->chain_note.clear();
  const std::vector<cudaGraphNode_t> chain = Chain(graph.get(), total, &info->chain_note);
  for (size_t i = 0; i < chain.size(); ++i) {
    CapturedNode n;
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    cudaGraphNodeGetType(chain[i], &type);
    n.kind = KindOf(type);
    if (n.kind == CapturedNode::Kind::kKernel) {
      cudaKernelNodeParams p{};
      const char* name = nullptr;
      if (cudaGraphKernelNodeGetParams(chain[i], &p) == cudaSuccess && p.func != nullptr &&
          cudaFuncGetName(&name, p.func) == cudaSuccess && name != nullptr) {
        n.name = name;
      }
    }
    n.path = ranges.PathOfNode(i);
    info->chain.push_back(std::move(n));
  }
  cudaGetLastError();  // a failed name lookup must not surface at the next launch check
  const int64_t t1 = NowNs();
  cudaGraphExec_t e = nullptr;
  QPROF_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&e, graph.get(), 0));
  info->instantiate_ns = NowNs() - t1;
  *exec = e;
  return absl::OkStatus();
}

}  // namespace qprof::runtime::cuda
