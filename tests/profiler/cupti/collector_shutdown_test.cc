// Stopping through the seam: order of calls, callbacks still running, every buffer
// flushed, decoding off CUPTI's threads, streaming batches.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "profiler/cupti/collector_core.h"
#include "tests/profiler/cupti/collector_test_util.h"

namespace qprof::profiler::cupti {
namespace {

using testing::CollectorSeamTest;
using testing::CountKind;
using testing::KernelKeys;

class ShutdownSeamTest : public CollectorSeamTest {};

// Issue 16, bug 9: Kineto's order — disable the kinds, then force-flush — so nothing new
// is recorded while the last buffers come back; unsubscribing comes last.
TEST_F(ShutdownSeamTest, StopDisablesThenFlushesThenUnsubscribes) {
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  Finish(c.get());
  const size_t disable = fake_->IndexOfCall(
      "ActivityDisable(" + std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) + ")");
  const size_t flush = fake_->IndexOfCall(
      "ActivityFlushAll(" + std::to_string(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) + ")");
  const size_t unsubscribe = fake_->IndexOfCall("Unsubscribe");
  ASSERT_NE(disable, SIZE_MAX);
  ASSERT_NE(flush, SIZE_MAX);
  EXPECT_LT(disable, flush);
  EXPECT_LT(flush, unsubscribe);
}

// Issue 16, bug 9: a BufferCompleted already running on a CUPTI thread when the forced
// flush returns. Stop() waits for it, so its records are in the trace (without the wait,
// the worker finished first and the buffer was lost).
TEST_F(ShutdownSeamTest, BufferCompletedStillRunningAtStopIsWaitedFor) {
  fake_->faults.late_completion = true;
  fake_->faults.hold_completed_buffers = true;  // all buffers come back in the final flush
  CuptiOptions options;
  options.buffer_bytes = 1u << 20;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  constexpr int kLaunches = 12000;  // three buffers; the last comes back late
  for (int i = 0; i < kLaunches; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), kLaunches);
  EXPECT_EQ(trace.header().collector().buffers_late(), 0u);
}

// Issue 16, bug 10: buffers are decoded on the collector's worker, never on the CUPTI
// thread that completed them (which must return quickly at high kernel rates).
TEST_F(ShutdownSeamTest, BuffersAreWalkedOffTheThreadsThatCompleteThem) {
  CuptiOptions options;
  options.buffer_bytes = 1u << 20;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 20000; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 20000);
  const auto walks = fake_->walk_threads();
  const auto deliveries = fake_->delivery_threads();
  ASSERT_FALSE(walks.empty());
  ASSERT_FALSE(deliveries.empty());
  for (const auto& id : walks) EXPECT_EQ(deliveries.count(id), 0u);
  EXPECT_EQ(walks.count(std::this_thread::get_id()), 0u);
}

// Shutdown flushes every outstanding buffer: here none came back before Stop().
TEST_F(ShutdownSeamTest, StopFlushesEveryOutstandingBuffer) {
  fake_->faults.hold_completed_buffers = true;
  CuptiOptions options;
  options.buffer_bytes = 1u << 20;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 15000; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 15000);
  EXPECT_EQ(s.records_dropped(), 0u);
  EXPECT_GE(s.buffers_completed(), 4u);
  EXPECT_EQ(s.buffers_completed(), s.buffers_requested() - s.buffers_refused());
}

// The statistics account for every GPU record: written, or counted where it went.
TEST_F(ShutdownSeamTest, StatisticsAccountForEveryRecord) {
  fake_->faults.drop_every = 11;
  CuptiOptions options;
  options.duration_s = 0.0005;  // 500 us of fake time: later kernels are outside
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 1000; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_GT(s.records_outside_window(), 0u);
  EXPECT_EQ(s.records_gpu(), s.records_written() + s.records_invalid() +
                                 s.records_outside_window() + s.records_over_cap());
  EXPECT_EQ(s.records_gpu() + fake_->gpu_records_dropped(), fake_->gpu_records_made());
  EXPECT_EQ(s.records_written(), static_cast<uint64_t>(trace.activities_size()));
}

