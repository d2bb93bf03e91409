// Decoding of real CUPTI record structs: names, times, NVTX paths, graph kernels,
// invalid records, memcpy kinds.
#include "profiler/cupti/activity_decoder.h"

#include <cupti_runtime_cbid.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/profiler/cupti/decode_to_trace.h"
#include "tests/profiler/cupti/fake_records.h"

namespace qprof::profiler::cupti {
namespace {

using testing::FakeBuffer;
using ::testing::ElementsAre;

constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr uint32_t kGraphLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000;

proto::Trace Decode(const FakeBuffer& buffer, ActivityDecoder* decoder) {
  for (const CUpti_Activity* r : buffer.Records()) decoder->Add(r);
  return testing::DecodeToTrace(decoder);
}

TEST(ActivityDecoderTest, KernelFieldsAndDemangledName) {
  FakeBuffer buf;
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 900, 950, 11, 5));
  buf.Append(testing::Kernel("_Z8moe_gemviPf", 1000, 4000, 5));
  ActivityDecoder decoder;
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.activities_size(), 1);
  const proto::Activity& k = trace.activities(0);
  EXPECT_EQ(k.kind(), proto::ACTIVITY_KIND_KERNEL);
  EXPECT_EQ(k.name(), "moe_gemv(int, float*)");
  EXPECT_EQ(k.mangled_name(), "_Z8moe_gemviPf");
  EXPECT_EQ(k.start_ns(), 1000);
  EXPECT_EQ(k.end_ns(), 4000);
  EXPECT_EQ(k.stream_id(), 7u);
  EXPECT_EQ(k.correlation_id(), 5u);
  EXPECT_EQ(k.grid().x(), 132u);
  EXPECT_EQ(k.grid().y(), 3u);
  EXPECT_EQ(k.block().x(), 256u);
  EXPECT_EQ(k.registers_per_thread(), 96u);
  EXPECT_EQ(k.static_shared_bytes(), 1024u);
  EXPECT_EQ(k.dynamic_shared_bytes(), 49152u);
  EXPECT_EQ(k.tid(), 11u);
  EXPECT_EQ(k.pid(), 4242u);
  EXPECT_EQ(trace.header().collector().records_total(), 2u);
  EXPECT_EQ(decoder.stats().unattributed, 0u);
}

TEST(ActivityDecoderTest, UnmangledNameKeptAsIs) {
  EXPECT_EQ(DemangleKernelName("nvjet_tst_128x64_64x4_h_bz_TNT"), "nvjet_tst_128x64_64x4_h_bz_TNT");
  EXPECT_EQ(DemangleKernelName("_Zbroken"), "_Zbroken");  // not demanglable
  EXPECT_EQ(DemangleKernelName(nullptr), "");
}

TEST(ActivityDecoderTest, NvtxPathOfTheLaunchingThreadAtLaunchTime) {
  FakeBuffer buf;
  // Thread 11: decode > step 3 > layer 12 > moe ; thread 12 has its own range.
  buf.Append(testing::Marker(true, 1, "decode", 100, 11));
  buf.Append(testing::Marker(true, 2, "step 3", 200, 11));
  buf.Append(testing::Marker(true, 3, "layer 12", 300, 11));
  buf.Append(testing::Marker(true, 4, "moe", 400, 11));
  buf.Append(testing::Marker(true, 9, "other thread", 100, 12));
  // Launch inside "moe" on thread 11; the kernel runs after the range closed.
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 450, 460, 11, 21));
  buf.Append(testing::Marker(false, 4, nullptr, 500, 11));
  // Launch in "layer 12" after "moe" popped.
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 510, 520, 11, 22));
  buf.Append(testing::Marker(false, 3, nullptr, 600, 11));
  buf.Append(testing::Marker(false, 2, nullptr, 700, 11));
  // Launch from thread 12 inside its own range, at a time thread 11 is in "decode".
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 710, 720, 12, 23));
  buf.Append(testing::Marker(false, 1, nullptr, 800, 11));
  buf.Append(testing::Marker(false, 9, nullptr, 900, 12));
  // Launch after every range closed.
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 950, 960, 11, 24));
  buf.Append(testing::Kernel("k_moe", 2000, 2100, 21));
  buf.Append(testing::Kernel("k_layer", 2100, 2200, 22));
  buf.Append(testing::Kernel("k_thread12", 2200, 2300, 23));
  buf.Append(testing::Kernel("k_none", 2300, 2400, 24));
  ActivityDecoder decoder;
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.activities_size(), 4);
  EXPECT_EQ(trace.activities(0).nvtx_path(), "decode/step 3/layer 12/moe");
  EXPECT_EQ(trace.activities(1).nvtx_path(), "decode/step 3/layer 12");
  EXPECT_EQ(trace.activities(2).nvtx_path(), "other thread");
  EXPECT_EQ(trace.activities(3).nvtx_path(), "");
  // Ranges in the order they closed.
  ASSERT_EQ(trace.ranges_size(), 5);
  EXPECT_EQ(trace.ranges(0).path(), "decode/step 3/layer 12/moe");
  EXPECT_EQ(trace.ranges(0).depth(), 3u);
  EXPECT_EQ(trace.ranges(0).start_ns(), 400);
  EXPECT_EQ(trace.ranges(0).end_ns(), 500);
  EXPECT_EQ(trace.ranges(3).path(), "decode");
  EXPECT_EQ(trace.ranges(4).tid(), 12u);
}

