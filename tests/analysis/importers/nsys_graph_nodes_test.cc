// nsys exports made with --cuda-graph-trace=node: replayed kernels take the NVTX ranges open
// when the launch that created their graph node ran during capture. A synthetic export with
// the tables and columns NVIDIA's schema documents (CUDA_GRAPH_NODE_EVENTS: start, end,
// eventClass, globalTid, nameId, graphNodeId, originalGraphNodeId; the kernel table's
// graphNodeId and graphId): a graph captured under NVTX ranges, instantiated (every node
// cloned), replayed twice; the second replay runs a node cloned twice (graph update), a node
// with no row at all and a node created while no range was open.
// The test computes what it expects from the rows it wrote: each kernel's node followed
// through originalGraphNodeId to the row with none, the push/pop ranges open on that row's
// thread at its start, and the role the innermost of those names (a table here).
#include <sqlite3.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

constexpr int64_t kPid = 300;
constexpr int64_t kTid = (kPid << 24) | 301;

struct Range {
  int64_t start, end;
  std::string text;
};
struct NodeRow {
  int64_t start;
  int64_t node;
  std::optional<int64_t> original;
};
struct KernelRow {
  int64_t start, end, corr, node;
  std::string name;
};

// The rows of the export.
const std::vector<Range> kRanges = {
    {100, 400, "capture_graph"}, {110, 130, "router"},  {140, 160, "experts"},
    {170, 190, "paged_attention"}, {200, 220, "rmsnorm"}, {1000, 3000, "decode step 3"},
};
const std::vector<NodeRow> kNodes = {
    // Capture: the node of each launch, at the launch call, on the capturing thread.
    {115, 1, std::nullopt}, {145, 2, std::nullopt}, {175, 3, std::nullopt},
    {205, 4, std::nullopt}, {450, 5, std::nullopt},  // 5: created outside every range
    // Instantiation: every node cloned; 21 is a clone of a clone (an updated exec graph).
    {500, 11, 1}, {500, 12, 2}, {500, 13, 3}, {500, 14, 4}, {500, 15, 5}, {900, 21, 11},
    // The exec graph's own rows at instantiation carry no original: not a capture point.
    {500, 12, std::nullopt},
};
const std::vector<KernelRow> kKernels = {
    {1200, 1210, 10, 11, "kern_a"}, {1210, 1220, 10, 12, "kern_b"},
    {1220, 1230, 10, 13, "kern_c"}, {1230, 1240, 10, 14, "kern_d"},
    {1600, 1610, 11, 21, "kern_a"}, {1610, 1620, 11, 12, "kern_b"},
    {1620, 1630, 11, 99, "kern_e"},  // no row for node 99
    {1630, 1640, 11, 15, "kern_f"},  // created with no range open
};

std::string RoleOfRange(const std::string& text) {
  static const std::map<std::string, std::string> kRoles = {
      {"router", "moe.router"}, {"experts", "moe.experts"}, {"paged_attention", "attn.dense"},
      {"rmsnorm", "norm"}};
  auto it = kRoles.find(text);
  return it == kRoles.end() ? "" : it->second;
}

// The oracle: node -> originals -> creation row -> innermost range open then -> role.
std::string ExpectedRole(const KernelRow& k, bool* matched) {
  *matched = false;
  int64_t node = k.node;
  for (int hop = 0; hop < 16; ++hop) {
    std::optional<int64_t> original;
    for (const NodeRow& r : kNodes) {
      if (r.node == node && r.original) original = r.original;
    }
    if (!original) break;
    node = *original;
  }
  const NodeRow* created = nullptr;
  for (const NodeRow& r : kNodes) {
    if (r.node == node && !r.original) created = &r;
  }
  if (created == nullptr) return "other";
  std::string innermost;
  int64_t innermost_start = -1;
  for (const Range& r : kRanges) {
    if (r.start <= created->start && created->start < r.end && r.start > innermost_start) {
      innermost = r.text;
      innermost_start = r.start;
    }
  }
  if (innermost.empty()) return "other";
  *matched = true;
  const std::string role = RoleOfRange(innermost);
  return role.empty() ? "other" : role;
}

