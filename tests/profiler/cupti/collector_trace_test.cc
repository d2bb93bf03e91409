// Trace mode through the seam: a scripted GPU, faults on demand. Each test names the
// issue-16 bug or requirement it holds the collector to.
#include <cupti_activity.h>

#include <thread>
#include <vector>

#include "tests/profiler/cupti/collector_test_util.h"

namespace qprof::profiler::cupti {
namespace {

using testing::CollectorSeamTest;
using testing::CountKind;
using testing::HasWarning;
using testing::KernelKeys;

class TraceSeamTest : public CollectorSeamTest {};

// Several threads, each with its own NVTX path, launching on two streams; plus copies,
// memsets and graph replays. Every launch appears exactly once with its thread's path.
TEST_F(TraceSeamTest, EveryLaunchOnceFromThreadsStreamsAndGraphs) {
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  constexpr int kThreads = 4, kPerThread = 600;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const uint64_t tid = 100 + t;
      fake_->NvtxPush(tid, "decode");
      fake_->NvtxPush(tid, "worker " + std::to_string(t));
      for (int i = 0; i < kPerThread; ++i) {
        fake_->LaunchKernel(ctx, 1 + (i % 2), "_Z4gemmILi" + std::to_string(t) + "EEvv", 2000, tid);
      }
      fake_->Memcpy(ctx, 1, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, tid);
      fake_->Memset(ctx, 2, 512, tid);
      fake_->GraphLaunch(ctx, 3, {"rmsnorm", "attn", "moe"}, tid);
      fake_->NvtxPop(tid);
      fake_->NvtxPop(tid);
    });
  }
  for (auto& th : threads) th.join();
  fake_->SyncAll();
  proto::Trace trace = Finish(c.get());

  const auto keys = KernelKeys(trace);
  EXPECT_EQ(keys.size(), static_cast<size_t>(kThreads * (kPerThread + 3)));
  for (const auto& [key, n] : keys) EXPECT_EQ(n, 1) << "correlation " << key.first;
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_MEMCPY), kThreads);
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_MEMSET), kThreads);
  EXPECT_EQ(static_cast<uint64_t>(trace.activities_size()), fake_->gpu_records_made());
  for (const proto::Activity& a : trace.activities()) {
    ASSERT_GE(a.tid(), 100u);
    EXPECT_EQ(a.nvtx_path(), "decode/worker " + std::to_string(a.tid() - 100)) << a.name();
    if (a.graph_id() != 0) {
      EXPECT_EQ(a.stream_id(), 3u);
    }
  }
  EXPECT_EQ(trace.ranges_size(), 2 * kThreads);
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_EQ(s.records_dropped(), 0u);
  EXPECT_EQ(s.records_unattributed(), 0u);
  EXPECT_EQ(s.records_written(), static_cast<uint64_t>(trace.activities_size()));
  EXPECT_EQ(s.records_gpu(), fake_->gpu_records_made());
  // Every buffer handed out came back.
  EXPECT_EQ(s.buffers_completed(), s.buffers_requested() - s.buffers_refused());
  EXPECT_EQ(s.cupti_version(), 130001u);
  EXPECT_EQ(s.cupti_header_version(), static_cast<uint32_t>(CUPTI_API_VERSION));
}

