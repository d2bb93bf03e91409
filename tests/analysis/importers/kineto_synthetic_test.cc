// Hand-made Kineto fixtures for each schema fact: old and new category spellings, string
// pids/tids, integer and decimal microseconds, huge integers, invalid UTF-8, annotation
// paths, counter ranges, member order, and the streaming reader's buffer boundaries.
#include <zlib.h>

#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/importers/kineto/byte_source.h"
#include "analysis/importers/kineto/json_stream.h"
#include "analysis/importers/kineto/kineto_importer.h"
#include "analysis/importers/kineto/kineto_numbers.h"
#include "gtest/gtest.h"
#include "simdjson.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

absl::StatusOr<proto::Trace> Import(const std::string& json) {
  return ImportKinetoJsonBytes(json, "fixture.json", Quiet());
}

const proto::Activity* Find(const proto::Trace& t, const std::string& name) {
  for (const auto& a : t.activities()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

// New generation: lower-case categories, decimal us, args.device/stream, annotations.
constexpr char kNew[] = R"J({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "computeMajor": 9, "computeMinor": 0,
                        "numSms": 132, "totalGlobalMem": 85000000000}],
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "decode", "pid": 10, "tid": 11, "ts": 100.0, "dur": 1000},
    {"ph": "X", "cat": "user_annotation", "name": "step 3", "pid": 10, "tid": 11, "ts": 110.5, "dur": 500},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 10, "tid": 11, "ts": 120, "dur": 5,
     "args": {"Input Dims": [[1, 2], [2, 3]]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 121.25, "dur": 3, "args": {"correlation": 7, "cbid": 211}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11,
     "ts": 900, "dur": 3, "args": {"correlation": 8}},
    {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 130.123456,
     "dur": 2.5005, "args": {"correlation": 7, "device": 0, "stream": 7, "grid": [4, 2, 1],
     "block": [128, 1, 1], "registers per thread": 96, "shared memory": 4096,
     "Collective name": "none", "queued": 0}},
    {"ph": "X", "cat": "kernel", "name": "later_kernel", "pid": 0, "tid": 7, "ts": 950,
     "dur": 1, "args": {"correlation": 8, "device": 0, "stream": 7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0,
     "tid": 7, "ts": 10, "dur": 4, "args": {"correlation": 3, "device": 0, "stream": 7, "bytes": 4096}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 20,
     "dur": 1, "args": {"device": 0, "stream": 7, "bytes": 64}},
    {"ph": "f", "cat": "ac2g", "id": 7, "pid": 0, "tid": 7, "ts": 130},
    {"name": "process_name", "ph": "M", "pid": "Spans", "tid": 0, "args": {"name": "x"}}
  ],
  "baseTimeNanoseconds": 1000000
})J";