// Streaming (what the injection library does): with a flush period, records reach
// on_batch while the program runs, before Stop(); the rest comes with TakeRemaining().
TEST_F(ShutdownSeamTest, RecordsStreamOutBeforeStop) {
  std::mutex mu;
  uint64_t streamed = 0;
  CoreOptions options;
  options.flush_period_ms = 20;
  options.on_batch = [&](DecodedBatch& b) {
    std::lock_guard<std::mutex> lock(mu);
    streamed += b.activities.size();
  };
  CollectorCore core(*fake_, options);
  ASSERT_TRUE(core.Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 300; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  fake_->SyncAll();
  for (int i = 0; i < 200; ++i) {  // up to 4 s on a loaded machine
    {
      std::lock_guard<std::mutex> lock(mu);
      if (streamed == 300) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(streamed, 300u);  // all of it before Stop()
  }
  ASSERT_TRUE(core.Stop().ok());
  DecodedBatch rest;
  core.TakeRemaining(&rest);
  EXPECT_TRUE(rest.activities.empty());
  EXPECT_EQ(rest.devices.size(), 1u);
}

// After Stop() the trace is final: a buffer CUPTI hands back later anyway is counted
// (with its records), not decoded, and its memory is returned.
TEST_F(ShutdownSeamTest, BufferHandedBackAfterStopIsCountedAsLate) {
  fake_->faults.hold_completed_buffers = true;
  fake_->faults.keep_one_past_flush = true;
  CuptiOptions options;
  options.buffer_bytes = 1u << 20;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 6000; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  ASSERT_TRUE(c->Stop().ok());
  fake_->DeliverKept();
  proto::Trace trace;
  ASSERT_TRUE(c->Flush(&trace).ok());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_EQ(s.buffers_late(), 1u);
  EXPECT_LT(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 6000);
  EXPECT_TRUE(testing::HasWarning(trace, "completed after the collector stopped")) << s.DebugString();
}

// ... and once the collector is gone, the buffer is simply freed.
TEST_F(ShutdownSeamTest, BufferHandedBackAfterTheCollectorIsGoneIsFreed) {
  fake_->faults.hold_completed_buffers = true;
  fake_->faults.keep_one_past_flush = true;
  {
    auto c = Make(CuptiOptions{});
    ASSERT_TRUE(c->Start().ok());
    CUcontext ctx = fake_->CreateContext(0);
    for (int i = 0; i < 100; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
    ASSERT_TRUE(c->Stop().ok());
  }
  fake_->DeliverKept();  // must neither crash nor touch the destroyed collector
  auto next = Make(CuptiOptions{});  // and the next collector starts cleanly
  EXPECT_TRUE(next->Start().ok());
  EXPECT_TRUE(next->Stop().ok());
}

// Issue 25: after Stop() nothing more is decoded, so a buffer CUPTI asks for then is
// refused (one handed out would never come back to a running collector). Fails when
// buffers are handed out after stop.
TEST_F(ShutdownSeamTest, BuffersAreRefusedAfterStop) {
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  ASSERT_TRUE(c->Stop().ok());
  EXPECT_FALSE(fake_->RequestBufferNow());
  proto::Trace trace;
  ASSERT_TRUE(c->Flush(&trace).ok());
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 1);
}

// Records CUPTI counts as dropped after its last buffer came back (lost in its device
// buffer during the final flush) are seen only by reading the count after the flush.
// Fails without that final read.
TEST_F(ShutdownSeamTest, DropsCountedAfterTheLastBufferAreInTheTrace) {
  fake_->faults.drops_after_last_delivery = 7;
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 10; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_EQ(s.records_dropped(), 7u);
  EXPECT_EQ(s.records_gpu() + fake_->gpu_records_dropped(), fake_->gpu_records_made());
  EXPECT_TRUE(testing::HasWarning(trace, "7 activity records were dropped by CUPTI"));
}

// Kernels still running when the collector stops come back from the forced flush
// without timestamps. They are counted as such (and said), not silently lost. Fails
// without the incomplete-record count.
TEST_F(ShutdownSeamTest, RecordsIncompleteAtTheForcedFlushAreCounted) {
  fake_->faults.running_at_forced_flush = 5;
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 20; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);  // no sync
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 15);
  EXPECT_EQ(s.cupti_detail().records_incomplete(), 5u);
  EXPECT_EQ(s.records_invalid(), 5u);
  EXPECT_TRUE(testing::HasWarning(trace, "still running when the collector stopped"))
      << s.DebugString();
}

// torch.profiler/Kineto registers its own activity buffer callbacks without subscribing,
// and from then on CUPTI hands it every buffer, ours included. The collector cannot stop
// that, but it notices the buffers that never came back and says the records are lost.
// Fails without the check.
TEST_F(ShutdownSeamTest, BuffersTakenByAnotherToolAreSaid) {
  CuptiOptions options;
  options.buffer_bytes = 1u << 20;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 100; ++i) fake_->LaunchKernel(ctx, 7, "before", 1000, 1);
  fake_->SyncAll();  // our buffer holds them, not yet completed
  fake_->RegisterForeignBufferCallbacks();
  for (int i = 0; i < 100; ++i) fake_->LaunchKernel(ctx, 7, "after", 1000, 1);
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_GE(fake_->buffers_taken_by_foreign_tool(), 1u);
  EXPECT_EQ(s.cupti_detail().buffers_not_returned(), 1u) << s.DebugString();
  EXPECT_TRUE(testing::HasWarning(trace, "another tool registered its own activity buffer "
                                         "callbacks"));
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 0);
}

}  // namespace
}  // namespace qprof::profiler::cupti
