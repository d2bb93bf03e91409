// The collector in a bad environment: on a machine without a GPU or driver, Start()
// returns one clear Unavailable status and nothing crashes; option checks.
#include "profiler/cupti/cupti_collector.h"

#include <dlfcn.h>

#include "gtest/gtest.h"
#include "profiler/cupti/activity_buffer.h"
#include "profiler/cupti/cupti_api.h"
#include "tests/profiler/cupti/decode_to_trace.h"
#include "tests/profiler/cupti/fake_records.h"

namespace qprof::profiler::cupti {
namespace {

bool DriverPresent() {
  void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  return h != nullptr;
}

TEST(CuptiCollectorTest, NoDriverGivesOneClearMessage) {
  if (DriverPresent()) GTEST_SKIP() << "an NVIDIA driver is present; this checks the no-GPU path";
  auto collector = MakeCuptiCollector(CuptiOptions{});
  ASSERT_TRUE(collector.ok()) << collector.status();
  absl::Status s = (*collector)->Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_NE(s.message().find("no NVIDIA driver"), absl::string_view::npos) << s;
  EXPECT_EQ(s.message().find('\n'), absl::string_view::npos);  // one line
  // Not started: Stop/Flush refuse cleanly.
  EXPECT_EQ((*collector)->Stop().code(), absl::StatusCode::kFailedPrecondition);
  proto::Trace trace;
  EXPECT_EQ((*collector)->Flush(&trace).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(CuptiCollectorTest, MetricsModeWithoutDriverAlsoFailsCleanly) {
  if (DriverPresent()) GTEST_SKIP() << "an NVIDIA driver is present";
  CuptiOptions options;
  options.mode = CuptiOptions::Mode::kMetrics;
  auto collector = MakeCuptiCollector(options);
  ASSERT_TRUE(collector.ok());
  EXPECT_EQ((*collector)->Start().code(), absl::StatusCode::kUnavailable);
}

TEST(CuptiCollectorTest, BadOptionsAreInvalidArgument) {
  CuptiOptions small;
  small.buffer_bytes = 1000;
  EXPECT_EQ(MakeCuptiCollector(small).status().code(), absl::StatusCode::kInvalidArgument);
  CuptiOptions cap;
  cap.max_buffer_bytes = 1u << 20;
  EXPECT_EQ(MakeCuptiCollector(cap).status().code(), absl::StatusCode::kInvalidArgument);
  CuptiOptions metrics;
  metrics.mode = CuptiOptions::Mode::kMetrics;
  metrics.max_metric_kernels = 0;
  EXPECT_EQ(MakeCuptiCollector(metrics).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace qprof::profiler::cupti

// libcupti's own record walk over a buffer of real record structs, into the decoder:
// the path the collector's worker takes, minus the GPU.
namespace qprof::profiler::cupti {
namespace {

TEST(ActivityBufferTest, CuptiWalksOurRecordsIntoTheDecoder) {
  testing::FakeBuffer buf;
  buf.Append(testing::Marker(true, 1, "layer 3", 50, 9));
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, 211, 60, 70, 9, 77));
  buf.Append(testing::Marker(false, 1, nullptr, 80, 9));
  buf.Append(testing::Kernel("_Z4gemmv", 100, 250, 77));
  buf.Append(testing::Kernel("bad", 0, 250, 78));
  buf.Append(testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 4096, 300, 400, 79));
  std::vector<const CUpti_Activity*> recs = buf.Records();
  auto* base = const_cast<uint8_t*>(reinterpret_cast<const uint8_t*>(recs.front()));
  const size_t valid = (reinterpret_cast<const uint8_t*>(recs.back()) - base) +
                       sizeof(CUpti_ActivityMemcpy6);
  ActivityDecoder decoder;
  BufferWalk walk = DecodeActivityBuffer(RealCuptiApi(), base, valid, &decoder);
  EXPECT_TRUE(walk.clean_end);
  EXPECT_EQ(walk.records, 6u);
  EXPECT_EQ(walk.unread_bytes, 0u);
  proto::Trace trace = testing::DecodeToTrace(&decoder);
  ASSERT_EQ(trace.activities_size(), 2);
  EXPECT_EQ(trace.activities(0).name(), "gemm()");
  EXPECT_EQ(trace.activities(0).nvtx_path(), "layer 3");
  EXPECT_EQ(trace.activities(1).copy_kind(), "DtoH");
  EXPECT_EQ(trace.header().collector().records_invalid(), 1u);
}

TEST(ActivityBufferTest, EmptyBufferIsNothing) {
  ActivityDecoder decoder;
  EXPECT_EQ(DecodeActivityBuffer(RealCuptiApi(), nullptr, 0, &decoder).records, 0u);
}

}  // namespace
}  // namespace qprof::profiler::cupti
