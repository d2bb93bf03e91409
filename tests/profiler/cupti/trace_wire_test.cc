// The protobuf-free .qtrace encoder (what the injection library writes with) produces
// exactly the bytes protobuf's serializer produces for the same messages, and its files
// read back with ReadTrace().
#include "profiler/trace_wire.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "gtest/gtest.h"
#include "profiler/trace_data_proto.h"
#include "proto/trace_io.h"
#include "proto/vocabulary.h"

namespace qprof::profiler {
namespace {

std::string Serialize(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);  // sorted map keys, as the encoder writes them
  m.SerializeToCodedStream(&coded);
  return out;
}

// Every field the collector writes, with awkward values: negative and huge integers,
// zero in optional fields, -0.0, empty submessages, map entries with empty values.
ActivityData FullKernel() {
  ActivityData a;
  a.kind = ActivityKindData::kKernel;
  a.device_id = 3;
  a.stream_id = (uint64_t{1} << 40) + 7;
  a.start_ns = -5;  // a negative int64 is a 10-byte varint
  a.end_ns = std::numeric_limits<int64_t>::max();
  a.correlation_id = 0xFFFFFFFFull;
  a.name = "void moe_gemv<128>(float const*, \xC3\xA9)";
  a.mangled_name = "_Z8moe_gemvILi128EEvPKfc";
  a.grid = Dim3Data{132, 0, 1};
  a.block = Dim3Data{};  // set but all zero: an empty submessage
  a.registers_per_thread = 255;
  a.static_shared_bytes = 0;
  a.dynamic_shared_bytes = 49152;
  a.nvtx_path = "decode/step 3/layer 12/moe";
  a.graph_id = 9;
  a.graph_node_id = 1u << 31;
  a.pid = 4242;
  a.tid = uint64_t{1} << 63;
  MetricsData m;
  m.tensor_pipe_pct = 0.0;   // optional: written although zero
  m.dram_throughput_pct = -0.0;
  m.sm_throughput_pct = 45.25;
  m.raw = {{"b.sum", 1e300}, {"a.pct", std::nan("")}, {"c", 0.0}};
  m.source = "cupti range profiler (kernel replay)";
  a.metrics = m;
  a.args = {{"range_index", "2"}, {"empty", ""}};
  a.nvtx_domain_paths = {{"NCCL", "ncclAllReduce"}, {"z", "a/b"}};
  a.launch_ns = -5;  // optional: written with its sign's two's complement, as protobuf does
  return a;
}

ActivityData Memcpy() {
  ActivityData a;
  a.kind = ActivityKindData::kMemcpy;
  a.start_ns = 10;
  a.end_ns = 20;
  a.bytes = 1u << 20;
  a.copy_kind = "HtoD";
  a.name = "Memcpy HtoD";
  a.launch_ns = 0;  // optional and set: written although zero
  return a;
}

HeaderData FullHeader() {
  HeaderData h;
  h.schema_version = kWireSchemaVersion;
  h.provenance = kProvenanceMeasuredGpu;
  RunData run;
  run.backend = "cuda";
  run.command_line = "python3 serve.py --tp 8";
  run.hostname = "node-7";
  run.start_unix_ns = 1700000000123456789ull;
  run.extra = {{"pid", "4242"}, {"recorded_by", "qprof record"}};
  h.run = run;
  DeviceData d;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.arch = "sm_90";
  d.kind = "gpu";
  d.sm_count = 132;
  d.memory_bytes = uint64_t{141} << 30;
  d.memory_bandwidth_gbps = 4800.0;
  d.cc_major = 9;
  d.clock_mhz = 1980.0;
  h.devices = {d, DeviceData{}};
  CollectorStatsData s;
  s.collector = "cupti";
  s.records_dropped = 17;
  s.metrics_requested = true;
  s.warnings = {"w1", ""};
  s.buffers_requested = 34;
  s.records_written = 1u << 30;
  s.cupti_version = 130001;
  s.cupti_header_version = 130001;
  s.subscriber_conflict = "Nsight Systems";
  s.metrics_kernels_unmatched = 2;
  s.metrics_missing = {"chip X has no ..."};
  s.ended_by = "signal SIGTERM";
  CuptiDetailData detail;
  detail.metric_set = "default";
  detail.metric_passes = 3;
  detail.metric_ranges_refused = 5;
  detail.records_incomplete = 2;
  detail.buffers_not_returned = 1;
  detail.contexts_not_profiled = {"context 2 on device 0: ...", ""};
  s.cupti_detail = detail;
  h.collector = s;
  h.source_kind = "qtrace";
  h.notes = {"streamed"};
  ProcessData p;
  p.pid = 4242;
  p.parent_pid = 1;
  p.run_token = "1234567890";
  p.forked_from_pid = 77;
  h.process = p;
  return h;
}

TEST(TraceWireTest, ActivityBytesEqualProtobufs) {
  FrameEncoder enc;
  for (const ActivityData& a : {FullKernel(), Memcpy(), ActivityData{}}) {
    proto::Activity p;
    ToProto(a, &p);
    EXPECT_EQ(enc.ActivityBytes(a), Serialize(p)) << p.DebugString();
  }
}

TEST(TraceWireTest, HeaderBytesEqualProtobufs) {
  FrameEncoder enc;
  for (const HeaderData& h : {FullHeader(), HeaderData{}}) {
    proto::TraceHeader p;
    ToProto(h, &p);
    EXPECT_EQ(enc.HeaderBytes(h), Serialize(p)) << p.DebugString();
  }
}

TEST(TraceWireTest, FramesEqualProtobufs) {
  FrameEncoder enc;
  std::vector<ActivityData> acts = {FullKernel(), Memcpy()};
  RangeData r;
  r.path = "decode/step 3";
  r.name = "step 3";
  r.start_ns = -1;
  r.end_ns = 99;
  r.tid = 12;
  r.depth = 1;
  std::vector<RangeData> ranges = {r, RangeData{}};
  std::string chunk;
  enc.Chunk(acts.data(), acts.size(), ranges.data(), ranges.size(), &chunk);
  proto::TraceFrame frame;
  for (const ActivityData& a : acts) ToProto(a, frame.mutable_chunk()->add_activities());
  for (const RangeData& x : ranges) ToProto(x, frame.mutable_chunk()->add_ranges());
  const std::string body = Serialize(frame);
  ASSERT_GT(chunk.size(), body.size());
  EXPECT_EQ(chunk.substr(chunk.size() - body.size()), body);  // after the length varint

  FooterData f;
  f.collector = FullHeader().collector;
  f.run = FullHeader().run;
  f.activity_count = 3;
  std::string footer;
  enc.Footer(f, &footer);
  proto::TraceFrame pf;
  ToProto(f, pf.mutable_footer());
  EXPECT_EQ(footer.substr(footer.size() - Serialize(pf).size()), Serialize(pf));

  std::string empty_chunk;
  enc.Chunk(nullptr, 0, nullptr, 0, &empty_chunk);
  proto::TraceFrame pe;
  pe.mutable_chunk();
  EXPECT_EQ(empty_chunk.substr(1), Serialize(pe));  // an empty oneof member is still written
}

TEST(TraceWireTest, ConstantsAgreeWithTheSchema) {
  EXPECT_EQ(std::string_view(kWireTraceMagic), kTraceMagic);
  EXPECT_EQ(kWireSchemaVersion, kTraceSchemaVersion);
  EXPECT_EQ(kProvenanceMeasuredGpu, static_cast<int>(proto::PROVENANCE_MEASURED_GPU));
}

TEST(TraceWireTest, StreamedFileReadsBackWholeAndCut) {
  const std::string dir = ::testing::TempDir() + "/trace_wire";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/t.qtrace";
  std::unique_ptr<WireTraceWriter> w;
  ASSERT_TRUE(WireTraceWriter::Open(path, &w).ok());
  ASSERT_TRUE(w->WriteHeader(FullHeader()).ok());
  ASSERT_TRUE(w->WriteChunk({FullKernel(), Memcpy()}, {}).ok());
  ASSERT_TRUE(w->WriteChunk({Memcpy()}, {}).ok());
  // Cut here: the .partial file reads up to the last whole chunk and says it was cut.
  absl::StatusOr<proto::Trace> cut = ReadTrace(path + ".partial");
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_TRUE(cut->truncated());
  EXPECT_EQ(cut->activities_size(), 3);
  EXPECT_EQ(cut->header().process().run_token(), "1234567890");

  FooterData f;
  f.collector = FullHeader().collector;
  ASSERT_TRUE(w->Close(f).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  absl::StatusOr<proto::Trace> whole = ReadTrace(path);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_FALSE(whole->truncated());
  ASSERT_EQ(whole->activities_size(), 3);
  EXPECT_EQ(whole->activities(0).nvtx_domain_paths().at("NCCL"), "ncclAllReduce");
  EXPECT_EQ(whole->header().collector().ended_by(), "signal SIGTERM");
  EXPECT_EQ(whole->header().devices(0).name(), "NVIDIA H200");
}

TEST(TraceWireTest, AbandonedWriterLeavesTheFileAsItWas) {
  const std::string path = ::testing::TempDir() + "/abandoned.qtrace";
  std::unique_ptr<WireTraceWriter> w;
  ASSERT_TRUE(WireTraceWriter::Open(path, &w).ok());
  ASSERT_TRUE(w->WriteHeader(HeaderData{}).ok());
  const auto size = std::filesystem::file_size(path + ".partial");
  w->Abandon();
  EXPECT_FALSE(w->WriteChunk({Memcpy()}, {}).ok());
  w.reset();
  EXPECT_EQ(std::filesystem::file_size(path + ".partial"), size);
}

}  // namespace
}  // namespace qprof::profiler
