// DurationQuantiles: median and p90 of a kernel's launch durations in bounded memory.
//
// Exact while it can be: the first kExactLimit durations are kept as they are and the
// quantiles are the nearest-rank values (what sorting every duration gives). Past that the
// durations move into a log-bucketed relative-error sketch (the DDSketch idea: bucket i
// holds the values in (g^(i-1), g^i] with g = (1 + a) / (1 - a), and reports 2 g^i / (g + 1)
// for them), so memory is one counter per occupied bucket (under 4,400 for any int64 range)
// however many launches there are.
//
// Error bound, when sketched: the reported quantile q' and the exact nearest-rank quantile
// q of the same durations satisfy |q' - q| <= a * q (relative error a = kRelativeError =
// 0.5%), up to rounding to whole nanoseconds; 0 is kept exactly. relative_error() says
// which case holds (0 = exact). count, sum, min and max are always exact.
//
// Merging is exact in the same sense: two exact sets whose union stays within kExactLimit
// stay exact; otherwise both are bucketed, and bucket counts add. Which one a kernel ends
// up with depends only on how many durations it has, never on the order they came in, so
// merging partial results gives the same quantiles as adding every duration to one object.
#ifndef QPROF_ANALYSIS_AGGREGATE_QUANTILES_H_
#define QPROF_ANALYSIS_AGGREGATE_QUANTILES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proto/partial.pb.h"

namespace qprof::aggregate {

class DurationQuantiles {
 public:
  static constexpr size_t kExactLimit = 16384;  // 128 KiB of durations per kernel
  static constexpr double kRelativeError = 0.005;

  // `ns` >= 0 (callers drop negative durations).
  void Add(int64_t ns);
  void Merge(const DurationQuantiles& other);
  // Nearest-rank quantile, p in (0, 1]: the value at rank ceil(p * count). 0 when empty.
  int64_t Quantile(double p) const;
  uint64_t count() const { return count_; }
  int64_t min() const { return min_; }  // count() > 0
  int64_t max() const { return max_; }
  bool exact() const { return exact_; }
  double relative_error() const { return exact_ ? 0.0 : kRelativeError; }

  void ToProto(proto::PartialQuantiles* out) const;
  // Any message; check Valid() before use (partial files come from outside).
  static DurationQuantiles FromProto(const proto::PartialQuantiles& in);
  bool Valid() const;

 private:
  void ToSketch();
  void AddToBucket(int64_t ns, uint64_t n);
  uint64_t& BucketAt(int32_t index);
  static int32_t BucketOf(int64_t ns);
  static int64_t BucketValue(int32_t index);

  uint64_t count_ = 0;
  int64_t min_ = 0, max_ = 0;  // valid when count_ > 0
  bool exact_ = true;
  std::vector<int64_t> values_;    // exact_: every duration, unsorted
  uint64_t zeros_ = 0;             // sketch: durations of 0 ns
  int32_t offset_ = 0;             // sketch: index of buckets_[0]
  std::vector<uint64_t> buckets_;  // sketch: counts per bucket
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_QUANTILES_H_