// CUPTI asks for buffers faster than it hands them back: the pool's cap is reached,
// requests are refused and CUPTI drops records. Every launch is in the trace or counted.
TEST_F(TraceSeamTest, BuffersRequestedFasterThanCompletedAreCountedNotLost) {
  fake_->faults.hold_completed_buffers = true;
  CuptiOptions options;
  options.buffer_bytes = 1u << 20;
  options.max_buffer_bytes = 2u << 20;  // two buffers: ~8k launches
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  constexpr int kLaunches = 20000;
  for (int i = 0; i < kLaunches; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  const int kernels = CountKind(trace, proto::ACTIVITY_KIND_KERNEL);
  EXPECT_GT(fake_->gpu_records_dropped(), 0u);
  EXPECT_EQ(kernels + fake_->gpu_records_dropped(), static_cast<uint64_t>(kLaunches));
  EXPECT_EQ(s.records_dropped(), fake_->records_dropped_total());
  EXPECT_GT(s.buffers_refused(), 0u);
  EXPECT_TRUE(HasWarning(trace, "dropped by CUPTI")) << s.DebugString();
  EXPECT_TRUE(HasWarning(trace, "refused at the 2 MiB cap")) << s.DebugString();
  EXPECT_EQ(KernelKeys(trace).size(), static_cast<size_t>(kernels));  // no duplicates
}

TEST_F(TraceSeamTest, RecordsCuptiDropsAreCounted) {
  fake_->faults.drop_every = 7;
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 700; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  EXPECT_EQ(fake_->gpu_records_dropped(), 100u);
  EXPECT_EQ(trace.header().collector().records_dropped(), 100u);
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 600);
}

// cuptiActivityGetNextRecord answering CUPTI_ERROR_MAX_LIMIT_REACHED before the buffer's
// valid bytes end: the records left unread are not silently lost.
TEST_F(TraceSeamTest, WalkEndingBeforeTheValidBytesIsCounted) {
  fake_->faults.walk_stops_after = 50;
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 200; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  const proto::CollectorStats& s = trace.header().collector();
  EXPECT_LT(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 200);
  EXPECT_GT(s.buffers_read_short(), 0u);
  EXPECT_TRUE(HasWarning(trace, "could not be read to the end")) << s.DebugString();
}

// Issue 16, bug 8: another CUPTI client (Kineto, Nsight Systems) holds the subscriber.
// Registering activity buffers would take its records: nothing is registered, Start()
// says who holds CUPTI.
TEST_F(TraceSeamTest, SubscriberConflictTakesNothingAndSaysWho) {
  fake_->faults.other_subscriber = "Nsight Systems";
  auto c = Make(CuptiOptions{});
  absl::Status s = c->Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("Nsight Systems"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("records nothing"), absl::string_view::npos) << s;
  EXPECT_FALSE(fake_->buffer_callbacks_registered());
  EXPECT_EQ(fake_->IndexOfCall("ActivityEnable(10)"), SIZE_MAX);
}

TEST_F(TraceSeamTest, SubscriberConflictWithActivityOptInTracesWithAWarning) {
  fake_->faults.other_subscriber = "Nsight Systems";
  CuptiOptions options;
  options.activity_without_subscriber = true;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  for (int i = 0; i < 10; ++i) fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  EXPECT_EQ(CountKind(trace, proto::ACTIVITY_KIND_KERNEL), 10);
  EXPECT_EQ(trace.header().collector().subscriber_conflict(), "Nsight Systems");
  EXPECT_TRUE(HasWarning(trace, "without callbacks"));
}

// Issue 16, bug 7: the first context torn down (a cudaDeviceReset, a temporary context,
// one GPU of several) must not end the trace.
TEST_F(TraceSeamTest, ContextTeardownDoesNotStopTracing) {
  int teardowns = 0;
  CuptiOptions options;
  options.on_context_teardown = [&teardowns] { ++teardowns; };
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  CUcontext a = fake_->CreateContext(0);
  CUcontext b = fake_->CreateContext(0);
  for (int i = 0; i < 5; ++i) fake_->LaunchKernel(a, 7, "before", 1000, 1);
  fake_->DestroyContext(a);  // e.g. cudaDeviceReset
  for (int i = 0; i < 5; ++i) fake_->LaunchKernel(b, 7, "other_ctx", 1000, 1);
  CUcontext again = fake_->CreateContext(0);
  for (int i = 0; i < 5; ++i) fake_->LaunchKernel(again, 7, "after_reset", 1000, 1);
  proto::Trace trace = Finish(c.get());
  EXPECT_EQ(teardowns, 1);
  std::map<std::string, int> by_name;
  for (const proto::Activity& k : trace.activities()) ++by_name[k.name()];
  EXPECT_EQ(by_name["before"], 5);
  EXPECT_EQ(by_name["other_ctx"], 5);
  EXPECT_EQ(by_name["after_reset"], 5);
}

