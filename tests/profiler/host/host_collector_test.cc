#include "profiler/host/host_collector.h"

#include <string>

#include "gtest/gtest.h"

namespace qprof::profiler {
namespace {

TEST(HostCollectorTest, RecordsKernelsWithRangePathsAndHostProvenance) {
  HostCollector c(2);
  ASSERT_TRUE(c.Start().ok());
  {
    ScopedHostRange decode(&c, "decode");
    ScopedHostRange step(&c, "step 3");
    ScopedHostRange layer(&c, "layer 12");
    ScopedHostRange moe(&c, "moe");
    HostKernelCall call;
    call.name = "qprof_moe_slot_gemv_mxfp4";
    call.kernel_id = "moe.slot_gemv.mxfp4";
    call.attribution.set_role("moe.experts");
    call.attribution.set_pipe_class("simt");
    call.attribution.set_evidence("registry");
    call.work.set_bytes(1234);
    int64_t t0 = HostNowNs();
    c.RecordKernel(t0, t0, call);  // zero-length: stretched to 1 ns
    c.RecordKernel(t0 + 10, t0 + 5, call);  // end before start: invalid
  }
  ASSERT_TRUE(c.Stop().ok());
  c.RecordKernel(0, 1, {});  // after stop: dropped
  proto::Trace trace;
  ASSERT_TRUE(c.Flush(&trace).ok());
  ASSERT_EQ(trace.activities_size(), 1);
  const proto::Activity& a = trace.activities(0);
  EXPECT_EQ(a.nvtx_path(), "decode/step 3/layer 12/moe");
  EXPECT_EQ(a.kernel_id(), "moe.slot_gemv.mxfp4");
  EXPECT_EQ(a.end_ns() - a.start_ns(), 1);
  EXPECT_EQ(a.device_id(), 0u);
  EXPECT_EQ(a.kind(), proto::ACTIVITY_KIND_KERNEL);
  EXPECT_EQ(a.attribution().evidence(), "registry");
  EXPECT_EQ(a.work().bytes(), 1234);
  EXPECT_EQ(trace.header().provenance(), proto::PROVENANCE_MEASURED_HOST);
  ASSERT_EQ(trace.header().devices_size(), 1);
  EXPECT_EQ(trace.header().devices(0).kind(), "host_cpu");
  EXPECT_EQ(trace.header().devices(0).cpu_threads(), 2u);
  EXPECT_EQ(trace.header().collector().collector(), "host");
  EXPECT_EQ(trace.header().collector().records_invalid(), 1u);
  EXPECT_EQ(trace.header().collector().records_dropped(), 1u);
  ASSERT_EQ(trace.ranges_size(), 4);
  EXPECT_EQ(trace.ranges(0).path(), "decode/step 3/layer 12/moe");
  EXPECT_EQ(trace.ranges(0).depth(), 3u);
  EXPECT_EQ(trace.ranges(3).path(), "decode");
  EXPECT_LE(trace.ranges(3).start_ns(), trace.ranges(0).start_ns());
  EXPECT_GE(trace.ranges(3).end_ns(), trace.ranges(0).end_ns());
}

TEST(HostCollectorTest, ContractViolationsAreStatusesNotCrashes) {
  HostCollector c(1);
  proto::Trace t;
  EXPECT_FALSE(c.Stop().ok());
  EXPECT_FALSE(c.Flush(&t).ok());
  ASSERT_TRUE(c.Start().ok());
  EXPECT_FALSE(c.Start().ok());
  c.PushRange("left open");
  ASSERT_TRUE(c.Stop().ok());  // closes the open range
  ASSERT_TRUE(c.Flush(&t).ok());
  EXPECT_FALSE(c.Flush(&t).ok());
  EXPECT_EQ(t.ranges_size(), 1);
}

}  // namespace
}  // namespace qprof::profiler
