// Per-layer attribution of CUDA-graph replays. NVTX ranges are host calls: they are not
// captured into a graph, so every kernel of a replay is recorded under the one range open
// at cudaGraphLaunch ("decode/step N/graph") and the per-layer split of the trace would
// exist only for the eager steps. The CUDA backend therefore records, at capture, the
// range each graph node was created in (CapturedNode, in the order of the captured chain:
// one stream, so node i depends on node i-1 and runs after it). After the run, the
// records of each replay, sorted by start time, are matched to that chain one to one
// (kind and kernel name must agree) and get the capture-time path
// ("decode/step N/layer L/moe"), with args graph_replay=1 and
// nvtx_path_source="graph capture order". A replay whose records do not match the chain
// (records missing or dropped, another order) keeps ".../graph" and is counted in
// `unmatched` with the reason, never guessed.
// The CUPTI collector may have given replayed records their capture-time path itself
// (".../graph/layer 3/moe", with args graph_launch_nvtx_path; the decoder pushes its ranges
// while capturing so that any CUPTI-based profiler sees them): such records are put back
// under their launch path first and go through the same match; where the two disagree
// the record keeps the chain's path and `path_disagreements` counts it.
// Plain C++ (tests/runtime/graph_paths_test.cc).
#ifndef QPROF_RUNTIME_CUDA_HOST_GRAPH_PATHS_H_
#define QPROF_RUNTIME_CUDA_HOST_GRAPH_PATHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/trace.pb.h"

namespace qprof::runtime::cuda {

struct CapturedNode {
  enum class Kind { kKernel, kMemset, kMemcpy, kOther };
  Kind kind = Kind::kOther;
  std::string name;  // kernel function name ("" when unknown: not compared)
  std::string path;  // range path below the step at capture: "layer 3/moe", "head"
};

struct GraphAttribution {
  int replays = 0;       // groups of records under ".../graph" on the device (per stream)
  int attributed = 0;    // replays whose records were matched and re-pathed
  std::vector<std::string> unmatched;  // one reason per replay left as it was
  int path_disagreements = 0;  // records whose collector path differed from the chain's
};

// Re-paths the records of every replay on `device` (see above). Memset and memcpy nodes
// take part in the match; nodes of Kind::kOther (event, host, empty nodes) record nothing
// and are skipped.
GraphAttribution AttributeGraphReplays(const std::vector<CapturedNode>& chain,
                                       uint32_t device, proto::Trace* trace);

}  // namespace qprof::runtime::cuda

#endif  // QPROF_RUNTIME_CUDA_HOST_GRAPH_PATHS_H_
