// GapStats: the idle gaps between kernels on one device (inside its span), as counts and
// times in fixed buckets of length and by cause, so they merge exactly and never grow with
// the trace.
//
// The gaps are those of the device's interval union (interval_union.h): a gap is final once
// the pieces on both sides of it are folded, and the union's live pieces add theirs when
// asked. Short gaps between back-to-back kernels are the launch overhead the GPU cannot
// hide; many short gaps that add up to most of the span mean the host could not launch
// kernels fast enough (launch-bound), a few long ones mean the GPU waited for something else
// (data loading, synchronisation, the host's own work).
//
// Causes follow HTA's idle-time breakdown (HolisticTraceAnalysis,
// hta/analyzers/breakdown_analysis.py `_analyze_idle_time_for_stream`, and the docstring of
// `TraceAnalysis.get_idle_time_breakdown` in hta/trace_analysis.py), applied to the kernel
// that ends the gap:
//   host wait    its launch call began after the previous kernel ended: the GPU had nothing
//                queued because the host had not launched it yet;
//   kernel wait  it was launched in time and the gap is shorter than kKernelWaitNs (HTA's
//                `consecutive_kernel_delay`, 30 ns by default): the overhead of starting
//                back-to-back kernels;
//   other        it was launched in time yet started later: it waited on something else
//                (an event of another stream, a collective's peer, a synchronisation);
//   no launch time  the trace has no launch call for it, so the cause is unknown.
// HTA classifies each stream's gaps; qprof classifies the gaps of the device's union (no
// kernel of any stream running), so the causes add up to the device's idle time.
#ifndef QPROF_ANALYSIS_AGGREGATE_GAP_STATS_H_
#define QPROF_ANALYSIS_AGGREGATE_GAP_STATS_H_

#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace qprof::aggregate {

struct GapStats {
  static constexpr int kBuckets = 6;
  // Upper bounds of the buckets but the last: < 10 us, < 100 us, < 1 ms, < 10 ms, < 100 ms,
  // and >= 100 ms.
  static constexpr std::array<uint64_t, kBuckets - 1> kEdgesNs = {10'000, 100'000, 1'000'000,
                                                                  10'000'000, 100'000'000};
  static std::string BucketLabel(int i);  // "< 10 us", ..., ">= 100 ms"

  enum Cause : int { kHostWait = 0, kKernelWait = 1, kOther = 2, kNoLaunchTime = 3 };
  static constexpr int kCauses = 4;
  static std::string CauseName(int cause);  // "host_wait", "kernel_wait", "other", "no_launch_time"
  // HTA's default `consecutive_kernel_delay`.
  static constexpr uint64_t kKernelWaitNs = 30;
  // The launch time of a kernel whose launch call is unknown.
  static constexpr int64_t kNoLaunch = std::numeric_limits<int64_t>::max();
  // The cause of a gap of `gap_ns` that ended when a kernel launched at `next_launch_ns`
  // (kNoLaunch: unknown) started, after the previous kernel ended at `prev_end_ns`.
  static Cause CauseOf(int64_t prev_end_ns, uint64_t gap_ns, int64_t next_launch_ns);

  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  std::array<uint64_t, kBuckets> bucket_count{};
  std::array<uint64_t, kBuckets> bucket_ns{};
  std::array<uint64_t, kCauses> cause_count{};
  std::array<uint64_t, kCauses> cause_ns{};

  // gap_ns > 0 (0 is ignored).
  void Add(uint64_t gap_ns, Cause cause = kNoLaunchTime);
  void Merge(const GapStats& o);
  bool operator==(const GapStats& o) const = default;
};

}  // namespace qprof::aggregate

#endif  // QPROF_ANALYSIS_AGGREGATE_GAP_STATS_H_
