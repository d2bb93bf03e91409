#include "analysis/aggregate/interval_union.h"

#include <algorithm>

namespace qprof::aggregate {

void IntervalUnion::Add(int64_t start, int64_t end) {
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
  if (pieces_.empty() || start > pieces_.back().second) {
    pieces_.emplace_back(start, end);
    if (pieces_.size() > kMaxPieces) Fold();
    return;
  }
  if (start >= pieces_.back().first) {
    pieces_.back().second = std::max(pieces_.back().second, end);
    return;
  }
  // Out of order: the first piece that reaches `start` (ends are sorted too)...
  auto lo = std::lower_bound(pieces_.begin(), pieces_.end(), start,
                             [](const std::pair<int64_t, int64_t>& p, int64_t s) {
                               return p.second < s;
                             });
  if (lo == pieces_.end() || lo->first > end) {
    pieces_.insert(lo, {start, end});
    if (pieces_.size() > kMaxPieces) Fold();
    return;
  }
  // ...merged with every piece that starts within [start, end].
  auto hi = lo;
  int64_t new_end = end;
  while (hi != pieces_.end() && hi->first <= end) {
    new_end = std::max(new_end, hi->second);
    ++hi;
  }
  lo->first = std::min(lo->first, start);
  lo->second = new_end;
  pieces_.erase(lo + 1, hi);
}

IntervalUnion IntervalUnion::FromFigures(uint64_t length, uint64_t late_bound_ns,
                                         uint64_t count, int64_t first, int64_t last,
                                         const GapStats& gaps) {
  IntervalUnion u;
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

void IntervalUnion::Fold() {
  size_t n = pieces_.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    folded_ += static_cast<uint64_t>(pieces_[i].second - pieces_[i].first);
    // The gap before piece i is final now: nothing can land in it any more without counting
    // as late.
    int64_t prev = i > 0 ? pieces_[i - 1].second : frontier_;
    if (i > 0 || folded_any_) {
      folded_gaps_.Add(static_cast<uint64_t>(std::max<int64_t>(0, pieces_[i].first - prev)));
    }
  }
  folded_any_ = true;
  frontier_ = pieces_[n - 1].second;
  pieces_.erase(pieces_.begin(), pieces_.begin() + static_cast<std::ptrdiff_t>(n));
}

GapStats IntervalUnion::gaps() const {
  GapStats g = folded_gaps_;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    int64_t prev = i > 0 ? pieces_[i - 1].second : frontier_;
    if (i > 0 || folded_any_) {
      g.Add(static_cast<uint64_t>(std::max<int64_t>(0, pieces_[i].first - prev)));
    }
  }
  return g;
}

uint64_t IntervalUnion::length() const {
  uint64_t total = folded_;
  for (const auto& [s, e] : pieces_) total += static_cast<uint64_t>(e - s);
  return total;
}

}  // namespace qprof::aggregate
