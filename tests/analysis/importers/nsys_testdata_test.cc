// Every Nsight Systems export in the test data: kernel count and total kernel time equal
// what plain SQL on the file says; NVTX paths equal a brute-force oracle.
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

using testing::TestFiles;

struct Db {
  explicit Db(const std::string& path) {
    EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  }
  ~Db() { sqlite3_close(db); }
  // Runs `sql`, calling f(stmt) per row.
  template <typename F>
  void Query(const std::string& sql, F f) {
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(st) == SQLITE_ROW) f(st);
    sqlite3_finalize(st);
  }
  bool HasTable(const std::string& t) {
    bool has = false;
    Query("SELECT 1 FROM sqlite_master WHERE name='" + t + "'", [&](sqlite3_stmt*) { has = true; });
    return has;
  }
  sqlite3* db = nullptr;
};

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

TEST(NsysTestData, KernelCountAndTimeMatchSql) {
  auto files = TestFiles("nsys", ".sqlite");
  if (files.empty()) GTEST_SKIP() << "no ../shared/testdata/nsys (set QPROF_TESTDATA)";
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    Db db(f);
    int64_t count = 0, total = 0, copies = 0, sets = 0;
    db.Query("SELECT count(*), coalesce(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL",
             [&](sqlite3_stmt* s) {
               count = sqlite3_column_int64(s, 0);
               total = sqlite3_column_int64(s, 1);
             });
    if (db.HasTable("CUPTI_ACTIVITY_KIND_MEMCPY")) {
      db.Query("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY",
               [&](sqlite3_stmt* s) { copies = sqlite3_column_int64(s, 0); });
    }
    if (db.HasTable("CUPTI_ACTIVITY_KIND_MEMSET")) {
      db.Query("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET",
               [&](sqlite3_stmt* s) { sets = sqlite3_column_int64(s, 0); });
    }
    auto trace = ImportFile(f, Quiet());
    ASSERT_TRUE(trace.ok()) << trace.status();
    EXPECT_EQ(trace->header().source_kind(), "nsys-sqlite");
    EXPECT_EQ(trace->header().provenance(), proto::PROVENANCE_IMPORTED);
    int64_t k = 0, kt = 0, c = 0, m = 0;
    for (const auto& a : trace->activities()) {
      if (a.kind() == proto::ACTIVITY_KIND_KERNEL) {
        ++k;
        kt += a.end_ns() - a.start_ns();
        EXPECT_FALSE(a.name().empty());
      }
      c += a.kind() == proto::ACTIVITY_KIND_MEMCPY;
      m += a.kind() == proto::ACTIVITY_KIND_MEMSET;
    }
    EXPECT_GT(count, 0);
    EXPECT_EQ(k, count);
    EXPECT_EQ(kt, total);
    EXPECT_EQ(c, copies);
    EXPECT_EQ(m, sets);
    EXPECT_GE(trace->header().devices_size(), 1);
    // Start-time order.
    for (int i = 1; i < trace->activities_size(); ++i) {
      ASSERT_LE(trace->activities(i - 1).start_ns(), trace->activities(i).start_ns());
    }
  }
}

