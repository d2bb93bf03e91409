#include "analysis/importers/nsys/row_reader.h"

#include <utility>

#include "base/status_macros.h"

namespace qprof::importers {

RowReader::RowReader(SqliteStmt stmt, std::unique_ptr<SqliteDb> own_db,
                     std::vector<int> text_columns)
    : own_db_(std::move(own_db)), stmt_(std::move(stmt)),
      text_columns_(std::move(text_columns)) {
  columns_ = static_cast<size_t>(stmt_.ColumnCount());
  text_slot_.assign(columns_, -1);
  for (size_t k = 0; k < text_columns_.size(); ++k) {
    const int c = text_columns_[k];
    if (c >= 0 && static_cast<size_t>(c) < columns_) text_slot_[c] = static_cast<int>(k);
  }
}

absl::StatusOr<std::unique_ptr<RowReader>> RowReader::Open(SqliteDb* db, const std::string& sql,
                                                           std::vector<int> text_columns,
                                                           bool ahead) {
  std::unique_ptr<SqliteDb> own;
  if (ahead && db->is_file()) {
    // A second connection for the worker; if the file cannot be opened again (removed
    // since), the rows are read here on the first one.
    absl::StatusOr<SqliteDb> again = SqliteDb::OpenReadOnly(db->path());
    if (again.ok()) {
      own = std::make_unique<SqliteDb>(*std::move(again));
      own->LimitCache(kCacheKib);
    }
  }
  if (own && !own->Prepare(sql).ok()) own.reset();  // then the error comes from `db`'s
  absl::StatusOr<SqliteStmt> stmt = (own ? own.get() : db)->Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  if (stmt->ColumnCount() > 64) return absl::InternalError("RowReader: more than 64 columns");
  const bool threaded = own != nullptr;
  std::unique_ptr<RowReader> r(new RowReader(*std::move(stmt), std::move(own),
                                             std::move(text_columns)));
  if (threaded) {
    for (size_t k = 0; k < kChunksAhead; ++k) r->free_.push_back(std::make_unique<RowChunk>());
    r->worker_ = std::thread([p = r.get()] { p->Work(); });
  }
  return r;
}

RowReader::~RowReader() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  free_cv_.notify_all();
  worker_.join();
}

void RowReader::Fill(RowChunk* c) {
  c->rows = 0;
  c->ints.resize(kChunkRows * columns_);
  c->nulls.resize(kChunkRows);
  c->texts.resize(kChunkRows * text_columns_.size());
  c->status = absl::OkStatus();
  c->last = false;
  while (c->rows < kChunkRows) {
    absl::StatusOr<bool> row = stmt_.Step();
    if (!row.ok() || !*row) {
      if (!row.ok()) c->status = row.status();
      c->last = true;
      return;
    }
    int64_t* ints = &c->ints[c->rows * columns_];
    uint64_t nulls = 0;
    for (size_t col = 0; col < columns_; ++col) {
      const int i = static_cast<int>(col);
      if (text_slot_[col] >= 0) {
        ints[col] = 0;
        // Assigned even for NULL (as ""): the chunk is reused and holds the last fill's text.
        const bool null = stmt_.IsNull(i);
        nulls |= static_cast<uint64_t>(null) << col;
        c->texts[c->rows * text_columns_.size() + static_cast<size_t>(text_slot_[col])].assign(
            null ? std::string_view() : stmt_.Text(i));
        continue;
      }
      bool null = false;
      ints[col] = stmt_.IntOrNull(i, &null);
      nulls |= static_cast<uint64_t>(null) << col;
    }
    c->nulls[c->rows] = nulls;
    ++c->rows;
  }
}

void RowReader::Work() {
  while (true) {
    std::unique_ptr<RowChunk> chunk;
    {
      std::unique_lock<std::mutex> lock(mu_);
      free_cv_.wait(lock, [this] { return stop_ || !free_.empty(); });
      if (stop_) return;
      chunk = std::move(free_.front());
      free_.pop_front();
    }
    Fill(chunk.get());
    const bool last = chunk->last;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_.push_back(std::move(chunk));
    }
    ready_cv_.notify_one();
    if (last) return;
  }
}

bool RowReader::TakeChunk() {
  if (done_) return false;
  if (!worker_.joinable()) {
    if (!chunk_) chunk_ = std::make_unique<RowChunk>();
    Fill(chunk_.get());
  } else {
    std::unique_ptr<RowChunk> next;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_cv_.wait(lock, [this] { return !ready_.empty(); });
      next = std::move(ready_.front());
      ready_.pop_front();
      if (chunk_) free_.push_back(std::move(chunk_));
    }
    free_cv_.notify_one();
    chunk_ = std::move(next);
  }
  row_ = 0;
  return true;
}

absl::StatusOr<bool> RowReader::Next() {
  if (started_) ++row_;
  started_ = true;
  while (!chunk_ || row_ >= chunk_->rows) {
    if (chunk_ && chunk_->last) {
      done_ = true;
      absl::Status s = std::exchange(chunk_->status, absl::OkStatus());
      if (!s.ok()) return s;
      return false;
    }
    if (!TakeChunk()) return false;
  }
  return true;
}

std::string_view RowReader::Text(int col) const {
  if (col < 0 || static_cast<size_t>(col) >= columns_ || text_slot_[col] < 0) return {};
  return chunk_->texts[row_ * text_columns_.size() + static_cast<size_t>(text_slot_[col])];
}

}  // namespace qprof::importers
