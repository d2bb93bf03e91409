// GapStats: the idle gaps between kernels on one device (inside its span), as counts and
// times in fixed buckets, so they merge exactly and never grow with the trace.
//
// The gaps are those of the device's interval union (interval_union.h): a gap is final once
// the pieces on both sides of it are folded, and the union's live pieces add theirs when
// asked. Short gaps between back-to-back kernels are the launch overhead the GPU cannot
// hide; many short gaps that add up to most of the span mean the host could not launch
// kernels fast enough (launch-bound), a few long ones mean the GPU waited for something else
// (data loading, synchronisation, the host's own work).
#ifndef QPROF_ANALYSIS_AGGREGATE_GAP_STATS_H_
#define QPROF_ANALYSIS_AGGREGATE_GAP_STATS_H_

#include <array>
#include <cstdint>
#include <string>

namespace qprof::aggregate {

struct GapStats {
  static constexpr int kBuckets = 6;
  // Upper bounds of the buckets but the last: < 10 us, < 100 us, < 1 ms, < 10 ms, < 100 ms,
  // and >= 100 ms.
  static constexpr std::array<uint64_t, kBuckets - 1> kEdgesNs = {10'000, 100'000, 1'000'000,
                                                                  10'000'000, 100'000'000};
  static std::string BucketLabel(int i);  // "< 10 us", ..., ">= 100 ms"

  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  std::array<uint64_t, kBuckets> bucket_count{};
  std::array<uint64_t, kBuckets> bucket_ns{};

  // gap_ns > 0.
  void Add(uint64_t gap_ns);
  void Merge(const GapStats& o);
  bool operator==(const GapStats& o) const = default;
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_GAP_STATS_H_
