// The streaming aggregation's parts against plain oracles: the quantile sketch's stated
// error bound, interval unions against sort-and-sweep, merge equalities.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "analysis/aggregate/interval_union.h"
#include "analysis/aggregate/quantiles.h"
#include "analysis/aggregate/timeline_sample.h"
#include "analysis/aggregate/work_list.h"
#include "gtest/gtest.h"

namespace qprof::aggregate {
namespace {

int64_t NearestRank(std::vector<int64_t> v, double p) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p * static_cast<double>(v.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

std::vector<int64_t> Durations(int kind, size_t n, std::mt19937_64& rng) {
  std::vector<int64_t> v(n);
  std::lognormal_distribution<double> logn(std::log(20000.0), 1.5);
  std::uniform_int_distribution<int64_t> uni(0, 5000);
  for (size_t i = 0; i < n; ++i) {
    switch (kind) {
      case 0: v[i] = static_cast<int64_t>(logn(rng)); break;         // a long tail
      case 1: v[i] = uni(rng); break;                                // zeros included
      case 2: v[i] = (i % 3 == 0) ? 700 : 1'000'000'000 + uni(rng); break;  // two modes
      default: v[i] = static_cast<int64_t>(i % 977) * 13 + 1; break;
    }
  }
  return v;
}

TEST(DurationQuantiles, ExactUpToItsLimit) {
  std::mt19937_64 rng(1);
  std::vector<int64_t> v = Durations(0, DurationQuantiles::kExactLimit, rng);
  DurationQuantiles q;
  for (int64_t d : v) q.Add(d);
  EXPECT_TRUE(q.exact());
  EXPECT_EQ(q.relative_error(), 0.0);
  for (double p : {0.01, 0.5, 0.9, 0.999, 1.0}) EXPECT_EQ(q.Quantile(p), NearestRank(v, p)) << p;
}

// The stated bound: |sketch - exact| <= a * exact (plus half a nanosecond of rounding).
TEST(DurationQuantiles, SketchStaysWithinItsRelativeErrorBound) {
  std::mt19937_64 rng(2);
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<int64_t> v = Durations(kind, 200000, rng);
    DurationQuantiles q;
    for (int64_t d : v) q.Add(d);
    ASSERT_FALSE(q.exact());
    EXPECT_EQ(q.relative_error(), DurationQuantiles::kRelativeError);
    EXPECT_EQ(q.count(), v.size());
    EXPECT_EQ(q.min(), *std::min_element(v.begin(), v.end()));
    EXPECT_EQ(q.max(), *std::max_element(v.begin(), v.end()));
    for (double p : {0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0}) {
      const double exact = static_cast<double>(NearestRank(v, p));
      const double got = static_cast<double>(q.Quantile(p));
      EXPECT_LE(std::abs(got - exact), DurationQuantiles::kRelativeError * exact + 0.5)
          << "kind " << kind << " p " << p << ": " << got << " vs " << exact;
    }
  }
}

// However the durations are split, merging gives the same answer as one object.
TEST(DurationQuantiles, MergeEqualsOneObject) {
  std::mt19937_64 rng(3);
  for (size_t n : {size_t{100}, DurationQuantiles::kExactLimit + 1, size_t{50000}}) {
    std::vector<int64_t> v = Durations(0, n, rng);
    DurationQuantiles whole;
    for (int64_t d : v) whole.Add(d);
    std::vector<DurationQuantiles> parts(7);
    for (size_t i = 0; i < v.size(); ++i) parts[(i * 31) % parts.size()].Add(v[i]);
    DurationQuantiles merged;
    for (const auto& p : parts) merged.Merge(p);
    EXPECT_EQ(merged.exact(), whole.exact()) << n;
    for (double p : {0.5, 0.9}) EXPECT_EQ(merged.Quantile(p), whole.Quantile(p)) << n;
    proto::PartialQuantiles pq;
    merged.ToProto(&pq);
    DurationQuantiles back = DurationQuantiles::FromProto(pq);
    EXPECT_TRUE(back.Valid());
    EXPECT_EQ(back.Quantile(0.5), whole.Quantile(0.5));
  }
}

uint64_t SortAndSweep(std::vector<std::pair<int64_t, int64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  uint64_t total = 0;
  int64_t cs = iv[0].first, ce = iv[0].second;
  for (size_t i = 1; i < iv.size(); ++i) {
    if (iv[i].first > ce) {
      total += static_cast<uint64_t>(ce - cs);
      cs = iv[i].first;
      ce = iv[i].second;
    } else {
      ce = std::max(ce, iv[i].second);
    }
  }
  return total + static_cast<uint64_t>(ce - cs);
}

// Kernels of several streams: in order per stream, interleaved, with gaps and overlaps.
std::vector<std::pair<int64_t, int64_t>> Kernels(size_t n, std::mt19937_64& rng) {
  std::vector<std::pair<int64_t, int64_t>> out;
  std::vector<int64_t> t(4, 0);
  std::uniform_int_distribution<int64_t> gap(0, 300), dur(1, 1000);
  for (size_t i = 0; i < n; ++i) {
    int64_t& s = t[i % 4];
    s += gap(rng);
    int64_t e = s + dur(rng);
    out.emplace_back(s, e);
    s = e;
  }
  return out;
}

// Spans of times anywhere in int64 (a fuzzed partial profile had first_ns = INT64_MIN and
// last_ns = 1: the signed difference overflowed).
TEST(SpanNs, WholeInt64RangeWithoutOverflow) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(SpanNs(kMin, 1), (uint64_t{1} << 63) + 1);
  EXPECT_EQ(SpanNs(kMin, kMax), ~uint64_t{0});
  EXPECT_EQ(SpanNs(-5, 7), 12u);
  EXPECT_EQ(SpanNs(7, 7), 0u);
  EXPECT_EQ(SpanNs(9, 3), 0u);
}

TEST(IntervalUnion, ExactWhenInOrderOrNearlySo) {
  std::mt19937_64 rng(4);
  std::vector<std::pair<int64_t, int64_t>> iv = Kernels(100000, rng);  // past kMaxPieces
  // Shuffle within small windows: out of order, but by far less than the folding window.
  for (size_t i = 0; i + 64 <= iv.size(); i += 64) {
    std::shuffle(iv.begin() + static_cast<std::ptrdiff_t>(i),
                 iv.begin() + static_cast<std::ptrdiff_t>(i + 64), rng);
  }
  IntervalUnion u;
  for (auto [s, e] : iv) u.Add(s, e);
  EXPECT_EQ(u.length(), SortAndSweep(iv));
  EXPECT_EQ(u.late_bound_ns(), 0u);
  EXPECT_EQ(u.count(), iv.size());
}

// Far out of order: not exact any more, but the stated bound holds.
TEST(IntervalUnion, FarOutOfOrderStaysWithinItsBound) {
  std::mt19937_64 rng(5);
  // One stream with gaps: every kernel its own piece, so the folding window fills.
  std::vector<std::pair<int64_t, int64_t>> iv;
  std::uniform_int_distribution<int64_t> gap(1, 2000), dur(1, 1000);
  int64_t t = 0;
  for (int i = 0; i < 80000; ++i) {
    t += gap(rng);
    iv.emplace_back(t, t + dur(rng));
    t = iv.back().second;
    if (i % 5 == 0) iv.emplace_back(t - 10, t + 50);  // some overlap too
  }
  std::shuffle(iv.begin(), iv.end(), rng);
  IntervalUnion u;
  for (auto [s, e] : iv) u.Add(s, e);
  const uint64_t truth = SortAndSweep(iv);
  EXPECT_LE(u.length(), truth);
  EXPECT_GE(u.length() + u.late_bound_ns(), truth);
  EXPECT_GT(u.late_bound_ns(), 0u);
}

// The gaps between merged intervals, by sort and sweep, into GapStats.
GapStats SweepGaps(std::vector<std::pair<int64_t, int64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  GapStats g;
  int64_t ce = iv[0].second;
  for (size_t i = 1; i < iv.size(); ++i) {
    if (iv[i].first > ce) g.Add(static_cast<uint64_t>(iv[i].first - ce));
    ce = std::max(ce, iv[i].second);
  }
  return g;
}

// Gaps between kernels, nearly in order and past kMaxPieces (so folded gaps and live ones
// both count): the same counts, times and buckets as a sort and sweep, and they sum to
// span - busy; a union read back from its figures keeps them.
TEST(IntervalUnion, GapsEqualSortAndSweepAcrossFolds) {
  std::mt19937_64 rng(6);
  std::vector<std::pair<int64_t, int64_t>> iv;
  std::uniform_int_distribution<int64_t> gap(1, 400'000), dur(1, 50'000);
  int64_t t = 0;
  for (int i = 0; i < 70000; ++i) {  // every kernel its own piece: folds four times
    t += gap(rng);
    iv.emplace_back(t, t + dur(rng));
    t = iv.back().second;
  }
  for (size_t i = 0; i + 32 <= iv.size(); i += 32) {
    std::shuffle(iv.begin() + static_cast<std::ptrdiff_t>(i),
                 iv.begin() + static_cast<std::ptrdiff_t>(i + 32), rng);
  }
  IntervalUnion u;
  for (auto [s, e] : iv) u.Add(s, e);
  ASSERT_EQ(u.late_bound_ns(), 0u);
  const GapStats want = SweepGaps(iv);
  const GapStats got = u.gaps();
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.total_ns, want.total_ns);
  EXPECT_EQ(got.max_ns, want.max_ns);
  EXPECT_EQ(got.bucket_count, want.bucket_count);
  EXPECT_EQ(got.bucket_ns, want.bucket_ns);
  EXPECT_EQ(got.total_ns, static_cast<uint64_t>(u.last() - u.first()) - u.length());
  EXPECT_GT(got.bucket_count[1], 0u);  // the buckets are exercised, not all in one
  EXPECT_GT(got.bucket_count[2], 0u);
  IntervalUnion back = IntervalUnion::FromFigures(u.length(), u.late_bound_ns(), u.count(),
                                                  u.first(), u.last(), u.gaps());
  EXPECT_TRUE(back.gaps() == got);
}

