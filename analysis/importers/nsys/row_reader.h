// Rows of one SELECT, read ahead on a thread of their own.
//
// Decoding SQLite records (sqlite3_step and a sqlite3_column_* call per column) is about
// half of reading a large export; the rest is what the reader does with each row. On a
// second core the two overlap: a worker with its own read-only connection (a connection
// must not be used by two threads at once) steps the statement and copies each row's
// integers into chunks of kChunkRows, a few chunks ahead, and the caller takes rows from
// the chunks in table order. Memory is those few chunks, whatever the table's size.
//
// A database that is not a file (bytes in memory) cannot be opened twice: its rows are read
// into the same chunks on the calling thread, so callers see one behaviour either way.
// A read error (a truncated file) comes after the rows read before it, as with Step().
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_ROW_READER_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_ROW_READER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/importers/nsys/sqlite_db.h"

namespace qprof::importers {

// A block of rows: every column read as an integer (NULL reads as 0, as SqliteStmt::Int),
// with a NULL bit per column (at most 64 columns); the columns named as text keep their text.
struct RowChunk {
  size_t rows = 0;
  std::vector<int64_t> ints;      // rows x columns
  std::vector<uint64_t> nulls;    // one mask per row
  std::vector<std::string> texts; // rows x text columns
  absl::Status status;            // the error that ended the table after these rows
  bool last = false;              // no rows follow
};

class RowReader {
 public:
  // 1024 rows of 20 columns are 160 KiB a chunk: a few ahead keep the worker busy while
  // the caller is slower, and memory a small part of the bound on a large file.
  static constexpr size_t kChunkRows = 1024;
  static constexpr size_t kChunksAhead = 3;
  static constexpr int kCacheKib = 256;  // the worker connection's page cache

  // `text_columns`: the SELECT's columns read as text (others as integers). `ahead`: use a
  // worker thread when `db` is a file; otherwise (or when opening it again fails) the rows
  // are read on the calling thread.
  static absl::StatusOr<std::unique_ptr<RowReader>> Open(SqliteDb* db, const std::string& sql,
                                                         std::vector<int> text_columns,
                                                         bool ahead);
  ~RowReader();
  RowReader(const RowReader&) = delete;
  RowReader& operator=(const RowReader&) = delete;

  // True when a row is available, false at the end; the table's read error, once, after
  // the rows before it.
  absl::StatusOr<bool> Next();
  int64_t Int(int col) const {
    return col < 0 ? 0 : chunk_->ints[row_ * columns_ + static_cast<size_t>(col)];
  }
  bool IsNull(int col) const { return col < 0 || (chunk_->nulls[row_] >> col & 1) != 0; }
  std::string_view Text(int col) const;
  bool ahead() const { return worker_.joinable(); }

 private:
  RowReader(SqliteStmt stmt, std::unique_ptr<SqliteDb> own_db, std::vector<int> text_columns);
  void Fill(RowChunk* chunk);  // up to kChunkRows rows from stmt_
  void Work();
  bool TakeChunk();  // the next chunk into chunk_; false when none will come

  std::unique_ptr<SqliteDb> own_db_;  // the worker's connection (declared before stmt_)
  SqliteStmt stmt_;
  const std::vector<int> text_columns_;
  std::vector<int> text_slot_;  // per column: its index among the text columns, or -1
  size_t columns_ = 0;
  std::unique_ptr<RowChunk> chunk_;
  size_t row_ = 0;
  bool started_ = false, done_ = false;

  std::mutex mu_;
  std::condition_variable ready_cv_, free_cv_;
  std::deque<std::unique_ptr<RowChunk>> ready_, free_;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_ROW_READER_H_