TEST(ActivityDecoderTest, GraphKernelsShareTheGraphLaunchAttribution) {
  FakeBuffer buf;
  buf.Append(testing::Marker(true, 1, "step 7", 100, 11));
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kGraphLaunch, 150, 170, 11, 40));
  buf.Append(testing::Marker(false, 1, nullptr, 200, 11));
  // One correlation id, three kernel records from the graph's nodes, arriving out of order.
  buf.Append(testing::Kernel("rmsnorm", 1300, 1400, 40, 7, 3));
  buf.Append(testing::Kernel("attn", 1100, 1250, 40, 7, 3));
  buf.Append(testing::Kernel("moe", 1500, 1900, 40, 7, 3));
  ActivityDecoder decoder;
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.activities_size(), 3);
  std::vector<std::string> names;
  for (const proto::Activity& a : trace.activities()) {
    names.push_back(a.name());
    EXPECT_EQ(a.nvtx_path(), "step 7");
    EXPECT_EQ(a.correlation_id(), 40u);
    EXPECT_EQ(a.graph_id(), 3u);
    EXPECT_EQ(a.tid(), 11u);
  }
  EXPECT_THAT(names, ElementsAre("attn", "rmsnorm", "moe"));  // sorted by start
  EXPECT_EQ(decoder.stats().graph_kernels, 3u);
}

TEST(ActivityDecoderTest, DriverRecordInsideRuntimeCallKeepsTheOuterCall) {
  LaunchIndex index;
  index.Add(9, LaunchInfo{1, 11, 500, 1, false, "", {}});  // driver call, nested, later start
  index.Add(9, LaunchInfo{1, 11, 480, 2, true, "", {}});   // runtime call wraps it
  index.Add(9, LaunchInfo{1, 11, 490, 3, false, "", {}});
  ASSERT_NE(index.Find(9), nullptr);
  EXPECT_TRUE(index.Find(9)->runtime);
  EXPECT_EQ(index.Find(9)->start_ns, 480);
  EXPECT_EQ(index.Find(10), nullptr);
}

TEST(ActivityDecoderTest, InvalidRecordsAreCountedAndLeftOut) {
  FakeBuffer buf;
  buf.Append(testing::Kernel("zero_start", 0, 100, 1));
  buf.Append(testing::Kernel("end_before_start", 500, 400, 2));
  buf.Append(testing::Kernel("zero_length", 500, 500, 3));
  buf.Append(testing::Kernel("good", 600, 700, 4));
  buf.Append(testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 64, 0, 0, 5));
  ActivityDecoder decoder;
  decoder.Add(nullptr);
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.activities_size(), 1);
  EXPECT_EQ(trace.activities(0).name(), "good");
  EXPECT_EQ(trace.header().collector().records_invalid(), 5u);
  EXPECT_EQ(trace.header().collector().records_total(), 6u);
  // "good" has no launch record: counted as unattributed, with a warning.
  EXPECT_EQ(decoder.stats().unattributed, 1u);
  EXPECT_FALSE(trace.header().collector().warnings().empty());
}

