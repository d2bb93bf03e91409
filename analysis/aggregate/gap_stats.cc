#include "analysis/aggregate/gap_stats.h"

#include <algorithm>

namespace qprof::aggregate {

std::string GapStats::BucketLabel(int i) {
  static const char* kLabels[kBuckets] = {"< 10 us", "10-100 us", "0.1-1 ms",
                                          "1-10 ms", "10-100 ms", ">= 100 ms"};
  return kLabels[i];
}

void GapStats::Add(uint64_t gap_ns) {
  if (gap_ns == 0) return;
  int b = 0;
  while (b < kBuckets - 1 && gap_ns >= kEdgesNs[b]) ++b;
  ++count;
  total_ns += gap_ns;
  max_ns = std::max(max_ns, gap_ns);
  ++bucket_count[b];
  bucket_ns[b] += gap_ns;
}

void GapStats::Merge(const GapStats& o) {
  count += o.count;
  total_ns += o.total_ns;
  max_ns = std::max(max_ns, o.max_ns);
  for (int i = 0; i < kBuckets; ++i) {
    bucket_count[i] += o.bucket_count[i];
    bucket_ns[i] += o.bucket_ns[i];
  }
}

}  // namespace qprof::aggregate
