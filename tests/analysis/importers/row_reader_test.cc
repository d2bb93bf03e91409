// RowReader (nsys/row_reader.h): the rows of a SELECT read ahead on a worker thread are the
// rows stepping the statement gives, across chunk boundaries, with NULLs told from zeros and
// text columns kept; a read error comes after the rows before it, in both modes; a reader
// dropped part way stops its worker; a database in memory is read on the calling thread.
#include <sqlite3.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "analysis/importers/nsys/row_reader.h"
#include "analysis/importers/nsys/sqlite_db.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

// Three chunks and a bit, so both chunk boundaries and a partial last chunk are crossed.
constexpr int kRows = 3 * static_cast<int>(RowReader::kChunkRows) + 17;

// Row i: a = i; b NULL when i % 7 == 0, 0 when i % 5 == 0, else 3 i; t NULL when
// i % 11 == 0, else "row i".
bool BNull(int i) { return i % 7 == 0; }
int64_t BValue(int i) { return BNull(i) || i % 5 == 0 ? 0 : 3 * int64_t{i}; }
bool TNull(int i) { return i % 11 == 0; }

std::string MakeDb(const std::string& name) {
  std::string path = testing::WriteTemp(name, "");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=OFF; BEGIN; CREATE TABLE T (a INTEGER, "
                             "b INTEGER, t TEXT);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO T VALUES (?,?,?)", -1, &ins, nullptr);
  for (int i = 0; i < kRows; ++i) {
    sqlite3_bind_int64(ins, 1, i);
    if (BNull(i)) sqlite3_bind_null(ins, 2); else sqlite3_bind_int64(ins, 2, BValue(i));
    const std::string t = "row " + std::to_string(i);
    if (TNull(i)) sqlite3_bind_null(ins, 3); else sqlite3_bind_text(ins, 3, t.c_str(), -1, SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  EXPECT_EQ(sqlite3_exec(db, "COMMIT;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  return path;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void ExpectAllRows(SqliteDb* db, bool ahead, bool expect_thread) {
  auto r = RowReader::Open(db, "SELECT a, b, t FROM T", {2}, ahead);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->ahead(), expect_thread);
  int i = 0;
  while (true) {
    auto row = (*r)->Next();
    ASSERT_TRUE(row.ok()) << row.status();
    if (!*row) break;
    ASSERT_LT(i, kRows);
    EXPECT_EQ((*r)->Int(0), i);
    EXPECT_FALSE((*r)->IsNull(0));
    EXPECT_EQ((*r)->IsNull(1), BNull(i)) << i;
    EXPECT_EQ((*r)->Int(1), BValue(i)) << i;
    EXPECT_EQ((*r)->IsNull(2), TNull(i)) << i;
    EXPECT_EQ((*r)->Text(2), TNull(i) ? "" : "row " + std::to_string(i)) << i;
    EXPECT_EQ((*r)->Int(-1), 0);
    EXPECT_TRUE((*r)->IsNull(-1));
    ++i;
  }
  EXPECT_EQ(i, kRows);
  auto again = (*r)->Next();  // the end stays the end
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(RowReader, ReadAheadGivesTheStatementsRows) {
  auto db = SqliteDb::OpenReadOnly(MakeDb("rows.sqlite"));
  ASSERT_TRUE(db.ok());
  ExpectAllRows(&*db, /*ahead=*/true, /*expect_thread=*/true);
  ExpectAllRows(&*db, /*ahead=*/false, /*expect_thread=*/false);
}

TEST(RowReader, InMemoryDatabaseIsReadOnTheCallingThread) {
  auto db = SqliteDb::FromBytes(ReadAll(MakeDb("rows_mem.sqlite")), "rows_mem.sqlite");
  ASSERT_TRUE(db.ok());
  EXPECT_FALSE(db->is_file());
  ExpectAllRows(&*db, /*ahead=*/true, /*expect_thread=*/false);
}

// Rows up to the damage, then the error, the same in both modes.
TEST(RowReader, ErrorComesAfterTheRowsBeforeIt) {
  // A page of the table past its middle zeroed (a file cut short fails already at prepare:
  // its header's page count is then beyond the file).
  std::string bytes = ReadAll(MakeDb("rows_cut_src.sqlite"));
  const size_t page = 4096, at = bytes.size() * 3 / 5 / page * page;
  ASSERT_GT(bytes.size(), at + page);
  bytes.replace(at, page, std::string(page, '\0'));
  const std::string cut = testing::WriteTemp("rows_cut.sqlite", bytes);
  int rows_seen[2] = {0, 0};
  std::string errors[2];
  for (int mode = 0; mode < 2; ++mode) {
    auto db = SqliteDb::OpenReadOnly(cut);
    ASSERT_TRUE(db.ok());
    auto r = RowReader::Open(&*db, "SELECT a, b, t FROM T", {2}, /*ahead=*/mode == 1);
    ASSERT_TRUE(r.ok()) << r.status();
    while (true) {
      auto row = (*r)->Next();
      if (!row.ok()) {
        errors[mode] = std::string(row.status().message());
        break;
      }
      ASSERT_TRUE(*row) << "the cut table read to its end";
      EXPECT_EQ((*r)->Int(0), rows_seen[mode]);
      ++rows_seen[mode];
    }
    auto after = (*r)->Next();
    ASSERT_TRUE(after.ok());
    EXPECT_FALSE(*after);
  }
  EXPECT_GT(rows_seen[0], 0);
  EXPECT_LT(rows_seen[0], kRows);
  EXPECT_EQ(rows_seen[1], rows_seen[0]);
  EXPECT_EQ(errors[1], errors[0]);
}

TEST(RowReader, DroppedPartWayStopsItsWorker) {
  auto db = SqliteDb::OpenReadOnly(MakeDb("rows_drop.sqlite"));
  ASSERT_TRUE(db.ok());
  for (int taken : {0, 1, kRows / 2}) {
    auto r = RowReader::Open(&*db, "SELECT a, b, t FROM T", {2}, true);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE((*r)->ahead());
    for (int i = 0; i < taken; ++i) ASSERT_TRUE(*(*r)->Next());
    // Destroying r joins the worker, which may be waiting for a free chunk.
  }
}

}  // namespace
}  // namespace qprof::importers
