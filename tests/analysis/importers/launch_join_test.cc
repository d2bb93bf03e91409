// The nsys launch join: the streaming merge join against a plain map of the runtime table,
// on tables in order, nearly in order, and too far out of order (where it must say so and
// the importer must fall back to the exact SQL join with the same result).
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/importers/import.h"
#include "analysis/importers/nsys/launch_join.h"
#include "analysis/importers/nsys/sqlite_db.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

constexpr int64_t kPid = 7;
constexpr int64_t kGlobalPid = kPid << 24;

void Exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
}

// An nsys-shaped database: n kernels, each launched once (correlation i + 1, launch at
// 10 i on thread 1 or 2, inside range "step i/100"), the runtime rows in `order`.
std::string MakeDb(const std::string& name, int n, const std::vector<int>& order) {
  std::string path = testing::WriteTemp(name, "");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
           "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
           "INSERT INTO StringIds VALUES (1, 'kernel_a(int)'), (2, 'kernel_b(float)');"
           "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
           " streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER);"
           "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER,"
           " globalTid INTEGER, correlationId INTEGER);"
           "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
           " globalTid INTEGER);");
  sqlite3_stmt* k = nullptr;
  sqlite3_stmt* r = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,7,?,?,?)", -1, &k, nullptr);
  sqlite3_prepare_v2(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?)", -1, &r, nullptr);
  for (int i = 0; i < n; ++i) {
    sqlite3_bind_int64(k, 1, 1000000 + 20 * i);
    sqlite3_bind_int64(k, 2, 1000000 + 20 * i + 15);
    sqlite3_bind_int64(k, 3, i + 1);
    sqlite3_bind_int64(k, 4, kGlobalPid);
    sqlite3_bind_int64(k, 5, 1 + i % 2);
    EXPECT_EQ(sqlite3_step(k), SQLITE_DONE);
    sqlite3_reset(k);
  }
  for (int i : order) {
    sqlite3_bind_int64(r, 1, 10 * i);
    sqlite3_bind_int64(r, 2, 10 * i + 5);
    sqlite3_bind_int64(r, 3, kGlobalPid | (1 + i % 2));
    sqlite3_bind_int64(r, 4, i + 1);
    EXPECT_EQ(sqlite3_step(r), SQLITE_DONE);
    sqlite3_reset(r);
  }
  for (int s = 0; s * 100 < n; ++s) {
    for (int t = 1; t <= 2; ++t) {
      Exec(db, "INSERT INTO NVTX_EVENTS VALUES (" + std::to_string(s * 1000) + ", " +
                   std::to_string(s * 1000 + 1000) + ", 59, 'step " + std::to_string(s) + "', " +
                   std::to_string(kGlobalPid | t) + ")");
    }
  }
  sqlite3_finalize(k);
  sqlite3_finalize(r);
  Exec(db, "COMMIT;");
  sqlite3_close(db);
  return path;
}

std::vector<int> InOrder(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

TEST(RuntimeJoin, FindsEveryLaunchWhenRoughlyInOrder) {
  std::vector<int> order = InOrder(5000);
  std::mt19937 rng(1);
  for (size_t i = 0; i + 32 <= order.size(); i += 32) {  // threads interleave in buffers
    std::shuffle(order.begin() + static_cast<std::ptrdiff_t>(i),
                 order.begin() + static_cast<std::ptrdiff_t>(i + 32), rng);
  }
  std::string path = MakeDb("join_near.sqlite", 5000, order);
  auto db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok());
  // Read ahead on another thread (row_reader.h), as the importer does for large tables.
  auto st = RowReader::Open(&*db, "SELECT globalTid, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME",
                            {}, /*ahead=*/true);
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE((*st)->ahead());
  RuntimeJoin join(std::move(*st), /*window=*/256, /*recent=*/256);
  for (int i = 0; i < 5000; ++i) {
    auto l = join.Find(kPid, i + 1);
    ASSERT_TRUE(l.ok());
    ASSERT_FALSE(join.failed()) << i;
    ASSERT_TRUE(l->has_value()) << i;
    EXPECT_EQ((*l)->start, 10 * i);
    EXPECT_EQ((*l)->global_tid, kGlobalPid | (1 + i % 2));
  }
  auto missing = join.Find(kPid, 999999);  // no such launch
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  EXPECT_FALSE(join.failed());
}

TEST(RuntimeJoin, SaysSoWhenTheTablesAreTooFarOutOfOrder) {
  std::vector<int> order = InOrder(3000);
  std::reverse(order.begin(), order.end());
  std::string path = MakeDb("join_reversed.sqlite", 3000, order);
  auto db = SqliteDb::OpenReadOnly(path);
  ASSERT_TRUE(db.ok());
  auto st = RowReader::Open(&*db, "SELECT globalTid, correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME",
                            {}, /*ahead=*/false);
  ASSERT_TRUE(st.ok());
  RuntimeJoin join(std::move(*st), 256, 256);
  bool failed = false;
  for (int i = 0; i < 3000 && !failed; ++i) {
    auto l = join.Find(kPid, i + 1);
    ASSERT_TRUE(l.ok());
    failed = join.failed();
    if (!failed && l->has_value()) EXPECT_EQ((*l)->start, 10 * i);  // found = right
  }
  EXPECT_TRUE(failed);  // and it noticed, so the importer starts over
}

// Runtime rows in reverse: past the window, so the importer starts over with SQLite's join;
// the analysis must not tell the difference.
TEST(RuntimeJoin, ImporterFallsBackToTheExactJoin) {
  const int n = static_cast<int>(RuntimeJoin::kWindow) + 5000;
  std::vector<int> reversed = InOrder(n);
  std::reverse(reversed.begin(), reversed.end());
  std::string in_order = MakeDb("import_in_order.sqlite", n, InOrder(n));
  std::string out_of_order = MakeDb("import_reversed.sqlite", n, reversed);
  ImportOptions quiet;
  quiet.progress = false;
  auto a = ImportFile(in_order, quiet);
  auto b = ImportFile(out_of_order, quiet);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->activities_size(), n);
  ASSERT_EQ(b->activities_size(), n);
  for (int i = 0; i < n; i += 997) {
    const auto& x = a->activities(i);
    const auto& y = b->activities(i);
    EXPECT_EQ(x.nvtx_path(), "step " + std::to_string(10 * i / 1000)) << i;
    EXPECT_EQ(y.nvtx_path(), x.nvtx_path()) << i;
    EXPECT_EQ(y.tid(), x.tid()) << i;
  }
}

}  // namespace
}  // namespace qprof::importers
