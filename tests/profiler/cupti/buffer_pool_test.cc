#include "profiler/cupti/buffer_pool.h"

#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "profiler/cupti/collector_stats.h"

namespace qprof::profiler::cupti {
namespace {

TEST(BufferPoolTest, CapRefusesAndReleaseReuses) {
  // Awkward size: rounded up to the 8-byte record alignment.
  BufferPool pool(1001, 3 * 1008);
  EXPECT_EQ(pool.buffer_bytes(), 1008u);
  uint8_t* a = pool.Acquire();
  uint8_t* b = pool.Acquire();
  uint8_t* c = pool.Acquire();
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % BufferPool::kAlignment, 0u);
  EXPECT_EQ(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.refused(), 1u);
  pool.Release(b);
  EXPECT_EQ(pool.Acquire(), b);  // reused, not a fourth allocation
  EXPECT_EQ(pool.allocated(), 3u);
  EXPECT_EQ(pool.bytes_held(), 3u * 1008u);
  int not_ours = 0;
  pool.Release(reinterpret_cast<uint8_t*>(&not_ours));
  EXPECT_EQ(pool.unknown_released(), 1u);
}

TEST(BufferPoolTest, CapBelowOneBufferStillAllowsOne) {
  BufferPool pool(4096, 10);
  EXPECT_NE(pool.Acquire(), nullptr);
  EXPECT_EQ(pool.Acquire(), nullptr);
}

TEST(BufferPoolTest, ConcurrentAcquireReleaseNeverExceedsCap) {
  BufferPool pool(64, 64 * 5);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&pool] {
      for (int i = 0; i < 2000; ++i) {
        uint8_t* b = pool.Acquire();
        if (b != nullptr) {
          b[0] = 1;  // touch it
          pool.Release(b);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(pool.allocated(), 5u);
}

}  // namespace
}  // namespace qprof::profiler::cupti

namespace qprof::profiler::cupti {
namespace {

TEST(CollectorStatsTest, DroppedAndRefusedAreCountedAndExplained) {
  CollectorStatsData stats;
  stats.records_dropped = 3;  // e.g. from an earlier collector on the same trace
  CollectorCounters c;
  c.records_dropped = 17;
  c.buffers_requested = 34;
  c.buffers_allocated = 32;
  c.buffer_bytes = 32u << 23;
  c.buffers_refused = 2;
  c.cap_bytes = 256u << 20;
  c.warnings = {"activity kind 13 not traced: x"};
  DecoderStats d;
  d.records_gpu = 100;
  FillCollectorStats(c, d, 80, &stats);
  EXPECT_EQ(stats.records_dropped, 20u);
  EXPECT_EQ(stats.buffers_allocated, 32u);
  EXPECT_EQ(stats.buffers_requested, 34u);
  EXPECT_EQ(stats.records_gpu, 100u);
  EXPECT_EQ(stats.records_written, 80u);
  ASSERT_EQ(stats.warnings.size(), 3u);
  EXPECT_EQ(stats.warnings[0], "activity kind 13 not traced: x");
  EXPECT_NE(stats.warnings[1].find("17 activity records were dropped"), std::string::npos);
  EXPECT_NE(stats.warnings[2].find("2 buffer requests refused at the 256 MiB cap"),
            std::string::npos);
}

TEST(CollectorStatsTest, NoLossNoWarnings) {
  CollectorStatsData stats;
  FillCollectorStats(CollectorCounters{}, DecoderStats{}, 0, &stats);
  EXPECT_EQ(stats.records_dropped, 0u);
  EXPECT_TRUE(stats.warnings.empty());
}

TEST(BufferPoolTest, BuffersStillOutSurviveThePool) {
  uint8_t* out = nullptr;
  {
    BufferPool pool(4096, 3 * 4096);
    out = pool.Acquire();
    uint8_t* back = pool.Acquire();
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(pool.outstanding(), 2u);
    EXPECT_TRUE(pool.Release(back));
    EXPECT_EQ(pool.outstanding(), 1u);
  }
  out[4095] = 1;    // still allocated: CUPTI may hand it back after the collector is gone
  std::free(out);   // and whoever gets it frees it
}

}  // namespace
}  // namespace qprof::profiler::cupti
