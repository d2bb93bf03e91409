// The columns the nsys importer reads from an activity table, and the enum tables of an
// export spelled out (copy kinds, memory kinds) for exports that lack them.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_COLUMNS_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_COLUMNS_H_

#include <cstdint>
#include <string>

#include "analysis/importers/nsys/sqlite_db.h"

namespace qprof::importers {

// CUpti_ActivityMemcpyKind: "HtoD", "DtoH", ..., "PtoP"; "unknown" otherwise.
const char* CopyKindName(int64_t k);

// nsys's ENUM_CUDA_MEM_KIND (the memory kinds of copies and memsets), for exports that lack
// the table. It is nsys's own numbering, not CUpti_ActivityMemoryKind's (where 0 is
// "unknown"): the shared a100_saxpy export (schema 2.9.1, no ENUM table) reads coherently
// only this way (its HtoD copies pageable -> device, its DtoH copies device -> pageable).
const char* MemoryKindName(int64_t k);

// The columns an activity table is read with. Only those the table has are selected (each
// column read costs a call into SQLite per row); RowColumns says where each one landed.
enum Col {
  kStart, kEnd, kDevice, kStream, kCorr, kGpid, kGraphNode, kGraph,
  kDemangled, kShortName, kMangled, kTextName, kGridX, kGridY, kGridZ, kBlockX, kBlockY,
  kBlockZ, kRegs, kStaticSmem, kDynamicSmem, kBytes, kCopyKind, kSrcKind, kDstKind, kMemKind,
  kColCount,
};

struct RowColumns {
  int at[kColCount];  // position in the SELECT, -1 when the table lacks it (reads as 0 / "")
  int rowid = -1, launch_tid = -1, launch_start = -1, launch_name = -1;  // the exact join's
  int operator[](Col c) const { return at[c]; }
};

// Columns that only describe the launch configuration (skipped when the sink wants none).
bool IsLaunchConfig(int col);

// "t.\"start\", t.\"end\", ...": the columns of `c` the reader uses, prefixed; fills *rc.
// `graph_nodes`: graphNodeId is read whatever the sink wants (the graph-node join needs it).
std::string SelectList(const Columns& c, const char* prefix, bool launch_config,
                       bool graph_nodes, RowColumns* rc);

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_NSYS_COLUMNS_H_