TEST(KinetoSynthetic, NewGenerationFields) {
  auto t = Import(kNew);
  ASSERT_TRUE(t.ok()) << t.status();
  const proto::Activity* k = Find(*t, "gemm_kernel");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->kind(), proto::ACTIVITY_KIND_KERNEL);
  // 130.123456 us -> 130123 ns (+ 0.456 ns rounds down), plus baseTimeNanoseconds.
  EXPECT_EQ(k->start_ns(), 130123 + 1000000);
  EXPECT_EQ(k->end_ns() - k->start_ns(), 2501);  // 2.5005 us rounds half up
  EXPECT_EQ(k->device_id(), 0u);
  EXPECT_EQ(k->stream_id(), 7u);
  EXPECT_EQ(k->correlation_id(), 7u);
  EXPECT_EQ(k->grid().x(), 4u);
  EXPECT_EQ(k->grid().y(), 2u);
  EXPECT_EQ(k->block().x(), 128u);
  EXPECT_EQ(k->registers_per_thread(), 96u);
  EXPECT_EQ(k->static_shared_bytes(), 4096u);
  EXPECT_EQ(k->nvtx_path(), "decode/step 3");
  EXPECT_EQ(k->pid(), 10u);
  EXPECT_EQ(k->tid(), 11u);
  EXPECT_EQ(k->args().at("Collective name"), "none");
  EXPECT_EQ(k->args().count("queued"), 0u);
  // Launched at 900 us: inside "decode" only ("step 3" ended at 610.5 us).
  EXPECT_EQ(Find(*t, "later_kernel")->nvtx_path(), "decode");
  const proto::Activity* cp = Find(*t, "Memcpy HtoD (Pageable -> Device)");
  ASSERT_NE(cp, nullptr);
  EXPECT_EQ(cp->kind(), proto::ACTIVITY_KIND_MEMCPY);
  EXPECT_EQ(cp->copy_kind(), "HtoD");
  EXPECT_EQ(cp->bytes(), 4096u);
  EXPECT_EQ(Find(*t, "Memset (Device)")->kind(), proto::ACTIVITY_KIND_MEMSET);
  ASSERT_EQ(t->header().devices_size(), 1);
  EXPECT_EQ(t->header().devices(0).arch(), "sm_90");
  EXPECT_EQ(t->header().devices(0).sm_count(), 132u);
  EXPECT_EQ(t->ranges_size(), 2);
  EXPECT_EQ(t->activities_size(), 4);
}

// Old generation: capitalised categories, integer us, "stream 7" tids, "external id".
constexpr char kOld[] = R"J({"traceEvents": [
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunch", "pid": 5, "tid": "5", "ts": 1000, "dur": 2,
   "args": {"correlation": 1, "external id": 9}},
  {"ph": "X", "cat": "Kernel", "name": "old_kernel", "pid": 1, "tid": "stream 7", "ts": 1005, "dur": 10,
   "args": {"correlation": 1, "external id": 9, "registers per thread": 32}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH", "pid": 1, "tid": "stream 7", "ts": 1020, "dur": 3,
   "args": {"bytes": 8}},
  {"ph": "X", "cat": "Memset", "name": "Memset", "pid": 1, "tid": "stream 9", "ts": 1030, "dur": 1}
]})J";

TEST(KinetoSynthetic, OldGenerationSpellings) {
  auto t = Import(kOld);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->activities_size(), 3);
  const proto::Activity* k = Find(*t, "old_kernel");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->kind(), proto::ACTIVITY_KIND_KERNEL);
  EXPECT_EQ(k->start_ns(), 1005000);
  EXPECT_EQ(k->end_ns(), 1015000);
  EXPECT_EQ(k->device_id(), 1u);  // no args.device: pid is the device
  EXPECT_EQ(k->stream_id(), 7u);  // "stream 7"
  EXPECT_EQ(k->pid(), 5u);
  EXPECT_EQ(k->tid(), 5u);        // tid given as the string "5"
  EXPECT_EQ(Find(*t, "Memcpy DtoH")->copy_kind(), "DtoH");
  EXPECT_EQ(Find(*t, "Memset")->stream_id(), 9u);
}

TEST(KinetoSynthetic, BareArrayStringPidsHugeIntsAndBadUtf8) {
  std::string json = R"J([
    {"ph": "X", "cat": "kernel", "name": "k1", "pid": "GPU 2", "tid": "stream 3", "ts": 5, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 1, "ts": 6, "dur": 1,
     "args": {"correlation": 123456789012345678901234567890, "grid": [1, 1, 99999999999999999999]}},
    {"ph": "X", "cat": "kernel", "name": "k3", "pid": 99999999999999999999999, "tid": -4, "ts": 7, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "bad )J" "\xff\xfe" R"J( name", "pid": 0, "tid": 1, "ts": 8, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "far", "pid": 0, "tid": 1, "ts": 99999999999999999999, "dur": 1}
  ])J";
  auto t = Import(json);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->activities_size(), 4);  // "far" has an out-of-range ts: skipped and counted
  EXPECT_EQ(Find(*t, "k1")->device_id(), 2u);
  EXPECT_EQ(Find(*t, "k1")->stream_id(), 3u);
  EXPECT_EQ(Find(*t, "k2")->correlation_id(), 0u);  // beyond 64 bits: not a correlation
  EXPECT_NE(Find(*t, "k3"), nullptr);
  EXPECT_NE(Find(*t, "bad ?? name"), nullptr);
  std::string all;
  for (const auto& w : t->header().collector().warnings()) all += w + "\n";
  EXPECT_NE(all.find("invalid UTF-8"), std::string::npos) << all;
  EXPECT_NE(all.find("out-of-range ts/dur"), std::string::npos) << all;
  std::string bytes;
  EXPECT_TRUE(t->SerializeToString(&bytes));
}

