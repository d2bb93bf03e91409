#include "analysis/aggregate/interval_union.h"

#include <algorithm>

namespace qprof::aggregate {

template <typename Piece>
void BasicIntervalUnion<Piece>::Add(int64_t start, int64_t end, int64_t tag) {
  ++count_;
  first_ = std::min(first_, start);
  last_ = std::max(last_, end);
  if (start < frontier_) {
    int64_t cut = std::min(end, frontier_);
    late_bound_ += static_cast<uint64_t>(cut - start);
    start = cut;
    if (end <= start) return;
  }
  // Fast path: in order, after or inside the last piece.
  if (pieces_.empty() || start > pieces_.back().end) {
    Piece p{start, end};
    p.SetTag(tag);
    pieces_.push_back(p);
    if (pieces_.size() > kMaxPieces) Fold();
    return;
  }
  if (start >= pieces_.back().start) {
    Piece& b = pieces_.back();
    b.end = std::max(b.end, end);
    if (start == b.start) b.SetTag(std::min(b.Tag(), tag));  // the earlier launch of a tie
    return;
  }
  // Out of order: the first piece that reaches `start` (ends are sorted too)...
  auto lo = std::lower_bound(pieces_.begin(), pieces_.end(), start,
                             [](const Piece& p, int64_t s) { return p.end < s; });
  if (lo == pieces_.end() || lo->start > end) {
    Piece p{start, end};
    p.SetTag(tag);
    pieces_.insert(lo, p);
    if (pieces_.size() > kMaxPieces) Fold();
    return;
  }
  // ...merged with every piece that starts within [start, end]. The merged piece starts with
  // whichever interval starts first.
  auto hi = lo;
  int64_t new_end = end;
  while (hi != pieces_.end() && hi->start <= end) {
    new_end = std::max(new_end, hi->end);
    ++hi;
  }
  if (start < lo->start) {
    lo->start = start;
    lo->SetTag(tag);
  } else if (start == lo->start) {
    lo->SetTag(std::min(lo->Tag(), tag));
  }
  lo->end = new_end;
  pieces_.erase(lo + 1, hi);
}

template <typename Piece>
BasicIntervalUnion<Piece> BasicIntervalUnion<Piece>::FromFigures(uint64_t length,
                                                                 uint64_t late_bound_ns,
                                                                 uint64_t count, int64_t first,
                                                                 int64_t last,
                                                                 const GapStats& gaps) {
  BasicIntervalUnion u;
  u.folded_ = length;
  u.late_bound_ = late_bound_ns;
  u.count_ = count;
  u.first_ = first;
  u.last_ = last;
  u.frontier_ = last;
  u.folded_any_ = count > 0;
  u.folded_gaps_ = gaps;
  return u;
}

template <typename Piece>
void BasicIntervalUnion<Piece>::AddGapBefore(size_t i, GapStats* g) const {
  if (i == 0 && !folded_any_) return;  // nothing before the first piece
  const int64_t prev = i > 0 ? pieces_[i - 1].end : frontier_;
  const uint64_t gap = static_cast<uint64_t>(std::max<int64_t>(0, pieces_[i].start - prev));
  g->Add(gap, GapStats::CauseOf(prev, gap, pieces_[i].Tag()));
}

template <typename Piece>
void BasicIntervalUnion<Piece>::Fold() {
  size_t n = pieces_.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    folded_ += static_cast<uint64_t>(pieces_[i].end - pieces_[i].start);
    // The gap before piece i is final now: nothing can land in it any more without counting
    // as late.
    AddGapBefore(i, &folded_gaps_);
  }
  folded_any_ = true;
  frontier_ = pieces_[n - 1].end;
  pieces_.erase(pieces_.begin(), pieces_.begin() + static_cast<std::ptrdiff_t>(n));
}

template <typename Piece>
GapStats BasicIntervalUnion<Piece>::gaps() const {
  GapStats g = folded_gaps_;
  for (size_t i = 0; i < pieces_.size(); ++i) AddGapBefore(i, &g);
  return g;
}

template <typename Piece>
uint64_t BasicIntervalUnion<Piece>::length() const {
  uint64_t total = folded_;
  for (const Piece& p : pieces_) total += static_cast<uint64_t>(p.end - p.start);
  return total;
}

template class BasicIntervalUnion<PlainPiece>;
template class BasicIntervalUnion<TaggedPiece>;

}  // namespace qprof::aggregate
