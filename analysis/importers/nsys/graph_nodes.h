// CUDA graph nodes in nsys exports made with `--cuda-graph-trace=node`: which call created
// each replayed kernel's node while the graph was captured, so that the kernel takes the
// NVTX ranges open at that call (its capture-time launch context) instead of the graph
// launch's.
//
// The tables, read by column name (PRAGMA table_info), as NVIDIA's Nsight Systems
// documentation describes them (User Guide, "SQLite Schema Reference",
// https://docs.nvidia.com/nsight-systems/UserGuide/index.html#sqlite-schema-reference; the
// exporter's example "Find CUDA API calls that resulted in original graph node creation",
// https://docs.nvidia.com/nsight-systems/2021.5/nsys-exporter/examples.html):
//   CUPTI_ACTIVITY_KIND_KERNEL.graphNodeId   REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
//   CUDA_GRAPH_NODE_EVENTS(start, end, eventClass, globalTid, nameId,
//                          graphNodeId NOT NULL  -- Graph node ID,
//                          originalGraphNodeId   -- the original graph node ID, if cloned node)
// A node created by a launch during stream capture has a row at the time of that launch, on
// its thread, with no original; the nodes of an instantiated (or cloned) graph have rows
// whose originalGraphNodeId is the node they were made from, and replayed kernels carry
// the instantiated node's id. So: kernel graphNodeId -> (originals, followed back) -> the
// node with no original -> its row's globalTid and start. NVIDIA's TensorRT-LLM
// (examples/layer_wise_benchmarks/parse.py) joins the same way, one hop. Node ids are
// kept per process (globalTid's pid) when the table has globalTid.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_GRAPH_NODES_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_GRAPH_NODES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "analysis/importers/nsys/sqlite_db.h"

namespace qprof::importers {

class GraphNodeIndex {
 public:
  static constexpr char kTable[] = "CUDA_GRAPH_NODE_EVENTS";
  // Hops followed from a replayed node back to its capture-time node (clones of clones).
  static constexpr int kMaxHops = 16;

  // Reads the table when the export has it with a graphNodeId column; otherwise the index
  // stays empty.
  absl::Status Read(SqliteDb* db);
  bool empty() const { return nodes_.empty(); }
  size_t size() const { return nodes_.size(); }

  struct Creation {
    int64_t global_tid = 0;
    int64_t start = 0;
  };
  // Where the node a kernel of process `pid` ran as was created during capture.
  std::optional<Creation> CaptureOf(uint32_t pid, uint64_t node) const;

 private:
  struct Node {
    bool has_original = false;
    uint64_t original = 0;
    bool created = false;
    Creation creation;
  };
  bool per_process_ = false;
  std::map<std::pair<uint32_t, uint64_t>, Node> nodes_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_GRAPH_NODES_H_
