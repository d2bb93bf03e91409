#include "analysis/importers/nsys/graph_nodes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace qprof::importers {

absl::Status GraphNodeIndex::Read(SqliteDb* db) {
  ASSIGN_OR_RETURN(bool has, db->HasTable(kTable));
  if (!has) return absl::OkStatus();
  ASSIGN_OR_RETURN(Columns c, db->TableColumns(kTable));
  if (!c.Has("graphNodeId") || !c.Has("originalGraphNodeId")) return absl::OkStatus();
  std::vector<std::string> cols = {"graphNodeId", "originalGraphNodeId"};
  const bool timed = c.Has("start") && c.Has("globalTid");
  if (timed) {
    cols.push_back("start");
    cols.push_back("globalTid");
  }
  per_process_ = c.Has("globalTid");
  ASSIGN_OR_RETURN(SqliteStmt st, db->Prepare(absl::StrCat(
                                      "SELECT \"", absl::StrJoin(cols, "\", \""), "\" FROM ", kTable)));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (st.IsNull(0)) continue;
    const int64_t gtid = timed ? st.Int(3) : 0;
    const uint32_t pid = per_process_ ? static_cast<uint32_t>((gtid >> 24) & 0xFFFFFF) : 0;
    Node& n = nodes_[{pid, static_cast<uint64_t>(st.Int(0))}];
    if (!st.IsNull(1)) {
      if (!n.has_original) {
        n.has_original = true;
        n.original = static_cast<uint64_t>(st.Int(1));
      }
    } else if (timed && !st.IsNull(2) && !st.IsNull(3) &&
               (!n.created || st.Int(2) < n.creation.start)) {
      n.created = true;
      n.creation = {gtid, st.Int(2)};
    }
  }
  return absl::OkStatus();
}

std::optional<GraphNodeIndex::Creation> GraphNodeIndex::CaptureOf(uint32_t pid,
                                                                   uint64_t node) const {
  if (!per_process_) pid = 0;
  auto it = nodes_.find({pid, node});
  // A clone's own row without an original (if any) is its instantiation, not its capture:
  // only the node at the end of the chain of originals says where the capture created it.
  for (int hop = 0; it != nodes_.end() && it->second.has_original; ++hop) {
    if (hop == kMaxHops) return std::nullopt;
    it = nodes_.find({pid, it->second.original});
  }
  if (it == nodes_.end() || !it->second.created) return std::nullopt;
  return it->second.creation;
}

}  // namespace qprof::importers
