// MatchRanges (range_match.h) on ranges written here: which launch each range measured,
// and what is refused. Expected assignments are spelled out per test from the launches
// and the ranges' counts the test makes, never from the matcher's output.
#include "profiler/cupti/range_match.h"

#include <cmath>

#include "gtest/gtest.h"

namespace qprof::profiler::cupti {
namespace {

constexpr double kNaN = NAN;

RangeShape Measured(uint64_t ctas, uint64_t threads_per_cta) {
  return RangeShape{static_cast<double>(ctas), static_cast<double>(ctas * threads_per_cta)};
}

GraphKernels Chain(const std::vector<std::tuple<std::string, uint64_t, uint64_t>>& nodes) {
  GraphKernels g;
  uint64_t id = 100;
  for (const auto& [name, ctas, threads] : nodes) {
    GraphKernelNode n;
    n.node_id = ++id;
    n.kernel = name;
    n.ctas = ctas;
    n.threads = threads;
    n.stream = 7;
    n.capture_correlation = 1;
    g.nodes.push_back(n);
  }
  g.order_known = true;
  return g;
}

TEST(RangeMatchTest, EagerLaunchesInOrderAreNamed) {
  LaunchSequence s(16);
  s.AddLaunch("a", {4, 128}, 1);
  s.AddLaunch("b", {8, 256}, 1);
  const RangeMatch m = MatchRanges(s, 2, 0, {Measured(4, 128), Measured(8, 256)});
  EXPECT_EQ(m.launch_of_range, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(m.named, 2u);
  EXPECT_EQ(m.checked_by_threads, 2u);
  EXPECT_TRUE(m.reasons.empty());
}

// The second identity check: one grid, two blocks. The CTA count alone would accept.
TEST(RangeMatchTest, EqualGridsWithOtherBlocksAreCaughtByTheThreadCount) {
  LaunchSequence s(16);
  s.AddLaunch("a", {4, 128}, 1);
  s.AddLaunch("b", {4, 256}, 1);
  const RangeMatch m = MatchRanges(s, 2, 0, {Measured(4, 256), Measured(4, 128)});
  EXPECT_TRUE(m.context_refused);
  EXPECT_EQ(m.named, 0u);
  ASSERT_FALSE(m.reasons.empty());
  EXPECT_NE(m.reasons[0].find("out of step"), std::string::npos) << m.reasons[0];
}

// A chip without the thread counter: the CTA count alone must catch ranges out of step.
TEST(RangeMatchTest, WithoutTheThreadCounterTheCtaCountStillChecks) {
  LaunchSequence s(16);
  s.AddLaunch("a", {4, 128}, 1);
  s.AddLaunch("b", {8, 128}, 1);
  const RangeMatch m = MatchRanges(s, 2, 0, {{8, kNaN}, {4, kNaN}});
  EXPECT_TRUE(m.context_refused);
  EXPECT_EQ(m.named, 0u);
  EXPECT_EQ(m.checked_by_threads, 0u);
}

// A kernel launched inside a library call, measuring like the launch after it: every
// range fits its launch in order, but one is left over, so the order cannot be trusted
// (range 1 may be the library's, and launch b's range the last one).
TEST(RangeMatchTest, ALeftoverRangeRefusesTheContextEvenWhenEveryRangeFits) {
  LaunchSequence s(16);
  s.AddLaunch("a", {4, 128}, 1);
  s.AddLaunch("b", {8, 128}, 1);
  const RangeMatch m =
      MatchRanges(s, 3, 0, {Measured(4, 128), Measured(8, 128), Measured(8, 128)});
  EXPECT_TRUE(m.context_refused);
  EXPECT_EQ(m.named, 0u);
  ASSERT_FALSE(m.reasons.empty());
  EXPECT_NE(m.reasons[0].find("3 ranges (0 of them dropped) but 2 launches"), std::string::npos)
      << m.reasons[0];
}

// Two threads, same grid and block, other kernels: no counter can tell their ranges
// apart, so both are refused; their neighbours keep theirs.
TEST(RangeMatchTest, IndistinguishableNeighboursFromTwoThreadsAreRefused) {
  LaunchSequence s(16);
  s.AddLaunch("before", {2, 64}, 1);
  s.AddLaunch("a", {1, 128}, 1);
  s.AddLaunch("b", {1, 128}, 2);
  s.AddLaunch("after", {3, 64}, 1);
  const RangeMatch m = MatchRanges(
      s, 4, 0, {Measured(2, 64), Measured(1, 128), Measured(1, 128), Measured(3, 64)});
  EXPECT_EQ(m.launch_of_range, (std::vector<int64_t>{0, -1, -1, 3}));
  EXPECT_EQ(m.neighbours_refused, 2u);
  // One thread: the order is certain, nothing refused.
  LaunchSequence one(16);
  one.AddLaunch("a", {1, 128}, 1);
  one.AddLaunch("b", {1, 128}, 1);
  EXPECT_EQ(MatchRanges(one, 2, 0, {Measured(1, 128), Measured(1, 128)}).named, 2u);
}

// A graph launch that made one range for the whole launch, between eager launches: its
// kernels are refused, the eager ranges stay.
TEST(RangeMatchTest, AGraphLaunchThatDoesNotFitRefusesItsKernelsOnly) {
  const GraphKernels g = Chain({{"g0", 2, 32}, {"g1", 3, 32}, {"g2", 5, 32}});
  LaunchSequence s(64);
  s.AddLaunch("e0", {7, 64}, 1);
  s.AddGraphLaunch(&g, 1, "graph launch 1");
  s.AddLaunch("e1", {9, 64}, 1);
  // One range for the graph launch: 2 + 3 + 5 CTAs, 10 x 32 threads.
  const RangeMatch m = MatchRanges(s, 3, 0, {Measured(7, 64), Measured(10, 32), Measured(9, 64)});
  EXPECT_EQ(m.launch_of_range, (std::vector<int64_t>{0, -1, 4}));
  EXPECT_EQ(m.graph_launches_refused, 1u);
  EXPECT_EQ(m.graph.ranges_expected, 3u);
  EXPECT_EQ(m.graph.ranges_matched, 1u);
  EXPECT_EQ(m.eager.ranges_matched, 2u);
  ASSERT_FALSE(m.reasons.empty());
  EXPECT_NE(m.reasons[0].find("one range for the whole graph launch"), std::string::npos);
  // No range at all for it.
  const RangeMatch none = MatchRanges(s, 2, 0, {Measured(7, 64), Measured(9, 64)});
  EXPECT_EQ(none.launch_of_range, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(none.graph_launches_refused, 1u);
  // One per node, in creation order: every kernel named.
  const RangeMatch per_node = MatchRanges(
      s, 5, 0,
      {Measured(7, 64), Measured(2, 32), Measured(3, 32), Measured(5, 32), Measured(9, 64)});
  EXPECT_EQ(per_node.launch_of_range, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(RangeMatchTest, AGraphLaunchInAnotherOrderIsRefusedAlone) {
  const GraphKernels g = Chain({{"g0", 2, 32}, {"g1", 3, 32}});
  LaunchSequence s(64);
  s.AddLaunch("e0", {7, 64}, 1);
  s.AddGraphLaunch(&g, 1, "graph launch 1");
  s.AddGraphLaunch(&g, 1, "graph launch 2");
  const RangeMatch m = MatchRanges(
      s, 5, 0, {Measured(7, 64), Measured(3, 32), Measured(2, 32), Measured(2, 32), Measured(3, 32)});
  EXPECT_EQ(m.launch_of_range, (std::vector<int64_t>{0, -1, -1, 3, 4}));
  EXPECT_EQ(m.graph_launches_refused, 1u);
}

// A kernel with a range and no callback (inside a library): the whole context is
// refused, as before graph launches were matched apart.
TEST(RangeMatchTest, AnEagerMismatchRefusesTheContext) {
  LaunchSequence s(16);
  s.AddLaunch("a", {4, 128}, 1);
  s.AddLaunch("b", {8, 128}, 1);
  const RangeMatch m = MatchRanges(s, 3, 0, {Measured(4, 128), Measured(1, 32), Measured(8, 128)});
  EXPECT_TRUE(m.context_refused);
  EXPECT_EQ(m.named, 0u);
  ASSERT_FALSE(m.reasons.empty());
  EXPECT_NE(m.reasons[0].find("3 ranges (0 of them dropped) but 2 launches"), std::string::npos)
      << m.reasons[0];
}

// Ranges past the counter data image's capacity are dropped by CUPTI; the launches past
// the sequence's capacity are only counted. What was stored lines up.
TEST(RangeMatchTest, DroppedRangesAndLaunchesPastTheLimit) {
  LaunchSequence s(2);
  for (int i = 0; i < 4; ++i) s.AddLaunch(std::string("k").append(std::to_string(i)), {uint64_t(i + 1), 32}, 1);
  EXPECT_EQ(s.past_limit(), 2u);
  const RangeMatch m = MatchRanges(s, 2, 2, {Measured(1, 32), Measured(2, 32)});
  EXPECT_EQ(m.launch_of_range, (std::vector<int64_t>{0, 1}));
}

TEST(RangeMatchTest, NoCountersMeansOrderAndCountOnly) {
  LaunchSequence s(4);
  s.AddLaunch("a", {4, 128}, 1);
  s.AddLaunch("b", {8, 128}, 1);
  const RangeMatch m = MatchRanges(s, 2, 0, {{kNaN, kNaN}, {kNaN, kNaN}});
  EXPECT_EQ(m.named, 2u);
  EXPECT_EQ(m.checked_by_ctas, 0u);
}

// A graph whose instantiation was not seen: how many ranges it made is found from the
// eager launches after it, when only one count fits.
TEST(RangeMatchTest, AnUnknownGraphLaunchIsBoundedByTheLaunchesAfterIt) {
  LaunchSequence s(16);
  s.AddLaunch("e0", {7, 64}, 1);
  s.AddGraphLaunch(nullptr, 1, "graph launch 1");
  s.AddLaunch("e1", {9, 64}, 1);
  s.AddLaunch("e2", {11, 64}, 1);
  const RangeMatch m = MatchRanges(
      s, 5, 0, {Measured(7, 64), Measured(1, 32), Measured(2, 32), Measured(9, 64), Measured(11, 64)});
  EXPECT_EQ(m.launch_of_range, (std::vector<int64_t>{0, -1, -1, 1, 2}));
  ASSERT_FALSE(m.reasons.empty());
  EXPECT_NE(m.reasons[0].find("instantiation was not seen"), std::string::npos) << m.reasons[0];
}

}  // namespace
}  // namespace qprof::profiler::cupti
