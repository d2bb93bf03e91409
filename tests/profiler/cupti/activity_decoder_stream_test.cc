// The decoder as records stream in: held GPU records, NVTX domains, the name cache,
// odd bytes in names.
#include <cupti_runtime_cbid.h>

#include <cstring>

#include "gtest/gtest.h"
#include "profiler/cupti/activity_decoder.h"
#include "tests/profiler/cupti/decode_to_trace.h"
#include "tests/profiler/cupti/fake_records.h"

namespace qprof::profiler::cupti {
namespace {

constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;

// Issue 16, bug 12: NCCL's ranges live in their own NVTX domain. They must not nest
// into the application's path (which is what happened when domains were ignored).
TEST(ActivityDecoderStreamTest, NamedDomainsNestApart) {
  testing::FakeBuffer buf;
  buf.Append(testing::Marker(true, 1, "decode", 100, 7));
  buf.Append(testing::Marker(true, 2, "layer 0", 110, 7));
  buf.Append(testing::Marker(true, 3, "comm", 120, 7));
  buf.Append(testing::Marker(true, 4, "ncclAllReduce", 130, 7, "NCCL"));
  buf.Append(testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 140, 150, 7, 9));
  buf.Append(testing::Marker(false, 4, nullptr, 160, 7, "NCCL"));
  buf.Append(testing::Marker(false, 3, nullptr, 170, 7));
  buf.Append(testing::Marker(false, 2, nullptr, 180, 7));
  buf.Append(testing::Marker(false, 1, nullptr, 190, 7));
  buf.Append(testing::Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 2000, 9));
  ActivityDecoder decoder;
  for (const CUpti_Activity* r : buf.Records()) decoder.Add(r);
  proto::Trace trace = testing::DecodeToTrace(&decoder);
  ASSERT_EQ(trace.activities_size(), 1);
  EXPECT_EQ(trace.activities(0).nvtx_path(), "decode/layer 0/comm");
  ASSERT_EQ(trace.activities(0).nvtx_domain_paths().count("NCCL"), 1u);
  EXPECT_EQ(trace.activities(0).nvtx_domain_paths().at("NCCL"), "ncclAllReduce");
  ASSERT_EQ(trace.ranges_size(), 4);
  EXPECT_EQ(trace.ranges(0).path(), "NCCL::ncclAllReduce");
  EXPECT_EQ(trace.ranges(0).depth(), 0u);
  EXPECT_EQ(trace.ranges(1).path(), "decode/layer 0/comm");
  EXPECT_EQ(trace.ranges(1).depth(), 2u);
}

// Issue 16, bug 10: one demangle per distinct name pointer, not per record.
TEST(ActivityDecoderStreamTest, KernelNamesDemangledOncePerNamePointer) {
  static char name[] = "_Z8moe_gemviPf";
  ActivityDecoder decoder;
  for (uint32_t i = 0; i < 1000; ++i) {
    CUpti_ActivityKernel10 k = testing::Kernel(name, 100 + i * 10, 105 + i * 10, i + 1);
    decoder.Add(reinterpret_cast<const CUpti_Activity*>(&k));
  }
  EXPECT_EQ(decoder.stats().demangled, 1u);
  EXPECT_EQ(decoder.stats().name_cache_hits, 999u);
  // The same address now holding another name (a module unloaded, another loaded there):
  // demangled again, never the stale entry.
  std::strcpy(name, "_Z8rms_normiPf");
  CUpti_ActivityKernel10 k = testing::Kernel(name, 50000, 50010, 5000);
  decoder.Add(reinterpret_cast<const CUpti_Activity*>(&k));
  EXPECT_EQ(decoder.stats().demangled, 2u);
  proto::Trace trace = testing::DecodeToTrace(&decoder);
  ASSERT_EQ(trace.activities_size(), 1001);
  EXPECT_EQ(trace.activities(0).name(), "moe_gemv(int, float*)");
  EXPECT_EQ(trace.activities(1000).name(), "rms_norm(int, float*)");
}

// A kernel record read before its launch's API record is held, then attributed.
TEST(ActivityDecoderStreamTest, KernelBeforeItsLaunchRecordIsHeldThenAttributed) {
  ActivityDecoder decoder;
  CUpti_ActivityMarker2 push = testing::Marker(true, 1, "step 0", 10, 3);
  CUpti_ActivityKernel10 k = testing::Kernel("late_api", 1000, 1100, 44);
  CUpti_ActivityAPI api = testing::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, 20, 30, 3, 44);
  decoder.Add(reinterpret_cast<const CUpti_Activity*>(&push));
  decoder.Add(reinterpret_cast<const CUpti_Activity*>(&k));
  DecodedBatch first;
  decoder.TakeReady(&first, false);
  EXPECT_TRUE(first.activities.empty());  // held, not given up yet
  decoder.Add(reinterpret_cast<const CUpti_Activity*>(&api));
  DecodedBatch second;
  decoder.TakeReady(&second, false);
  ASSERT_EQ(second.activities.size(), 1u);
  EXPECT_EQ(second.activities[0].tid, 3u);
  EXPECT_EQ(decoder.stats().unattributed, 0u);
}

TEST(ActivityDecoderStreamTest, HeldRecordIsReleasedUnattributedAfterSomeBatches) {
  ActivityDecoder decoder;
  CUpti_ActivityKernel10 k = testing::Kernel("no_api", 1000, 1100, 45);
  decoder.Add(reinterpret_cast<const CUpti_Activity*>(&k));
  DecodedBatch out;
  for (int i = 0; i < ActivityDecoder::kMaxPendingBatches; ++i) decoder.TakeReady(&out, false);
  EXPECT_TRUE(out.activities.empty());
  decoder.TakeReady(&out, false);
  ASSERT_EQ(out.activities.size(), 1u);
  EXPECT_EQ(decoder.stats().unattributed, 1u);
}

TEST(ActivityDecoderStreamTest, WithoutApiTracingNothingIsHeld) {
  ActivityDecoder decoder;
  decoder.SetExpectLaunchRecords(false);
  CUpti_ActivityKernel10 k = testing::Kernel("k", 1000, 1100, 46);
  decoder.Add(reinterpret_cast<const CUpti_Activity*>(&k));
  DecodedBatch out;
  decoder.TakeReady(&out, false);
  EXPECT_EQ(out.activities.size(), 1u);
}

// protobuf refuses to parse a string field with invalid UTF-8: one odd byte in a kernel
// name would make the rest of a trace file unreadable.
TEST(ActivityDecoderStreamTest, InvalidUtf8InNamesIsReplaced) {
  EXPECT_EQ(ValidUtf8("plain"), "plain");
  EXPECT_EQ(ValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(ValidUtf8("bad\xFF" "end"), "bad\xEF\xBF\xBD" "end");
  EXPECT_EQ(ValidUtf8("cut\xE2\x82"), "cut\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(ValidUtf8(nullptr), "");
}

}  // namespace
}  // namespace qprof::profiler::cupti