TEST(WorkList, SumIsInLaunchOrderUntilTheLimitThenByDistinctWork) {
  WorkList w;
  for (int i = 0; i < 10; ++i) w.Add({100.0 * i, 0, "simt_fp32"});
  double sum = w.Sum([](const LaunchWork& x) { return x.bytes / 3; });
  double plain = 0;
  for (int i = 0; i < 10; ++i) plain += 100.0 * i / 3;
  EXPECT_EQ(sum, plain);  // the very same additions, in the same order
  WorkList big, a, b;
  for (size_t i = 0; i < WorkList::kExactLimit + 10; ++i) {
    LaunchWork x{static_cast<double>(i % 5), 1, "tensor_bf16"};
    big.Add(x);
    (i % 2 ? a : b).Add(x);
  }
  a.Merge(b);
  auto roof = [](const LaunchWork& x) { return x.bytes + x.flops; };
  EXPECT_DOUBLE_EQ(a.Sum(roof), big.Sum(roof));
  EXPECT_FALSE(big.approximate());
  EXPECT_EQ(WorkList().Sum(roof), 0.0);
  WorkList no_pipe;
  no_pipe.Add({1, 1, "x"});
  EXPECT_LT(no_pipe.Sum([](const LaunchWork&) { return -1.0; }), 0);
}

