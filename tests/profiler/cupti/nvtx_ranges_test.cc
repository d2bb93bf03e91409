#include "profiler/cupti/nvtx_ranges.h"

#include "gtest/gtest.h"

namespace qprof::profiler::cupti {
namespace {

TEST(NvtxTrackerTest, EndBeforeStartInRecordOrderStillPairs) {
  NvtxTracker nvtx;
  nvtx.OnEnd(5, 200);  // END record arrived in an earlier buffer
  EXPECT_EQ(nvtx.unmatched_ends(), 1u);
  nvtx.OnStart(5, "step 0", "", 100, 1, 7);
  EXPECT_EQ(nvtx.PathOn(7, nullptr), "");  // already closed
  std::vector<RangeData> closed;
  nvtx.TakeClosed(&closed);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].start_ns, 100);
  EXPECT_EQ(closed[0].end_ns, 200);
  EXPECT_EQ(nvtx.unmatched_ends(), 0u);
}

TEST(NvtxTrackerTest, UnclosedAreClosedAtTheEndAndCounted) {
  NvtxTracker nvtx;
  nvtx.OnStart(1, "decode", "", 100, 1, 7);
  nvtx.OnStart(2, "step 0", "", 110, 1, 7);
  nvtx.OnEnd(99, 300);
  EXPECT_EQ(nvtx.PathOn(7, nullptr), "decode/step 0");
  EXPECT_EQ(nvtx.PathOn(8, nullptr), "");  // other thread
  nvtx.CloseAll(5000);
  EXPECT_EQ(nvtx.unclosed(), 2u);
  EXPECT_EQ(nvtx.unmatched_ends(), 1u);
  std::vector<RangeData> closed;
  nvtx.TakeClosed(&closed);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].path, "decode/step 0");  // innermost first
  EXPECT_EQ(closed[1].end_ns, 5000);
  EXPECT_EQ(nvtx.open_ranges(), 0u);
}

TEST(NvtxTrackerTest, ManySiblingsThenTheParentAgain) {
  // 43 "layer" siblings inside "step": between them, and after the last, the path is the
  // parent's; only open ranges are kept.
  NvtxTracker nvtx;
  nvtx.OnStart(1000, "step 1", "", 0, 1, 3);
  for (int i = 0; i < 43; ++i) {
    nvtx.OnStart(i, "layer " + std::to_string(i), "", 10 + i * 10, 1, 3);
    if (i == 0) {
      EXPECT_EQ(nvtx.PathOn(3, nullptr), "step 1/layer 0");
    }
    nvtx.OnEnd(i, 15 + i * 10);
    EXPECT_EQ(nvtx.PathOn(3, nullptr), "step 1");
  }
  EXPECT_EQ(nvtx.open_ranges(), 1u);
  nvtx.OnEnd(1000, 10000);
  std::vector<RangeData> closed;
  nvtx.TakeClosed(&closed);
  ASSERT_EQ(closed.size(), 44u);
  EXPECT_EQ(closed[0].depth, 1u);
  EXPECT_EQ(closed[43].depth, 0u);
  EXPECT_EQ(closed[43].path, "step 1");
}

TEST(NvtxTrackerTest, StartEndRangesMayCloseOutOfOrder) {
  NvtxTracker nvtx;
  nvtx.OnStart(1, "a", "", 10, 1, 3);
  nvtx.OnStart(2, "b", "", 20, 1, 3);
  nvtx.OnEnd(1, 30);  // the outer one first
  EXPECT_EQ(nvtx.PathOn(3, nullptr), "a/b");  // b was opened inside a
  nvtx.OnEnd(2, 40);
  EXPECT_EQ(nvtx.PathOn(3, nullptr), "");
}

}  // namespace
}  // namespace qprof::profiler::cupti
