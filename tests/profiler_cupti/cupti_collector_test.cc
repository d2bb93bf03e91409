// The collector in a bad environment: on a machine without a GPU or driver, Start()
// returns one clear Unavailable status and nothing crashes; option checks.
#include "profiler/cupti/cupti_collector.h"

#include <dlfcn.h>

#include "gtest/gtest.h"

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
