#include "analysis/importers/nsys/nsys_columns.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace qprof::importers {

const char* CopyKindName(int64_t k) {
  switch (k) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoA";
    case 4: return "AtoH";
    case 5: return "AtoA";
    case 6: return "AtoD";
    case 7: return "DtoA";
    case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return "unknown";
  }
}

const char* MemoryKindName(int64_t k) {
  switch (k) {
    case 0: return "pageable";
    case 1: return "pinned";
    case 2: return "device";
    case 3: return "array";
    case 4: return "managed";
    case 5: return "device static";
    case 6: return "managed static";
    default: return "unknown";
  }
}

namespace {

constexpr const char* kColNames[kColCount] = {
    "start", "end", "deviceId", "streamId", "correlationId", "globalPid", "graphNodeId",
    "graphId", "demangledName", "shortName", "mangledName", "name", "gridX", "gridY", "gridZ",
    "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory",
    "dynamicSharedMemory", "bytes", "copyKind", "srcKind", "dstKind", "memKind"};

}  // namespace

bool IsLaunchConfig(int col) {
  return col == kGraphNode || col == kGraph || (col >= kGridX && col <= kDynamicSmem);
}

std::string SelectList(const Columns& c, const char* prefix, bool launch_config,
                       bool graph_nodes, RowColumns* rc) {
  std::vector<std::string> cols;
  for (int i = 0; i < kColCount; ++i) {
    rc->at[i] = -1;
    const bool wanted = launch_config || !IsLaunchConfig(i) || (graph_nodes && i == kGraphNode);
    if (!c.Has(kColNames[i]) || !wanted) continue;
    rc->at[i] = static_cast<int>(cols.size());
    cols.push_back(absl::StrCat(prefix, "\"", kColNames[i], "\""));
  }
  return absl::StrJoin(cols, ", ");
}

}  // namespace qprof::importers