// Issue 16, bug 4: CUDA was initialised (and its context made) before the collector
// started, so CUPTI sends no DEVICE record; the trace still names its GPU.
TEST_F(TraceSeamTest, DevicePropertiesWithoutDeviceRecords) {
  CUcontext ctx = fake_->CreateContext(0);  // before Start, as qprof run --backend cuda does
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  proto::Trace trace = Finish(c.get());
  ASSERT_EQ(trace.header().devices_size(), 1);
  const proto::DeviceInfo& d = trace.header().devices(0);
  EXPECT_EQ(d.name(), "Fake H100 (qprof test stand-in)");
  EXPECT_EQ(d.arch(), "sm_90");
  EXPECT_EQ(d.sm_count(), 132u);
  EXPECT_EQ(d.memory_bytes(), uint64_t{80} << 30);
  // 2 x 2619 MHz x 5120 bit / 8 bits per byte.
  EXPECT_NEAR(d.memory_bandwidth_gbps(), 3352.32, 0.01);
  EXPECT_DOUBLE_EQ(d.clock_mhz(), 1980.0);
}

// Issue 16, bug 5: with NVTX turned off the collector must not point NVTX at CUPTI
// (it used to, precisely because the variable was unset).
TEST_F(TraceSeamTest, NvtxOffLeavesNvtxAlone) {
  unsetenv("NVTX_INJECTION64_PATH");
  CuptiOptions options;
  options.route_nvtx = false;
  auto c = Make(options);
  ASSERT_TRUE(c->Start().ok());
  EXPECT_EQ(std::getenv("NVTX_INJECTION64_PATH"), nullptr);
  EXPECT_EQ(fake_->IndexOfCall("ActivityEnable(" + std::to_string(CUPTI_ACTIVITY_KIND_MARKER) + ")"),
            SIZE_MAX);
  CUcontext ctx = fake_->CreateContext(0);
  fake_->NvtxPush(1, "step 0");
  fake_->LaunchKernel(ctx, 7, "k", 1000, 1);
  fake_->NvtxPop(1);
  proto::Trace trace = Finish(c.get());
  EXPECT_FALSE(fake_->nvtx_reached_cupti());
  EXPECT_EQ(trace.ranges_size(), 0);
  ASSERT_EQ(trace.activities_size(), 1);
  EXPECT_EQ(trace.activities(0).nvtx_path(), "");
}

TEST_F(TraceSeamTest, NvtxOnPointsNvtxAtTheLoadedLibcupti) {
  unsetenv("NVTX_INJECTION64_PATH");
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  ASSERT_NE(std::getenv("NVTX_INJECTION64_PATH"), nullptr);
  EXPECT_EQ(std::string(std::getenv("NVTX_INJECTION64_PATH")), fake_->library_path);
  EXPECT_TRUE(c->Stop().ok());
}

// Issue 16, bug 12, through the collector: NCCL's domain does not nest into the path.
TEST_F(TraceSeamTest, NvtxDomainsThroughTheCollector) {
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->NvtxPush(1, "decode");
  fake_->NvtxPush(1, "layer 3");
  fake_->NvtxPush(1, "ncclAllReduce", "NCCL");
  fake_->LaunchKernel(ctx, 7, "ncclDevKernel_AllReduce", 1000, 1);
  fake_->NvtxPop(1, "NCCL");
  fake_->LaunchKernel(ctx, 7, "moe", 1000, 1);
  fake_->NvtxPop(1);
  fake_->NvtxPop(1);
  proto::Trace trace = Finish(c.get());
  ASSERT_EQ(trace.activities_size(), 2);
  EXPECT_EQ(trace.activities(0).nvtx_path(), "decode/layer 3");
  EXPECT_EQ(trace.activities(0).nvtx_domain_paths().at("NCCL"), "ncclAllReduce");
  EXPECT_EQ(trace.activities(1).nvtx_path(), "decode/layer 3");
  EXPECT_TRUE(trace.activities(1).nvtx_domain_paths().empty());
}