TEST(TimelineSample, KeepsEveryStepWhileItFitsThenAStrideIndependentOfTheSplit) {
  TimelineSample::Names names = {"k0", "k1"};
  auto launch = [](int64_t start, uint32_t trace) {
    return SampledLaunch{start, 10, static_cast<uint32_t>(start % 2), trace, 0, 7, "decode"};
  };
  TimelineSample small;
  for (int64_t s = 0; s < 100; ++s) small.Add(s, launch(s, 0), names);
  EXPECT_EQ(small.stride(), 1);
  EXPECT_EQ(small.KeptSteps().size(), 100u);
  // 2,000 steps of 20 kernels: 40,000 launches, over the budget.
  TimelineSample whole, left, right;
  for (int64_t step = 0; step < 2000; ++step) {
    for (int k = 0; k < 20; ++k) {
      whole.Add(step, launch(step * 100 + k, 0), names);
      (step % 3 ? left : right).Add(step, launch(step * 100 + k, 0), names);
    }
  }
  EXPECT_GT(whole.stride(), 1);
  left.Merge(std::move(right), {0, 1}, 0, names);
  EXPECT_EQ(left.stride(), whole.stride());
  EXPECT_EQ(left.KeptSteps(), whole.KeptSteps());
  for (int64_t s : whole.KeptSteps()) {
    auto a = whole.Step(s, names), b = left.Step(s, names);
    ASSERT_TRUE(a && b);
    ASSERT_EQ(a->size(), b->size());
    for (size_t i = 0; i < a->size(); ++i) EXPECT_EQ((*a)[i].start_ns, (*b)[i].start_ns);
  }
}

