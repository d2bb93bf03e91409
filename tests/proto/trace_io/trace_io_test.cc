#include "proto/trace_io.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/vocabulary.h"

namespace qprof {
namespace {

namespace fs = std::filesystem;

class TraceIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qprof_trace_io_test." + std::to_string(getpid()) + "." +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  static void WriteBytes(const std::string& path, const std::string& bytes) {
    // Remove first: truncating an existing file makes ext4 flush it on close (~3 ms).
    fs::remove(path);
    std::ofstream(path, std::ios::binary) << bytes;
  }
  static std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
};

proto::Trace MakeTrace(int activities, uint32_t seed) {
  std::mt19937 rng(seed);
  proto::Trace t;
  auto* h = t.mutable_header();
  h->set_schema_version(kTraceSchemaVersion);
  h->set_provenance(proto::PROVENANCE_MEASURED_HOST);
  h->mutable_run()->set_model("tiny");
  h->mutable_run()->set_format("mxfp4");
  h->mutable_run()->set_batch(16);
  auto* d = h->add_devices();
  d->set_name("host CPU");
  d->set_kind("host_cpu");
  h->mutable_collector()->set_collector("host");
  for (int i = 0; i < activities; ++i) {
    auto* a = t.add_activities();
    a->set_kind(proto::ACTIVITY_KIND_KERNEL);
    a->set_start_ns(1000 * i);
    a->set_end_ns(1000 * i + 1 + rng() % 900);
    a->set_correlation_id(i);
    a->set_name("moe_slot_gemv<" + std::to_string(rng() % 7) + ">");
    a->set_nvtx_path("decode/step " + std::to_string(i / 50) + "/layer 3/moe");
    a->mutable_grid()->set_x(1 + rng() % 1000);
    if (i % 3 == 0) a->mutable_metrics()->set_tensor_pipe_pct(0.5 * (i % 200));
  }
  for (int i = 0; i < activities / 10; ++i) {
    auto* r = t.add_ranges();
    r->set_path("decode/step " + std::to_string(i));
    r->set_start_ns(i);
    r->set_end_ns(i + 10);
  }
  return t;
}

void ExpectSameTrace(const proto::Trace& a, const proto::Trace& b) {
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(a, b)) << diff;
}

TEST_F(TraceIoTest, RoundTripWithSeveralChunks) {
  const proto::Trace t = MakeTrace(1000, 1);
  const std::string path = Path("a.qtrace");
  ASSERT_TRUE(WriteTrace(t, path, 97).ok());
  EXPECT_FALSE(fs::exists(path + ".partial"));
  auto back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->truncated());
  ExpectSameTrace(t, *back);
  EXPECT_TRUE(LooksLikeQtrace(ReadBytes(path).substr(0, 16)));
}

TEST_F(TraceIoTest, EmptyTraceRoundTrips) {
  const proto::Trace t = MakeTrace(0, 2);
  ASSERT_TRUE(WriteTrace(t, Path("e.qtrace")).ok());
  auto back = ReadTrace(Path("e.qtrace"));
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameTrace(t, *back);
}

TEST_F(TraceIoTest, StreamingWriterRenamesOnCloseAndFooterOverridesRun) {
  const std::string path = Path("s.qtrace");
  auto w = TraceWriter::Open(path);
  ASSERT_TRUE(w.ok()) << w.status();
  proto::TraceHeader h;
  h.mutable_run()->set_steps(1);
  ASSERT_TRUE((*w)->WriteHeader(h).ok());
  EXPECT_FALSE((*w)->WriteHeader(h).ok());  // twice is a programming error
  proto::TraceChunk c;
  c.add_activities()->set_name("k");
  ASSERT_TRUE((*w)->WriteChunk(c).ok());
  EXPECT_TRUE(fs::exists(path + ".partial"));
  EXPECT_FALSE(fs::exists(path));
  proto::TraceFooter f;
  f.mutable_run()->set_steps(8);
  f.mutable_run()->set_wall_time_ns(12345);
  ASSERT_TRUE((*w)->Close(f).ok());
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));
  auto back = ReadTrace(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->header().run().steps(), 8u);
  EXPECT_EQ(back->header().run().wall_time_ns(), 12345u);
  EXPECT_EQ(back->activities_size(), 1);
}

TEST_F(TraceIoTest, ChunkBeforeHeaderIsRejected) {
  auto w = TraceWriter::Open(Path("x.qtrace"));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->WriteChunk(proto::TraceChunk()).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(TraceIoTest, WriterThatDiesLeavesReadablePartial) {
  const std::string path = Path("crash.qtrace");
  {
    auto w = TraceWriter::Open(path);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->WriteHeader(proto::TraceHeader()).ok());
    for (int i = 0; i < 3; ++i) {
      proto::TraceChunk c;
      c.add_activities()->set_correlation_id(i);
      ASSERT_TRUE((*w)->WriteChunk(c).ok());
    }
  }  // destroyed without Close()
  auto back = ReadTrace(path + ".partial");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->truncated());
  EXPECT_EQ(back->activities_size(), 3);
  EXPECT_NE(back->truncation_detail().find("no footer"), std::string::npos);
}