TEST(KinetoSynthetic, CounterRangesJoinKernelsByNameAndOrder) {
  std::string json = R"J({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 20, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 30, "dur": 1},
    {"ph": "X", "cat": "cuda_profiler_range", "name": "a", "pid": 0, "tid": 0, "ts": 1, "dur": 99,
     "args": {"smsp__inst_executed.sum": 100, "label": "x"}},
    {"ph": "X", "cat": "cuda_profiler_range", "name": "a", "pid": 0, "tid": 0, "ts": 2, "dur": 99,
     "args": {"smsp__inst_executed.sum": 200}},
    {"ph": "X", "cat": "cuda_profiler_range", "name": "zzz", "pid": 0, "tid": 0, "ts": 3, "dur": 99,
     "args": {"smsp__inst_executed.sum": 300}}
  ]})J";
  auto t = Import(json);
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<double> a_values;
  for (const auto& a : t->activities()) {
    if (a.name() == "a") a_values.push_back(a.metrics().raw().at("smsp__inst_executed.sum"));
    if (a.name() == "b") EXPECT_TRUE(a.metrics().raw().empty());
    if (a.name() == "zzz") {
      EXPECT_EQ(a.kind(), proto::ACTIVITY_KIND_UNSPECIFIED);
      EXPECT_EQ(a.metrics().raw().at("smsp__inst_executed.sum"), 300);
    }
  }
  EXPECT_EQ(a_values, (std::vector<double>{100, 200}));
}

TEST(KinetoSynthetic, GpuAnnotationPathWhenNoLaunchRecord) {
  std::string json = R"J({"traceEvents": [
    {"ph": "X", "cat": "gpu_user_annotation", "name": "layer 1", "pid": 0, "tid": 7, "ts": 10, "dur": 50,
     "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 4}},
    {"ph": "X", "cat": "kernel", "name": "other_stream", "pid": 0, "tid": 8, "ts": 20, "dur": 5,
     "args": {"device": 0, "stream": 8}}
  ]})J";
  auto t = Import(json);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Find(*t, "k")->nvtx_path(), "layer 1");
  EXPECT_EQ(Find(*t, "other_stream")->nvtx_path(), "");
}

