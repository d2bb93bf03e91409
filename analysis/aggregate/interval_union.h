// IntervalUnion: the length of the union of [start, end) intervals, streamed.
//
// Kernels on one device or stream mostly arrive in start order (importers read them per
// stream, nsys rows and CUPTI buffers are in completion order), so the union is kept as a
// sorted list of disjoint pieces to which an interval is merged at or near the tail. The
// list holds at most kMaxPieces; past that the older half is folded into a running length
// and forgotten, which bounds memory whatever the trace's length.
//
// Exactness: the result is the exact union length (touching intervals merge, as a sort and
// sweep would) unless an interval starts before the folded part's end (it arrived more than
// ~kMaxPieces / 2 gaps out of order). Such a late interval's part inside the folded region
// may or may not have been covered; it is not added, and its length is added to
// late_bound_ns() instead. So the true union lies in [length(), length() + late_bound_ns()].
//
// Gaps: the idle gaps between the pieces (gap_stats.h). A gap becomes final when the
// pieces on both sides are folded; gaps() adds those of the live pieces. They sum to
// (last() - first()) - length() when exact; late intervals may have filled up to
// late_bound_ns() of them.
//
// Tagged unions (TaggedIntervalUnion, a device's kernels) keep per piece the launch time of
// the interval that starts it (the kernel that ended the gap before it; on equal starts the
// earlier launch), so each gap gets its cause (GapStats::CauseOf) when it is counted; an
// untagged union counts every gap as "no launch time" and costs 16 bytes per piece, not 24.
#ifndef QPROF_ANALYSIS_AGGREGATE_INTERVAL_UNION_H_
#define QPROF_ANALYSIS_AGGREGATE_INTERVAL_UNION_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/aggregate/gap_stats.h"

namespace qprof::aggregate {

// last - first in ns, 0 when last <= first; in unsigned arithmetic, so that times from a
// partial profile or a trace at the ends of int64 (INT64_MIN..1) do not overflow.
inline uint64_t SpanNs(int64_t first, int64_t last) {
  return last > first ? static_cast<uint64_t>(last) - static_cast<uint64_t>(first) : 0;
}

struct PlainPiece {
  int64_t start, end;
  int64_t Tag() const { return GapStats::kNoLaunch; }
  void SetTag(int64_t) {}
};

struct TaggedPiece {
  int64_t start, end;
  int64_t tag;  // launch time of the interval that starts the piece; kNoLaunch = unknown
  int64_t Tag() const { return tag; }
  void SetTag(int64_t t) { tag = t; }
};

template <typename Piece>
class BasicIntervalUnion {
 public:
  static constexpr size_t kMaxPieces = 16384;  // 256 KiB (384 KiB tagged) per union at most

  // A union known only by its figures (read back from a partial profile); intervals added
  // later that start before `last` count as late.
  static BasicIntervalUnion FromFigures(uint64_t length, uint64_t late_bound_ns, uint64_t count,
                                        int64_t first, int64_t last, const GapStats& gaps = {});

  // end >= start. `tag`: the launch time (tagged unions; ignored by plain ones).
  void Add(int64_t start, int64_t end, int64_t tag = GapStats::kNoLaunch);
  uint64_t length() const;
  uint64_t late_bound_ns() const { return late_bound_; }
  uint64_t count() const { return count_; }       // intervals added
  int64_t first() const { return first_; }         // earliest start (count() > 0)
  int64_t last() const { return last_; }           // latest end (count() > 0)
  GapStats gaps() const;

 private:
  void Fold();
  // Counts the gap before pieces_[i] into `g` (none before the very first piece).
  void AddGapBefore(size_t i, GapStats* g) const;

  std::vector<Piece> pieces_;  // disjoint, sorted, not touching
  uint64_t folded_ = 0;   // length of the pieces folded away
  int64_t frontier_ = std::numeric_limits<int64_t>::min();  // end of the folded region
  uint64_t late_bound_ = 0;
  bool folded_any_ = false;   // frontier_ is the end of a folded piece
  GapStats folded_gaps_;      // final gaps: between and after folded pieces
  uint64_t count_ = 0;
  int64_t first_ = std::numeric_limits<int64_t>::max();
  int64_t last_ = std::numeric_limits<int64_t>::min();
};

using IntervalUnion = BasicIntervalUnion<PlainPiece>;
using TaggedIntervalUnion = BasicIntervalUnion<TaggedPiece>;

extern template class BasicIntervalUnion<PlainPiece>;
extern template class BasicIntervalUnion<TaggedPiece>;

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_INTERVAL_UNION_H_