// Cut a valid file at every byte: the reader returns exactly the whole chunks before the
// cut with truncated = true and the byte offset, or DataLoss when the header is cut.
TEST_F(TraceIoTest, TruncatedAtEveryByteReadsWholeChunks) {
  const proto::Trace t = MakeTrace(40, 3);
  const std::string full_path = Path("full.qtrace");
  ASSERT_TRUE(WriteTrace(t, full_path, 7).ok());  // chunks of 7 activities
  const std::string bytes = ReadBytes(full_path);
  int last_count = 0;
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    const std::string p = Path("cut.qtrace");
    WriteBytes(p, bytes.substr(0, cut));
    auto back = ReadTrace(p);
    if (!back.ok()) {
      ASSERT_EQ(back.status().code(), absl::StatusCode::kDataLoss) << cut << back.status();
      ASSERT_NE(std::string(back.status().message()).find("header"), std::string::npos);
      ASSERT_EQ(last_count, 0) << "header error after chunks were readable, cut " << cut;
      continue;
    }
    ASSERT_TRUE(back->truncated()) << cut;
    ASSERT_TRUE(back->activities_size() % 7 == 0 || back->activities_size() == 40)
        << "partial chunk returned at cut " << cut;
    ASSERT_GE(back->activities_size(), last_count);
    last_count = back->activities_size();
    for (int i = 0; i < back->activities_size(); ++i) {
      ASSERT_EQ(back->activities(i).correlation_id(), t.activities(i).correlation_id());
    }
    if (back->truncation_detail().find("no footer") == std::string::npos) {
      ASSERT_NE(back->truncation_detail().find("stopped at byte"), std::string::npos)
          << back->truncation_detail();
    }
  }
  EXPECT_EQ(last_count, 40);  // every chunk whole once the cut is inside the footer
}

TEST_F(TraceIoTest, NotATraceNamesTheFile) {
  const std::string p = Path("notes.txt");
  WriteBytes(p, "hello, this is not a trace at all\n");
  auto back = ReadTrace(p);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(back.status().message()).find(p), std::string::npos);
  EXPECT_NE(std::string(back.status().message()).find("not a .qtrace"), std::string::npos);
  EXPECT_FALSE(LooksLikeQtrace("hello"));
  EXPECT_FALSE(LooksLikeQtrace("QPROF"));
}

TEST_F(TraceIoTest, EmptyFileAndMagicOnly) {
  WriteBytes(Path("empty.qtrace"), "");
  auto back = ReadTrace(Path("empty.qtrace"));
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(back.status().message()).find("empty"), std::string::npos);
  WriteBytes(Path("magic.qtrace"), std::string(kTraceMagic));
  back = ReadTrace(Path("magic.qtrace"));
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadTrace(Path("missing.qtrace")).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(TraceIoTest, AbsurdFrameLengthStopsCleanly) {
  const proto::Trace t = MakeTrace(10, 4);
  // A header and one chunk, then a frame claiming 2^40 bytes.
  {
    auto w = TraceWriter::Open(Path("u.qtrace"));
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->WriteHeader(t.header()).ok());
    proto::TraceChunk c;
    *c.add_activities() = t.activities(0);
    ASSERT_TRUE((*w)->WriteChunk(c).ok());
  }
  std::string partial = ReadBytes(Path("u.qtrace.partial"));
  partial += std::string("\x80\x80\x80\x80\x80\x20", 6);  // varint 2^40
  partial += "garbage";
  WriteBytes(Path("v.qtrace"), partial);
  auto back = ReadTrace(Path("v.qtrace"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->truncated());
  EXPECT_EQ(back->activities_size(), 1);
  EXPECT_NE(back->truncation_detail().find("implausible"), std::string::npos)
      << back->truncation_detail();
}

// Flipped bytes anywhere: the reader returns an error or a (possibly truncated) trace whose
// activities are a prefix-consistent subset; it never crashes or hangs.
TEST_F(TraceIoTest, RandomCorruptionNeverCrashes) {
  const proto::Trace t = MakeTrace(30, 6);
  ASSERT_TRUE(WriteTrace(t, Path("good.qtrace"), 4).ok());
  const std::string good = ReadBytes(Path("good.qtrace"));
  std::mt19937 rng(77);
  int errors = 0, truncated = 0;
  for (int i = 0; i < 400; ++i) {
    std::string bad = good;
    const size_t at = 8 + rng() % (bad.size() - 8);  // keep the magic
    bad[at] = static_cast<char>(rng());
    WriteBytes(Path("bad.qtrace"), bad);
    auto back = ReadTrace(Path("bad.qtrace"));
    if (!back.ok()) {
      ++errors;
      ASSERT_TRUE(back.status().code() == absl::StatusCode::kDataLoss ||
                  back.status().code() == absl::StatusCode::kInvalidArgument)
          << back.status();
      continue;
    }
    if (back->truncated()) ++truncated;
    ASSERT_LE(back->activities_size(), 30 + 4);
  }
  // Most flips land in field payloads and parse; some must hit lengths and be caught.
  EXPECT_GT(errors + truncated, 0);
}

}  // namespace
}  // namespace qprof