// The streaming reader must give the same answer whatever its buffer and batch sizes:
// tiny reads put every event across refill boundaries.
TEST(KinetoSynthetic, SameResultAtAwkwardBufferSizes) {
  std::mt19937 rng(1234);
  std::string json = R"J({"otherData": {"a": [1, 2, {"b": "}]\"{["}]}, "traceEvents": [)J";
  int64_t expect_ns = 0;
  for (int i = 0; i < 257; ++i) {
    int dur = static_cast<int>(rng() % 1000) + 1;
    expect_ns += dur * 1000;
    // Names and args with "}, {" inside strings and nested objects: bad fast-path cuts.
    absl::StrAppend(&json, i ? ",\n" : "", R"J({"ph":"X","cat":"kernel","name":"k\")J", i % 7,
                    R"J( \\ ]}, {","pid":0,"tid":7,"args":{"l":[{"a":1}, {"b":"}, {"}]},"ts":)J",
                    i * 2000, ",\"dur\":", dur, "}");
  }
  json += R"J(], "deviceProperties": [{"id": 0, "name": "late device"}]})J";
  for (size_t read : {1, 7, 64, 1000, 1 << 20}) {
    for (size_t batch : {1, 300, 4 << 20}) {
      SCOPED_TRACE(absl::StrCat("read ", read, " batch ", batch));
      struct Count : TraceJsonHandler {
        absl::Status OnMember(std::string_view key, std::string_view) override {
          keys += std::string(key) + ",";
          return absl::OkStatus();
        }
        absl::Status OnEvents(EventBatch* b) override {
          EXPECT_EQ(b->data[0], '[');
          EXPECT_EQ(b->data[b->size - 1], ']');
          simdjson::dom::element doc;
          if (parser.parse(b->data, b->size, false).get(doc) != simdjson::SUCCESS) {
            // A fast-path cut inside a string or a nested object: ask for exact boundaries.
            EXPECT_TRUE(b->events.empty());
            ++aborted;
            b->consumed = 0;
            return absl::AbortedError("retry");
          }
          events += static_cast<int>(doc.get_array().size());
          if (!b->events.empty()) EXPECT_EQ(doc.get_array().size(), b->events.size());
          return absl::OkStatus();
        }
        simdjson::dom::parser parser;
        int aborted = 0;
        std::string keys;
        int events = 0;
      } count;
      auto src = MemoryByteSource(json, "mem");
      JsonStreamLimits limits;
      limits.read_bytes = read;
      limits.batch_bytes = batch;
      ASSERT_TRUE(StreamTraceJson(src.get(), "mem", &count, nullptr, limits).ok());
      EXPECT_EQ(count.events, 257);
      EXPECT_EQ(count.keys, "otherData,deviceProperties,");
    }
  }
  auto t = Import(json);
  ASSERT_TRUE(t.ok()) << t.status();
  int64_t got = 0;
  for (const auto& a : t->activities()) got += a.end_ns() - a.start_ns();
  EXPECT_EQ(got, expect_ns);
  EXPECT_EQ(t->header().devices(0).name(), "late device");
  EXPECT_EQ(Find(*t, "k\"3 \\ ]}, {")->kind(), proto::ACTIVITY_KIND_KERNEL);
}

