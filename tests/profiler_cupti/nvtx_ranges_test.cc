#include "profiler/cupti/nvtx_ranges.h"

#include "gtest/gtest.h"

namespace qprof::profiler::cupti {
namespace {

TEST(NvtxRangeIndexTest, EndBeforeStartInRecordOrderStillPairs) {
  NvtxRangeIndex index;
  index.OnEnd(5, 200);  // END record arrived in an earlier buffer
  index.OnStart(5, "step 0", 100, 1, 7);
  index.Finish(1000);
  EXPECT_EQ(index.PathAt(7, 150), "step 0");
  EXPECT_EQ(index.PathAt(7, 200), "");  // end is exclusive
  EXPECT_EQ(index.PathAt(7, 99), "");
  EXPECT_EQ(index.unclosed(), 0u);
}

TEST(NvtxRangeIndexTest, UnclosedAndUnmatched) {
  NvtxRangeIndex index;
  index.OnStart(1, "decode", 100, 1, 7);
  index.OnEnd(99, 300);
  index.Finish(5000);
  EXPECT_EQ(index.unclosed(), 1u);
  EXPECT_EQ(index.unmatched_ends(), 1u);
  EXPECT_EQ(index.PathAt(7, 4999), "decode");
  EXPECT_EQ(index.PathAt(8, 200), "");  // other thread
}

TEST(NvtxRangeIndexTest, ManyClosedSiblingsThenParentLookup) {
  // 43 closed "layer" siblings inside "step"; a launch after the last layer popped but
  // inside "step" must resolve to "step" via the parent chain.
  NvtxRangeIndex index;
  index.OnStart(1000, "step 1", 0, 1, 3);
  for (int i = 0; i < 43; ++i) {
    index.OnStart(i, "layer " + std::to_string(i), 10 + i * 10, 1, 3);
    index.OnEnd(i, 15 + i * 10);
  }
  index.OnEnd(1000, 10000);
  index.Finish(10000);
  EXPECT_EQ(index.PathAt(3, 12), "step 1/layer 0");
  EXPECT_EQ(index.PathAt(3, 17), "step 1");
  EXPECT_EQ(index.PathAt(3, 432), "step 1/layer 42");
  EXPECT_EQ(index.PathAt(3, 9000), "step 1");
  auto all = index.AllRanges();
  ASSERT_EQ(all.size(), 44u);
  EXPECT_EQ(all[0]->depth, 0u);
  EXPECT_EQ(all[1]->depth, 1u);
}

}  // namespace
}  // namespace qprof::profiler::cupti
