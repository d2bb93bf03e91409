// A thin read-only wrapper over the SQLite C API: open (file or bytes), prepare, step.
// Every failure becomes a Status naming the file. Columns are found by name.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_SQLITE_DB_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace qprof::importers {

class SqliteStmt {
 public:
  SqliteStmt(sqlite3_stmt* stmt, const std::string* path) : stmt_(stmt), path_(path) {}
  SqliteStmt(SqliteStmt&& o) noexcept;
  SqliteStmt& operator=(SqliteStmt&&) = delete;
  SqliteStmt(const SqliteStmt&) = delete;
  ~SqliteStmt();

  // True when a row is available; false at the end.
  absl::StatusOr<bool> Step();
  // Column accessors; a negative index or NULL reads as 0 / "".
  int64_t Int(int col) const;
  bool IsNull(int col) const;
  // Int and IsNull in one: the type is asked only when the value reads as 0 (a NULL reads
  // as 0), which saves a call into SQLite per column on most rows.
  int64_t IntOrNull(int col, bool* null) const;
  int ColumnCount() const;
  std::string_view Text(int col) const;
  int64_t rows() const { return rows_; }

 private:
  sqlite3_stmt* stmt_;
  const std::string* path_;
  int64_t rows_ = 0;
};

// The columns of one table, in the order SelectAll() selects them.
class Columns {
 public:
  explicit Columns(std::vector<std::string> names) : names_(std::move(names)) {}
  int Index(std::string_view name) const;  // -1 if absent
  bool Has(std::string_view name) const { return Index(name) >= 0; }
  std::string SelectAll(const std::string& table) const;

 private:
  std::vector<std::string> names_;
};

class SqliteDb {
 public:
  static absl::StatusOr<SqliteDb> OpenReadOnly(const std::string& path);
  // A database from bytes (sqlite3_deserialize); `label` names it in errors.
  static absl::StatusOr<SqliteDb> FromBytes(std::string_view bytes, const std::string& label);
  SqliteDb(SqliteDb&& o) noexcept;
  SqliteDb& operator=(SqliteDb&&) = delete;
  SqliteDb(const SqliteDb&) = delete;
  ~SqliteDb();

  absl::StatusOr<bool> HasTable(const std::string& table);
  absl::StatusOr<Columns> TableColumns(const std::string& table);
  absl::StatusOr<int64_t> CountRows(const std::string& table);
  // max(rowid): the row count of a table rows were only appended to, without a scan.
  absl::StatusOr<int64_t> EstimateRows(const std::string& table);
  absl::StatusOr<SqliteStmt> Prepare(const std::string& sql);
  // Bounds the page cache (SQLite's default is 2 MiB per connection): a connection that
  // only scans a table once gains nothing from caching its pages.
  void LimitCache(int kib);
  const std::string& path() const { return *path_; }
  // Opened from a file (so it can be opened again, e.g. by a reader on another thread).
  bool is_file() const { return is_file_; }

 private:
  SqliteDb(sqlite3* db, std::string path);
  absl::Status Error(const char* what) const;
  sqlite3* db_ = nullptr;
  // Heap-held so statements can point at it across moves of the db.
  std::unique_ptr<std::string> path_;
  bool is_file_ = false;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_SQLITE_DB_H_