std::string Gzip(const std::string& data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(KinetoSynthetic, GzipWholeTruncatedAndConcatenated) {
  std::string gz = Gzip(kOld);
  auto t = ImportKinetoJsonBytes(gz, "x.json.gz", Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->activities_size(), 3);
  // Cut in the middle of the compressed stream: the events inflated before the cut are kept
  // and the cut is named with its compressed offset.
  auto cut = ImportKinetoJsonBytes(gz.substr(0, gz.size() / 2), "x.json.gz", Quiet());
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_TRUE(cut->truncated());
  EXPECT_LT(cut->activities_size(), 3);
  EXPECT_NE(cut->truncation_detail().find("x.json.gz: truncated gzip stream (ended at compressed byte"),
            std::string::npos)
      << cut->truncation_detail();
  // Two members (gzip a; gzip b; cat) read as one stream.
  std::string json(kOld);
  std::string two = Gzip(json.substr(0, 40)) + Gzip(json.substr(40));
  auto t2 = ImportKinetoJsonBytes(two, "two.json.gz", Quiet());
  ASSERT_TRUE(t2.ok()) << t2.status();
  EXPECT_EQ(t2->activities_size(), 3);
}

TEST(KinetoSynthetic, ErrorsNameTheFileAndOffset) {
  auto no_events = Import(R"J({"schemaVersion": 1})J");
  ASSERT_FALSE(no_events.ok());
  EXPECT_EQ(no_events.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(no_events.status().message()).find("fixture.json: JSON without a traceEvents"),
            std::string::npos);
  // Cut inside the events: the events before the cut, and where it was cut.
  auto truncated = Import(std::string(kNew).substr(0, 900));
  ASSERT_TRUE(truncated.ok()) << truncated.status();
  EXPECT_TRUE(truncated->truncated());
  EXPECT_NE(truncated->truncation_detail().find("byte"), std::string::npos);
  auto malformed = Import(R"J({"traceEvents": [{"ph": "X", "cat": "kernel"}, {"ph": tru}]})J");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(malformed.status().message()).find("event at byte 47"), std::string::npos)
      << malformed.status();
  auto scalar = Import("42");
  ASSERT_FALSE(scalar.ok());
  EXPECT_EQ(scalar.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(KinetoNumbers, MicrosToNsIsExact) {
  EXPECT_EQ(MicrosToNs("1"), 1000);
  EXPECT_EQ(MicrosToNs("1695835543008415"), 1695835543008415000);
  EXPECT_EQ(MicrosToNs("4458676983543.183"), 4458676983543183);
  EXPECT_EQ(MicrosToNs("0.0005"), 1);
  EXPECT_EQ(MicrosToNs("0.0004"), 0);
  EXPECT_EQ(MicrosToNs("-2.5"), -2500);
  EXPECT_EQ(MicrosToNs("1.5e3"), 1500000);
  EXPECT_EQ(MicrosToNs("99999999999999999"), std::nullopt);
  EXPECT_EQ(MicrosToNs("abc"), std::nullopt);
  EXPECT_EQ(MicrosToNs("1."), std::nullopt);
  EXPECT_EQ(ParseUint("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseUint("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseUint("7.0"), 7u);
  EXPECT_EQ(ParseUint("7.5"), std::nullopt);
  EXPECT_EQ(TrailingNumber("stream 12"), 12u);
  EXPECT_EQ(TrailingNumber("Spans"), std::nullopt);
}

}  // namespace
}  // namespace qprof::importers

namespace qprof::importers {
namespace {

// A well-formed document cut every few bytes: whatever the batches and threads, the same
// events before the cut. A malformed one (brackets broken inside an event that nothing
// reads): worker threads give what one thread gives at the same batch size (how far a
// malformed event reaches depends on where batches are cut), and never an internal error.
// (The fuzzer found a cut where the fast path's rescan gave up with an internal error.)
TEST(KinetoSynthetic, CutsGiveTheSameResultWhateverTheBatchesAndThreads) {
  const std::string doc(kNew);
  auto options = [](int threads, size_t batch) {
    ImportOptions o = Quiet();
    o.threads = threads;
    o.batch_bytes = batch;
    return o;
  };
  for (size_t n = 1; n <= doc.size(); n += 7) {
    const std::string in = doc.substr(0, n);
    auto base = ImportKinetoJsonBytes(in, "cut.json", options(1, 0));
    EXPECT_NE(base.status().code(), absl::StatusCode::kInternal) << base.status();
    for (auto [threads, batch] : {std::pair{1, size_t{64}}, std::pair{2, size_t{64}},
                                  std::pair{3, size_t{200}}}) {
      auto other = ImportKinetoJsonBytes(in, "cut.json", options(threads, batch));
      ASSERT_EQ(base.ok(), other.ok()) << n << ": " << base.status() << " / " << other.status();
      if (!base.ok()) continue;
      EXPECT_EQ(base->activities_size(), other->activities_size()) << n;
      EXPECT_EQ(base->truncated(), other->truncated()) << n;
    }
  }
  const std::string broken =
      R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "args": {"a": [[1], [2}}, )"
      R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2})";
  for (size_t batch : {size_t{0}, size_t{64}}) {
    auto one = ImportKinetoJsonBytes(broken, "broken.json", options(1, batch));
    auto two = ImportKinetoJsonBytes(broken, "broken.json", options(2, batch));
    EXPECT_NE(one.status().code(), absl::StatusCode::kInternal) << one.status();
    ASSERT_EQ(one.ok(), two.ok()) << batch << ": " << one.status() << " / " << two.status();
    if (one.ok()) {
      EXPECT_EQ(one->activities_size(), two->activities_size());
    }
  }
}

}  // namespace
}  // namespace qprof::importers