TEST(NsysTestData, DevicesFromTargetInfoOrUnknown) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  auto a100 = ImportFile(dir + "/nsys/a100_saxpy_mpi_nvtx.sqlite", Quiet());
  ASSERT_TRUE(a100.ok()) << a100.status();
  ASSERT_EQ(a100->header().devices_size(), 1);
  EXPECT_EQ(a100->header().devices(0).name(), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(a100->header().devices(0).arch(), "sm_80");
  EXPECT_EQ(a100->header().devices(0).sm_count(), 108u);
  auto h100 = ImportFile(dir + "/nsys/h100x2_train_before.sqlite", Quiet());
  ASSERT_TRUE(h100.ok()) << h100.status();
  ASSERT_EQ(h100->header().devices_size(), 2);  // no TARGET_INFO_GPU: ids seen, unknown names
  EXPECT_EQ(h100->header().devices(0).name(), "unknown");
  bool warned = false;
  for (const auto& w : h100->header().collector().warnings()) {
    warned |= w.find("TARGET_INFO_GPU") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(NsysTestData, PipitSaxpyKernelsAreInsideTheSaxpyRange) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  auto t = ImportFile(dir + "/nsys/a100_saxpy_mpi_nvtx.sqlite", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  int kernels = 0;
  for (const auto& a : t->activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    EXPECT_EQ(a.name(), "saxpy(double *, double *, double *, double, int)");
    EXPECT_EQ(a.nvtx_path(), "saxpy");
    // pid/tid decoded from globalTid 302119224788637 of the launching thread.
    EXPECT_EQ(a.pid(), static_cast<uint32_t>((302119224788637LL >> 24) & 0xFFFFFF));
    EXPECT_EQ(a.tid(), static_cast<uint64_t>(302119224788637LL & 0xFFFFFF));
  }
  EXPECT_EQ(kernels, 5);
  // textId names resolve through StringIds (MPI ranges have no text).
  bool named_by_id = false;
  for (const auto& r : t->ranges()) named_by_id |= r.name().rfind("MPI_", 0) == 0;
  EXPECT_TRUE(named_by_id);
}

// Oracle: for each kernel, the runtime call with the same (pid, correlationId), then every
// push/pop range on that thread with start <= t < end, outermost (earliest start) first.
void CheckPathsAgainstOracle(const std::string& path, int* checked, int* with_path) {
  Db db(path);
  std::map<std::string, std::string> strings;
  db.Query("SELECT id, value FROM StringIds", [&](sqlite3_stmt* s) {
    strings[std::to_string(sqlite3_column_int64(s, 0))] =
        reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
  });
  struct R { int64_t start, end; std::string name; };
  std::map<int64_t, std::vector<R>> by_thread;
  db.Query("SELECT start, end, globalTid, text, textId FROM NVTX_EVENTS WHERE eventType = 59",
           [&](sqlite3_stmt* s) {
             R r{sqlite3_column_int64(s, 0),
                 sqlite3_column_type(s, 1) == SQLITE_NULL ? INT64_MAX : sqlite3_column_int64(s, 1), ""};
             if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
               r.name = reinterpret_cast<const char*>(sqlite3_column_text(s, 3));
             } else {
               r.name = strings[std::to_string(sqlite3_column_int64(s, 4))];
             }
             by_thread[sqlite3_column_int64(s, 2)].push_back(r);
           });
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> launch;  // -> (gtid, t)
  db.Query("SELECT globalTid, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME",
           [&](sqlite3_stmt* s) {
             int64_t g = sqlite3_column_int64(s, 0);
             auto key = std::make_pair((g >> 24) & 0xFFFFFF, sqlite3_column_int64(s, 1));
             int64_t t = sqlite3_column_int64(s, 2);
             auto it = launch.find(key);
             if (it == launch.end() || t < it->second.second) launch[key] = {g, t};
           });
  std::map<std::pair<int64_t, int64_t>, std::string> expected;  // (start, corr) -> path
  db.Query("SELECT start, correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL",
           [&](sqlite3_stmt* s) {
             int64_t start = sqlite3_column_int64(s, 0), corr = sqlite3_column_int64(s, 1);
             int64_t pid = (sqlite3_column_int64(s, 2) >> 24) & 0xFFFFFF;
             std::string p;
             auto it = launch.find({pid, corr});
             if (it != launch.end()) {
               std::vector<R> open;
               for (const R& r : by_thread[it->second.first]) {
                 if (r.start <= it->second.second && it->second.second < r.end) open.push_back(r);
               }
               std::stable_sort(open.begin(), open.end(), [](const R& a, const R& b) {
                 return a.start != b.start ? a.start < b.start : a.end > b.end;
               });
               for (const R& r : open) p += (p.empty() ? "" : "/") + r.name;
             }
             expected[{start, corr}] = p;
           });
  auto t = ImportFile(path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  for (const auto& a : t->activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    auto it = expected.find({a.start_ns(), static_cast<int64_t>(a.correlation_id())});
    ASSERT_NE(it, expected.end());
    EXPECT_EQ(a.nvtx_path(), it->second) << a.name();
    ++*checked;
    *with_path += !a.nvtx_path().empty();
  }
}

TEST(NsysTestData, H100NvtxPathsMatchBruteForceOracle) {
  auto files = TestFiles("nsys", ".sqlite");
  if (files.empty()) GTEST_SKIP() << "no ../shared/testdata/nsys (set QPROF_TESTDATA)";
  for (const std::string& f : files) {
    if (f.find("h100x2") == std::string::npos) continue;
    SCOPED_TRACE(f);
    int checked = 0, with_path = 0;
    CheckPathsAgainstOracle(f, &checked, &with_path);
    EXPECT_GT(checked, 3000);
    EXPECT_GT(with_path, checked / 2);  // emit_nvtx op ranges cover most launches
  }
}

TEST(NsysTestData, H100KnownKernelPath) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  auto t = ImportFile(dir + "/nsys/h100x2_train_before.sqlite", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  // Flash attention forward is launched inside emit_nvtx's ranges of the autograd function
  // and the forward op, e.g. "FlashAttnFunc, seq = 45368, op_id = 990812/
  // flash_attn::_flash_attn_forward, op_id = 990813". The first two launches happened
  // before the capture recorded runtime calls: no launch record, so no path.
  int flash = 0, without = 0;
  for (const auto& a : t->activities()) {
    if (a.name().find("flash_fwd_kernel") == std::string::npos) continue;
    ++flash;
    if (a.nvtx_path().empty()) {
      ++without;
      continue;
    }
    EXPECT_EQ(a.nvtx_path().rfind("FlashAttnFunc, seq = ", 0), 0u) << a.nvtx_path();
    EXPECT_NE(a.nvtx_path().find("/flash_attn::_flash_attn_forward, op_id = "), std::string::npos)
        << a.nvtx_path();
  }
  EXPECT_EQ(flash, 68);
  EXPECT_EQ(without, 2);
}

}  // namespace
}  // namespace qprof::importers
