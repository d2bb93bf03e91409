// Content-based detection and the error line for inputs that are not traces.
#include <filesystem>
#include <set>
#include <string>

#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

TEST(Detect, FromBytes) {
  EXPECT_EQ(DetectInputKindFromBytes("QPROFTR1\x01"), InputKind::kQtrace);
  EXPECT_EQ(DetectInputKindFromBytes(std::string("SQLite format 3\0xx", 18)), InputKind::kNsysSqlite);
  EXPECT_EQ(DetectInputKindFromBytes("\x1f\x8b\x08"), InputKind::kKinetoJson);
  EXPECT_EQ(DetectInputKindFromBytes("\xEF\xBB\xBF  \n{\"traceEvents\": []}"), InputKind::kKinetoJson);
  EXPECT_EQ(DetectInputKindFromBytes("[{\"ph\": \"X\"}]"), InputKind::kKinetoJson);
  EXPECT_EQ(DetectInputKindFromBytes("==PROF== x\n\"ID\",\"Kernel Name\",\"Metric Name\"\n"),
            InputKind::kNcuCsv);
  EXPECT_EQ(DetectInputKindFromBytes("\"ID\",\"Kernel Name\",\"dram__bytes.sum\"\n"), InputKind::kNcuCsv);
  EXPECT_EQ(DetectInputKindFromBytes("Kernel Name,Metric Name\n"), InputKind::kUnknown);
  EXPECT_EQ(DetectInputKindFromBytes("hello"), InputKind::kUnknown);
  EXPECT_EQ(DetectInputKindFromBytes(""), InputKind::kUnknown);
  EXPECT_STREQ(InputKindName(InputKind::kNcuCsv), "ncu-csv");
}

TEST(Detect, ContentNotExtension) {
  // A Kineto trace named .csv is still read as Kineto.
  std::string path = testing::WriteTemp("trace.csv", R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]})");
  auto t = ImportFile(path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().source_kind(), "kineto-json");
  EXPECT_EQ(t->header().source_path(), path);
}

void ExpectOneLine(const absl::StatusOr<proto::Trace>& t, absl::StatusCode code,
                   const std::string& path, const std::string& what) {
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), code) << t.status();
  std::string msg(t.status().message());
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
}

TEST(Detect, BadInputsGiveOneClearLine) {
  ExpectOneLine(ImportFile("/nonexistent/x.json", Quiet()), absl::StatusCode::kNotFound,
                "/nonexistent/x.json", "no such file");
  std::string empty = testing::WriteTemp("empty.json", "");
  ExpectOneLine(ImportFile(empty, Quiet()), absl::StatusCode::kInvalidArgument, empty, "empty file");
  std::string text = testing::WriteTemp("notes.txt", "just some notes\n");
  ExpectOneLine(ImportFile(text, Quiet()), absl::StatusCode::kInvalidArgument, text,
                "not a trace qprof can read");
  std::string dir = testing::WriteTemp("d", "");
  std::remove(dir.c_str());
  std::filesystem::create_directory(dir);
  ExpectOneLine(ImportFile(dir, Quiet()), absl::StatusCode::kInvalidArgument, dir, "directory");
  // A file cut inside its events is not an error: it yields what came before the cut.
  std::string json = testing::WriteTemp("cut.json", "{\"traceEvents\": [{\"ph\": \"X\", \"cat\"");
  auto cut = ImportFile(json, Quiet());
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_TRUE(cut->truncated());
  EXPECT_NE(cut->truncation_detail().find("truncated JSON: input ended at byte"), std::string::npos)
      << cut->truncation_detail();
  std::string header_cut = testing::WriteTemp("cut_header.json", "{\"traceEv");
  ExpectOneLine(ImportFile(header_cut, Quiet()), absl::StatusCode::kDataLoss, header_cut,
                "truncated JSON");
  std::string gz = testing::WriteTemp("bad.json.gz", std::string("\x1f\x8b\x08\x00garbage", 11));
  ExpectOneLine(ImportFile(gz, Quiet()), absl::StatusCode::kDataLoss, gz, "gzip");
  ImportOptions small = Quiet();
  small.max_input_bytes = 10;
  std::string big = testing::WriteTemp("big.json", std::string(100, ' ') + "[]");
  ExpectOneLine(ImportFile(big, small), absl::StatusCode::kInvalidArgument, big, "input limit");
}

TEST(Detect, TruncatedRealGzip) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  std::string bytes = testing::ReadAll(dir + "/kineto/a100_alexnet.json.gz");
  std::string path = testing::WriteTemp("cut.json.gz", bytes.substr(0, bytes.size() * 2 / 3));
  // Everything before the cut is kept, and the cut is named with its offset.
  auto cut = ImportFile(path, Quiet());
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_TRUE(cut->truncated());
  EXPECT_NE(cut->truncation_detail().find("truncated gzip"), std::string::npos)
      << cut->truncation_detail();
  EXPECT_NE(cut->truncation_detail().find("byte"), std::string::npos) << cut->truncation_detail();
  bool warned = false;
  for (const std::string& w : cut->header().collector().warnings()) {
    warned |= w.find("ends early") != std::string::npos;
  }
  EXPECT_TRUE(warned);
  std::string whole_path = testing::WriteTemp("whole.json.gz", bytes);
  auto whole = ImportFile(whole_path, Quiet());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_GT(cut->activities_size(), 0);
  EXPECT_LT(cut->activities_size(), whole->activities_size());
  // The prefix holds whole events only: each kept kernel is one of the whole file's.
  std::set<std::pair<int64_t, std::string>> all;
  for (const auto& a : whole->activities()) all.insert({a.start_ns(), a.name()});
  for (const auto& a : cut->activities()) {
    EXPECT_TRUE(all.count({a.start_ns(), a.name()})) << a.name() << " at " << a.start_ns();
  }
}

}  // namespace
}  // namespace qprof::importers
