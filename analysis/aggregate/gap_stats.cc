#include "analysis/aggregate/gap_stats.h"

#include <algorithm>

namespace qprof::aggregate {

std::string GapStats::BucketLabel(int i) {
  static const char* kLabels[kBuckets] = {"< 10 us", "10-100 us", "0.1-1 ms",
                                          "1-10 ms", "10-100 ms", ">= 100 ms"};
  return kLabels[i];
}

std::string GapStats::CauseName(int cause) {
  static const char* kNames[kCauses] = {"host_wait", "kernel_wait", "other", "no_launch_time"};
  return kNames[cause];
}

GapStats::Cause GapStats::CauseOf(int64_t prev_end_ns, uint64_t gap_ns, int64_t next_launch_ns) {
  if (next_launch_ns == kNoLaunch) return kNoLaunchTime;
  // HTA: host wait when the kernel's runtime call started after the previous kernel's end.
  if (next_launch_ns > prev_end_ns) return kHostWait;
  return gap_ns < kKernelWaitNs ? kKernelWait : kOther;
}

void GapStats::Add(uint64_t gap_ns, Cause cause) {
  if (gap_ns == 0) return;
  int b = 0;
  while (b < kBuckets - 1 && gap_ns >= kEdgesNs[b]) ++b;
  ++count;
  total_ns += gap_ns;
  max_ns = std::max(max_ns, gap_ns);
  ++bucket_count[b];
  bucket_ns[b] += gap_ns;
  ++cause_count[cause];
  cause_ns[cause] += gap_ns;
}

void GapStats::Merge(const GapStats& o) {
  count += o.count;
  total_ns += o.total_ns;
  max_ns = std::max(max_ns, o.max_ns);
  for (int i = 0; i < kBuckets; ++i) {
    bucket_count[i] += o.bucket_count[i];
    bucket_ns[i] += o.bucket_ns[i];
  }
  for (int i = 0; i < kCauses; ++i) {
    cause_count[i] += o.cause_count[i];
    cause_ns[i] += o.cause_ns[i];
  }
}

}  // namespace qprof::aggregate
