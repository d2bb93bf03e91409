// GraphTracker (graph_tracker.h): clones belong to the executable graph whose handle
// announced them, whatever the numbers of graph ids and executable-graph ids.
#include "profiler/cupti/graph_tracker.h"

#include <thread>

#include "gtest/gtest.h"

namespace qprof::profiler::cupti {
namespace {

GraphKernelNode Captured(uint64_t id, const std::string& kernel) {
  GraphKernelNode n;
  n.node_id = id;
  n.kernel = kernel;
  n.ctas = 4;
  n.threads = 128;
  n.stream = 7;
  n.capture_correlation = 1;
  return n;
}

// Graph 1 (three kernels) and graph 2 (two) are captured; graph 2 is instantiated as an
// executable graph whose id is 1 too, and its clones live in "graph 1" (what CUPTI is
// seen to report). Its replays must expect graph 2's two kernels, not graph 1's three.
TEST(GraphTrackerTest, AnExecutableGraphIdEqualToAGraphIdTakesOnlyItsOwnClones) {
  GraphTracker t;
  for (uint64_t n : {11, 12, 13}) t.NodeCaptured(1, Captured(n, std::string("a").append(std::to_string(n))));
  for (uint64_t n : {21, 22}) t.NodeCaptured(2, Captured(n, std::string("b").append(std::to_string(n))));
  const void* exec = reinterpret_cast<const void*>(0x5000);
  t.NodeCloned(31, 21);
  t.NodeCloned(32, 22);
  t.ExecCreated(exec, 2);
  GraphKernels g;
  ASSERT_TRUE(t.KernelsOf(exec, &g));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].node_id, 31u);
  EXPECT_EQ(g.nodes[0].kernel, "b21");
  EXPECT_EQ(g.nodes[1].kernel, "b22");
  EXPECT_TRUE(g.order_known);
}

TEST(GraphTrackerTest, ClonesFollowTheirOriginalsOrderAndStayWithTheirThread) {
  GraphTracker t;
  for (uint64_t n : {11, 12, 13}) t.NodeCaptured(1, Captured(n, std::string("k").append(std::to_string(n))));
  // Another thread instantiates something meanwhile: its clones are not ours.
  std::thread([&t] {
    t.NodeCloned(99, 11);
    t.ExecCreated(reinterpret_cast<const void*>(0x9000), 1);
  }).join();
  t.NodeCloned(43, 13);
  t.NodeCloned(41, 11);
  t.NodeCloned(42, 12);
  const void* exec = reinterpret_cast<const void*>(0x6000);
  t.ExecCreated(exec, 1);
  GraphKernels g;
  ASSERT_TRUE(t.KernelsOf(exec, &g));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].node_id, 41u);
  EXPECT_EQ(g.nodes[1].node_id, 42u);
  EXPECT_EQ(g.nodes[2].node_id, 43u);
}

TEST(GraphTrackerTest, NodesFromSeveralStreamsHaveNoKnownOrder) {
  GraphTracker t;
  t.NodeCaptured(1, Captured(11, "a"));
  GraphKernelNode other = Captured(12, "b");
  other.stream = 9;  // forked onto another stream inside the capture
  t.NodeCaptured(1, other);
  const void* exec = reinterpret_cast<const void*>(0x7000);
  t.ExecCreated(exec, 1);  // no clones announced: the graph's own nodes
  GraphKernels g;
  ASSERT_TRUE(t.KernelsOf(exec, &g));
  EXPECT_EQ(g.nodes.size(), 2u);
  EXPECT_FALSE(g.order_known);
  EXPECT_FALSE(t.KernelsOf(reinterpret_cast<const void*>(0x8000), &g));  // never seen
}

}  // namespace
}  // namespace qprof::profiler::cupti