std::string MakeExport() {
  std::vector<std::string> strings = {"(1, 'cudaGraphLaunch_v10000')", "(2, 'cudaLaunchKernel_v7000')",
                                      "(3, 'Graph Node Creation')"};
  std::map<std::string, int> name_id;
  for (const KernelRow& k : kKernels) {
    if (name_id.count(k.name)) continue;
    const int id = 10 + static_cast<int>(name_id.size());
    name_id[k.name] = id;
    strings.push_back(absl::StrCat("(", id, ", '", k.name, "')"));
  }
  std::string sql = absl::StrCat(R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
      text TEXT, textId INTEGER, globalTid INTEGER, domainId INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
      returnValue INTEGER);
    CREATE TABLE CUDA_GRAPH_NODE_EVENTS (start INTEGER NOT NULL, end INTEGER NOT NULL,
      eventClass INTEGER NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL,
      graphNodeId INTEGER NOT NULL, originalGraphNodeId INTEGER);
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
      deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
      correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
      shortName INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL,
      gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
      blockZ INTEGER NOT NULL, registersPerThread INTEGER NOT NULL,
      staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
      graphNodeId INTEGER, graphId INTEGER);
    INSERT INTO StringIds VALUES )", absl::StrJoin(strings, ", "), ";\n");
  for (const Range& r : kRanges) {
    absl::StrAppend(&sql, "INSERT INTO NVTX_EVENTS VALUES (", r.start, ", ", r.end, ", 59, '", r.text,
                    "', NULL, ", kTid, ", 0);\n");
  }
  // The launches of the capture (no kernels run then) and the two graph launches.
  for (int64_t at : {115, 145, 175, 205, 450}) {
    absl::StrAppend(&sql, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (", at - 1, ", ", at + 3,
                    ", 0, ", kTid, ", ", at, ", 2, 0);\n");
  }
  absl::StrAppend(&sql, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1100, 1150, 0, ", kTid,
                  ", 10, 1, 0), (1500, 1550, 0, ", kTid, ", 11, 1, 0);\n");
  for (const NodeRow& n : kNodes) {
    absl::StrAppend(&sql, "INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (", n.start, ", ", n.start,
                    ", 0, ", kTid, ", 3, ", n.node, ", ",
                    n.original ? std::to_string(*n.original) : "NULL", ");\n");
  }
  for (const KernelRow& k : kKernels) {
    absl::StrAppend(&sql, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (", k.start, ", ", k.end,
                    ", 0, 1, 7, ", k.corr, ", ", kPid << 24, ", ", name_id[k.name], ", ",
                    name_id[k.name], ", 8, 1, 1, 128, 1, 1, 32, 0, 0, ", k.node, ", 1);\n");
  }
  const std::string path = importers::testing::WriteTemp("graph_nodes.sqlite", "");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
  return path;
}

TEST(NsysGraphNodes, ReplayedKernelsTakeTheRangesOpenWhenTheirNodeWasCreated) {
  const std::string path = MakeExport();
  importers::ImportOptions o;
  o.progress = false;
  auto state = IngestFile(path, o);
  ASSERT_TRUE(state.ok()) << state.status();
  auto profile = AnalyzeState(*state, AnalyzeOptions{});
  ASSERT_TRUE(profile.ok()) << profile.status();

  std::map<std::pair<std::string, std::string>, uint64_t> want;
  uint64_t matched = 0;
  for (const KernelRow& k : kKernels) {
    bool m = false;
    ++want[{k.name, ExpectedRole(k, &m)}];
    matched += m;
  }
  std::map<std::pair<std::string, std::string>, uint64_t> got;
  for (const auto& k : profile->kernels()) got[{k.name(), k.role()}] += k.calls();
  EXPECT_EQ(got, want);

  const auto& j = state->traces[0].header.launch_context_stats().graph_capture();
  EXPECT_EQ(j.kernels(), kKernels.size());
  EXPECT_EQ(j.matched(), matched);
  EXPECT_EQ(j.unmatched(), kKernels.size() - matched);
  const std::string notes = absl::StrJoin(j.notes(), "\n");
  EXPECT_NE(notes.find("1 kernels: no CUDA_GRAPH_NODE_EVENTS row leads"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 kernels: no NVTX range was open"), std::string::npos) << notes;
  EXPECT_EQ(profile->launch_summary().graph_capture_matched(), matched);
  // The replay's own NVTX path (its step) stays on every kernel.
  auto trace = importers::ImportFile(path, o);
  ASSERT_TRUE(trace.ok()) << trace.status();
  for (const auto& a : trace->activities()) {
    EXPECT_EQ(a.nvtx_path(), "decode step 3") << a.name();
    EXPECT_TRUE(a.launch_context().graph_launch()) << a.name();
  }
}

TEST(NsysGraphNodes, WithoutTheNodeTableKernelsKeepTheGraphLaunch) {
  const std::string path = MakeExport();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE CUDA_GRAPH_NODE_EVENTS;", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  importers::ImportOptions o;
  o.progress = false;
  auto state = IngestFile(path, o);
  ASSERT_TRUE(state.ok()) << state.status();
  auto profile = AnalyzeState(*state, AnalyzeOptions{});
  ASSERT_TRUE(profile.ok());
  for (const auto& k : profile->kernels()) EXPECT_EQ(k.role(), "other") << k.name();
  EXPECT_EQ(state->traces[0].header.launch_context_stats().graph_capture().kernels(), 0u);
}

}  // namespace
}  // namespace qprof
