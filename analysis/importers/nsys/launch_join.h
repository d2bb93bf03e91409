// RuntimeJoin: each activity row's runtime launch (thread and start of the API call with the
// same process and correlation id), found while both tables stream, in bounded memory.
//
// An nsys export has one CUPTI_ACTIVITY_KIND_RUNTIME row per API call and no index on
// correlationId; letting SQLite join the tables builds a temporary index of the whole
// runtime table (about 0.5 s per million rows) and the other way, a map of every runtime
// row, holds the table in memory. But both tables come out of CUPTI buffers in roughly
// correlation order, so a merge join works: runtime rows are read ahead into a window
// ordered by correlation id (per process; kWindow rows over all processes), and as the
// activity rows ask for ascending ids the window hands its smallest rows over to a short
// list of recent ones (kRecent per process) where lookups, also slightly out of order ones,
// find them. When several runtime rows share a key (nsys 2022 writes cudaLaunchKernel and
// its _v7000), the earliest start wins, then the earlier row.
//
// The order assumption is checked, never trusted: a lookup declares every id up to its own
// read (a runtime row with such an id arriving later, or a lookup of an id already dropped
// from the recent list, sets failed()). "Not found" may therefore have been premature when
// failed() turns true later on, so the caller must then discard what it built and start
// over with an exact SQL join (the nsys reader does, through TraceSink::Reset). A launch
// that was found is always the right one.
#ifndef QPROF_ANALYSIS_IMPORTERS_NSYS_LAUNCH_JOIN_H_
#define QPROF_ANALYSIS_IMPORTERS_NSYS_LAUNCH_JOIN_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>
#include <optional>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "analysis/importers/nsys/row_reader.h"

namespace qprof::importers {

class RuntimeJoin {
 public:
  static constexpr size_t kWindow = 1 << 16;
  static constexpr size_t kRecent = 1 << 16;

  struct Launch {
    int64_t global_tid = 0;
    int64_t start = 0;
    int64_t name_id = -1;  // StringIds id of the API call's name; -1 when not selected
  };

  // `runtime` selects globalTid, correlationId, start of the runtime table, in table order,
  // and nameId fourth when `has_name` (read ahead on another thread when it was opened so,
  // row_reader.h). (Tests pass small window and recent sizes.)
  explicit RuntimeJoin(std::unique_ptr<RowReader> runtime, size_t window = kWindow,
                       size_t recent = kRecent, bool has_name = false)
      : runtime_(std::move(runtime)), window_(window), recent_(recent), has_name_(has_name) {}
  // The launch of (pid, correlation id), or nullopt when the runtime table has none.
  absl::StatusOr<std::optional<Launch>> Find(uint32_t pid, int64_t correlation);
  // Called with every runtime row as it is read, for whatever else sums the table (the
  // nsys reader's host-call sums ride along instead of scanning it again).
  void OnEachRow(std::function<void(const RowReader&)> f) { on_row_ = std::move(f); }
  // Reads the rows no Find needed, for OnEachRow only (after the last Find).
  absl::Status Drain();
  bool failed() const { return failed_; }

 private:
  struct Entry {
    int64_t corr;
    int64_t start;
    uint64_t row;
    int64_t gtid;
    int64_t name;
    bool operator<(const Entry& o) const {
      return corr != o.corr ? corr < o.corr : start != o.start ? start < o.start : row < o.row;
    }
  };
  struct Process {
    // Read ahead: rows in order go to `window` (sorted, appended at the back); a row below
    // the window's last goes to `late`, a min-heap, rather than into the middle of the deque
    // (runtime rows of several threads interleave, and a middle insert moved up to 64k
    // entries: 14% of a 4k-kernel export's analysis). The smallest of both fronts is next.
    std::deque<Entry> window;
    std::vector<Entry> late;
    bool Empty() const { return window.empty() && late.empty(); }
    const Entry& Front() const;
    void PopFront();
    std::deque<Entry> recent;  // handed over, sorted by corr, one entry per corr
    int64_t handed_until = INT64_MIN;  // every row with corr <= this has been read
    int64_t dropped_until = INT64_MIN;  // recent entries up to this were dropped
  };
  absl::Status Fill();
  static bool LaterFirst(const Entry& a, const Entry& b);

  std::unique_ptr<RowReader> runtime_;
  const size_t window_, recent_;
  const bool has_name_;
  std::unordered_map<uint32_t, Process> processes_;
  Process* last_process_ = nullptr;
  uint32_t last_pid_ = 0;
  size_t in_windows_ = 0;
  uint64_t rows_ = 0;
  bool exhausted_ = false;
  bool failed_ = false;
  std::function<void(const RowReader&)> on_row_;
};

}  // namespace qprof::importers

#endif  // QPROF_ANALYSIS_IMPORTERS_NSYS_LAUNCH_JOIN_H_