TEST(ActivityDecoderTest, MemcpyKindsAndOverhead) {
  FakeBuffer buf;
  buf.Append(testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, 100, 300, 1));
  buf.Append(testing::Memcpy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 333, 400, 450, 2));
  CUpti_ActivityOverhead3 overhead;
  std::memset(&overhead, 0, sizeof(overhead));
  overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  overhead.start = 1000;
  overhead.end = 1750;
  buf.Append(overhead);
  CUpti_ActivityExternalCorrelation ext;
  std::memset(&ext, 0, sizeof(ext));
  ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  ext.correlationId = 2;
  ext.externalId = 77;
  buf.Append(ext);
  ActivityDecoder decoder;
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.activities_size(), 2);
  EXPECT_EQ(trace.activities(0).name(), "Memcpy HtoD");
  EXPECT_EQ(trace.activities(0).copy_kind(), "HtoD");
  EXPECT_EQ(trace.activities(0).bytes(), 1u << 20);
  EXPECT_EQ(trace.activities(1).copy_kind(), "DtoH");
  EXPECT_EQ(trace.activities(1).args().at("external_id"), "77");
  EXPECT_EQ(trace.header().collector().overhead_ns(), 750u);
}

TEST(ActivityDecoderTest, DeviceRecordBecomesDeviceInfo) {
  CUpti_ActivityDevice5 d;
  std::memset(&d, 0, sizeof(d));
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.numMultiprocessors = 132;
  d.globalMemorySize = 150ull << 30;
  d.globalMemoryBandwidth = 4800000000ull;  // KB/s
  d.coreClockRate = 1980000;                // kHz
  FakeBuffer buf;
  buf.Append(d);
  ActivityDecoder decoder;
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.header().devices_size(), 1);
  const proto::DeviceInfo& info = trace.header().devices(0);
  EXPECT_EQ(info.name(), "NVIDIA H200");
  EXPECT_EQ(info.arch(), "sm_90");
  EXPECT_EQ(info.sm_count(), 132u);
  EXPECT_DOUBLE_EQ(info.memory_bandwidth_gbps(), 4800.0);
  EXPECT_DOUBLE_EQ(info.clock_mhz(), 1980.0);
}

TEST(ActivityDecoderTest, DurationWindowKeepsEarlyRecordsOnly) {
  FakeBuffer buf;
  buf.Append(testing::Kernel("early", 1000, 1100, 1));
  buf.Append(testing::Kernel("late", 5000, 5100, 2));
  ActivityDecoder decoder;
  decoder.SetWindow(0, 2000);
  proto::Trace trace = Decode(buf, &decoder);
  ASSERT_EQ(trace.activities_size(), 1);
  EXPECT_EQ(trace.activities(0).name(), "early");
  EXPECT_EQ(decoder.stats().records_outside_window, 1u);
}

TEST(ActivityDecoderTest, UnknownKindsAreCounted) {
  CUpti_Activity other;
  other.kind = CUPTI_ACTIVITY_KIND_PCIE;
  ActivityDecoder decoder;
  decoder.Add(&other);
  EXPECT_EQ(decoder.stats().records_unknown, 1u);
}

}  // namespace
}  // namespace qprof::profiler::cupti

namespace qprof::profiler::cupti {
namespace {

TEST(ActivityDecoderTest, MemoryCapCountsWhatIsLeftOut) {
  testing::FakeBuffer buf;
  for (uint32_t i = 0; i < 7; ++i) buf.Append(testing::Kernel("k", 100 + i * 10, 105 + i * 10, i));
  ActivityDecoder decoder;
  decoder.SetMaxActivities(5);
  for (const CUpti_Activity* r : buf.Records()) decoder.Add(r);
  proto::Trace trace = testing::DecodeToTrace(&decoder);
  EXPECT_EQ(trace.activities_size(), 5);
  EXPECT_EQ(decoder.stats().over_cap, 2u);
  EXPECT_EQ(trace.header().collector().records_over_cap(), 2u);
  bool warned = false;
  for (const std::string& w : trace.header().collector().warnings()) {
    warned = warned || w.find("beyond the in-memory limit") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace qprof::profiler::cupti