TEST(TimelineSample, AStepKeepsItsFirstLaunchesByStartThenName) {
  TimelineSample::Names names = {"b", "a"};
  TimelineSample t;
  for (int64_t i = TimelineSample::kMaxPerStep + 100; i-- > 0;) {
    t.Add(3, SampledLaunch{i / 2, 1, static_cast<uint32_t>(i % 2), 0, 0, 0, ""}, names);
  }
  auto v = t.Step(3, names);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), TimelineSample::kMaxPerStep);
  EXPECT_EQ((*v)[0].start_ns, 0);
  EXPECT_EQ(names[(*v)[0].group], "a");  // same start: "a" before "b"
  EXPECT_EQ(v->back().start_ns, static_cast<int64_t>(TimelineSample::kMaxPerStep / 2 - 1));
}

}  // namespace
}  // namespace qprof::aggregate

namespace qprof::aggregate {
namespace {

// Gap causes by sort and sweep: intervals sorted by (start, launch), so the first of each
// merged piece is the kernel that ended the gap before it (the earlier launch on a tie), and
// HTA's rule (host wait: launched after the gap began; kernel wait: under 30 ns; other) is
// applied to it. Two streams overlap, some kernels have no launch time, and the union folds.
TEST(TaggedIntervalUnion, GapCausesEqualSortAndSweepAcrossFolds) {
  struct Iv {
    int64_t start, end, launch;
  };
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> gap(1, 60'000), dur(1, 20'000), lead(0, 90'000);
  std::uniform_int_distribution<int> pick(0, 9);
  std::vector<Iv> iv;
  int64_t t = 0;
  for (int i = 0; i < 60000; ++i) {
    t += pick(rng) == 0 ? 10 : gap(rng);  // a few gaps under HTA's 30 ns
    const int64_t end = t + dur(rng);
    const int p = pick(rng);
    const int64_t launch = p == 0 ? GapStats::kNoLaunch : t - lead(rng);  // before or after
    iv.push_back({t, end, launch});
    if (p == 1) iv.push_back({t, end - 1, t - 100'000});  // same start, earlier launch
    if (p == 2) iv.push_back({end - 5, end + 3'000, end - 7});  // another stream overlapping
    t = end;
  }
  std::vector<Iv> shuffled = iv;
  for (size_t i = 0; i + 16 <= shuffled.size(); i += 16) {
    std::shuffle(shuffled.begin() + static_cast<std::ptrdiff_t>(i),
                 shuffled.begin() + static_cast<std::ptrdiff_t>(i + 16), rng);
  }
  TaggedIntervalUnion u;
  for (const Iv& x : shuffled) u.Add(x.start, x.end, x.launch);
  ASSERT_EQ(u.late_bound_ns(), 0u);
  std::sort(iv.begin(), iv.end(), [](const Iv& a, const Iv& b) {
    return a.start != b.start ? a.start < b.start : a.launch < b.launch;
  });
  GapStats want;
  int64_t ce = iv[0].end;
  for (size_t i = 1; i < iv.size(); ++i) {
    if (iv[i].start > ce) {
      const uint64_t g = static_cast<uint64_t>(iv[i].start - ce);
      GapStats::Cause c = iv[i].launch == GapStats::kNoLaunch ? GapStats::kNoLaunchTime
                          : iv[i].launch > ce                 ? GapStats::kHostWait
                          : g < 30                            ? GapStats::kKernelWait
                                                              : GapStats::kOther;
      want.Add(g, c);
    }
    ce = std::max(ce, iv[i].end);
  }
  const GapStats got = u.gaps();
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.cause_count, want.cause_count);
  EXPECT_EQ(got.cause_ns, want.cause_ns);
  for (int c = 0; c < GapStats::kCauses; ++c) EXPECT_GT(got.cause_count[c], 0u) << c;
}

}  // namespace
}  // namespace qprof::aggregate