// nvtxRangeStart/End: a range started on one thread and ended on another belongs to the
// thread that started it; launches on that thread inside it carry it.
TEST_F(TraceSeamTest, StartEndRangesAcrossThreads) {
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  CUcontext ctx = fake_->CreateContext(0);
  fake_->NvtxPush(1, "decode");
  const uint32_t request = fake_->NvtxRangeStart(1, "request 7");
  fake_->LaunchKernel(ctx, 7, "inside", 1000, 1);
  fake_->LaunchKernel(ctx, 7, "other_thread", 1000, 2);
  fake_->NvtxRangeEnd(request, 2);  // ended by another thread
  fake_->LaunchKernel(ctx, 7, "after", 1000, 1);
  fake_->NvtxPop(1);
  proto::Trace trace = Finish(c.get());
  std::map<std::string, std::string> path;
  for (const proto::Activity& a : trace.activities()) path[a.name()] = a.nvtx_path();
  EXPECT_EQ(path["inside"], "decode/request 7");
  EXPECT_EQ(path["other_thread"], "");
  EXPECT_EQ(path["after"], "decode");
  ASSERT_EQ(trace.ranges_size(), 2);
  EXPECT_EQ(trace.ranges(0).path(), "decode/request 7");
  EXPECT_EQ(trace.ranges(0).tid(), 1u);
}

// libcupti before 13.0.1 deadlocks in cuptiActivityDisable and crashes in
// cuptiActivityFlushAll: refused with the reason; a newer one is noted.
TEST_F(TraceSeamTest, LibcuptiOlderThan1301IsRefused) {
  fake_->faults.version = 130000;
  auto c = Make(CuptiOptions{});
  absl::Status s = c->Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("older than 13.0.1"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("13.0.0"), absl::string_view::npos) << s;
  EXPECT_EQ(fake_->IndexOfCall("Subscribe"), SIZE_MAX);
}

TEST_F(TraceSeamTest, NewerLibcuptiIsNoted) {
  fake_->faults.version = 130100;
  auto c = Make(CuptiOptions{});
  ASSERT_TRUE(c->Start().ok());
  proto::Trace trace = Finish(c.get());
  EXPECT_EQ(trace.header().collector().cupti_version(), 130100u);
  EXPECT_TRUE(HasWarning(trace, "newer than the CUPTI 13.0.1 headers"));
}

// Kernels cannot be traced (e.g. an unsupported device): Start() fails, the collector
// unsubscribes, and it can be destroyed and another started.
TEST_F(TraceSeamTest, KernelTracingRefusedFailsStartCleanly) {
  fake_->faults.refuse_kernel_activity = true;
  {
    auto c = Make(CuptiOptions{});
    absl::Status s = c->Start();
    EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
    EXPECT_NE(s.message().find("CONCURRENT_KERNEL"), absl::string_view::npos) << s;
    EXPECT_NE(fake_->IndexOfCall("Unsubscribe"), SIZE_MAX);
  }
  fake_->faults.refuse_kernel_activity = false;
  auto next = Make(CuptiOptions{});
  EXPECT_TRUE(next->Start().ok());
  EXPECT_TRUE(next->Stop().ok());
}

TEST_F(TraceSeamTest, NoDriverIsOneClearLine) {
  fake_->faults.driver_present = false;
  auto c = Make(CuptiOptions{});
  absl::Status s = c->Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("no NVIDIA driver"), absl::string_view::npos);
}

}  // namespace
}  // namespace qprof::profiler::cupti
