#include "analysis/importers/nsys/sqlite_db.h"

#include <sqlite3.h>

#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace qprof::importers {
namespace {

absl::Status StatusFor(int rc, const std::string& path, const char* what, const char* msg) {
  std::string text = absl::StrCat(path, ": ", what, ": ", msg ? msg : sqlite3_errstr(rc));
  switch (rc & 0xFF) {
    case SQLITE_NOTADB:
      return absl::InvalidArgumentError(absl::StrCat(path, ": not an SQLite database"));
    case SQLITE_CORRUPT:
      return absl::DataLossError(absl::StrCat(path, ": corrupt or truncated SQLite database (",
                                              msg ? msg : sqlite3_errstr(rc), ")"));
    case SQLITE_CANTOPEN:
      return absl::NotFoundError(text);
    case SQLITE_NOMEM:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::InvalidArgumentError(text);
  }
}

}  // namespace

SqliteStmt::SqliteStmt(SqliteStmt&& o) noexcept
    : stmt_(std::exchange(o.stmt_, nullptr)), path_(o.path_), rows_(o.rows_) {}

SqliteStmt::~SqliteStmt() {
  if (stmt_) sqlite3_finalize(stmt_);
}

absl::StatusOr<bool> SqliteStmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    ++rows_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = sqlite3_db_handle(stmt_);
  absl::Status s = StatusFor(rc, *path_, "reading rows", sqlite3_errmsg(db));
  return absl::Status(s.code(), absl::StrCat(s.message(), " at row ", rows_ + 1));
}

int64_t SqliteStmt::Int(int col) const {
  if (col < 0) return 0;
  return sqlite3_column_int64(stmt_, col);
}

bool SqliteStmt::IsNull(int col) const {
  return col < 0 || sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

int64_t SqliteStmt::IntOrNull(int col, bool* null) const {
  const int64_t v = sqlite3_column_int64(stmt_, col);
  *null = v == 0 && sqlite3_column_type(stmt_, col) == SQLITE_NULL;
  return v;
}

int SqliteStmt::ColumnCount() const { return sqlite3_column_count(stmt_); }

std::string_view SqliteStmt::Text(int col) const {
  if (col < 0) return {};
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

int Columns::Index(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string Columns::SelectAll(const std::string& table) const {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < names_.size(); ++i) {
    if (i) sql += ", ";
    sql += "\"";
    for (char c : names_[i]) sql += c == '"' ? std::string("\"\"") : std::string(1, c);
    sql += "\"";
  }
  if (names_.empty()) sql += "1";
  absl::StrAppend(&sql, " FROM \"", table, "\"");
  return sql;
}

SqliteDb::SqliteDb(sqlite3* db, std::string path)
    : db_(db), path_(std::make_unique<std::string>(std::move(path))) {}

SqliteDb::SqliteDb(SqliteDb&& o) noexcept
    : db_(std::exchange(o.db_, nullptr)), path_(std::move(o.path_)), is_file_(o.is_file_) {}

SqliteDb::~SqliteDb() {
  if (db_) sqlite3_close(db_);
}

absl::Status SqliteDb::Error(const char* what) const {
  return StatusFor(sqlite3_errcode(db_), *path_, what, sqlite3_errmsg(db_));
}

absl::StatusOr<SqliteDb> SqliteDb::OpenReadOnly(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  SqliteDb out(db, path);
  if (rc != SQLITE_OK) return StatusFor(rc, path, "cannot open", db ? sqlite3_errmsg(db) : nullptr);
  out.is_file_ = true;
  return out;
}

absl::StatusOr<SqliteDb> SqliteDb::FromBytes(std::string_view bytes, const std::string& label) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
  SqliteDb out(db, label);
  if (rc != SQLITE_OK) return StatusFor(rc, label, "cannot open", nullptr);
  auto* buf = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size() ? bytes.size() : 1));
  if (buf == nullptr) return absl::ResourceExhaustedError(label + ": out of memory");
  std::memcpy(buf, bytes.data(), bytes.size());
  rc = sqlite3_deserialize(db, "main", buf, bytes.size(), bytes.size(),
                           SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) return out.Error("cannot load");
  return out;
}

absl::StatusOr<bool> SqliteDb::HasTable(const std::string& table) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(
      db_, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1", -1,
      &raw, nullptr);
  if (rc != SQLITE_OK) return Error("cannot read the schema");
  SqliteStmt st(raw, path_.get());
  sqlite3_bind_text(raw, 1, table.c_str(), -1, SQLITE_TRANSIENT);
  return st.Step();
}

absl::StatusOr<Columns> SqliteDb::TableColumns(const std::string& table) {
  std::string sql = absl::StrCat("PRAGMA table_info(\"", table, "\")");
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return Error("cannot read the schema");
  }
  SqliteStmt st(raw, path_.get());
  std::vector<std::string> names;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    names.emplace_back(st.Text(1));
  }
  return Columns(std::move(names));
}

absl::StatusOr<int64_t> SqliteDb::CountRows(const std::string& table) {
  absl::StatusOr<SqliteStmt> st = Prepare(absl::StrCat("SELECT count(*) FROM \"", table, "\""));
  if (!st.ok()) return st.status();
  absl::StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? st->Int(0) : 0;
}

absl::StatusOr<int64_t> SqliteDb::EstimateRows(const std::string& table) {
  absl::StatusOr<SqliteStmt> st = Prepare(absl::StrCat("SELECT max(rowid) FROM \"", table, "\""));
  if (!st.ok()) return CountRows(table);  // a view or a table without rowid
  absl::StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  return *row ? st->Int(0) : 0;
}

void SqliteDb::LimitCache(int kib) {
  // A failure leaves the default cache, which is only more memory.
  sqlite3_exec(db_, absl::StrCat("PRAGMA cache_size = -", kib).c_str(), nullptr, nullptr, nullptr);
}

absl::StatusOr<SqliteStmt> SqliteDb::Prepare(const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
    return Error("cannot query");
  }
  return SqliteStmt(raw, path_.get());
}

}  // namespace qprof::importers
