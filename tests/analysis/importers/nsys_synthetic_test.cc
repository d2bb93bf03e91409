// Hand-made Nsight Systems databases for the schema facts the real files do not all show:
// tables missing, columns missing or extra, NVTX names by textId, NULL ends, start/end
// ranges, correlation ids reused across processes, graph launches with no runtime record.
#include <sqlite3.h>

#include <string>

#include "analysis/importers/import.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/sqlite_fixture.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof::importers {
namespace {

ImportOptions Quiet() {
  ImportOptions o;
  o.progress = false;
  return o;
}

using testing::MakeDb;

constexpr int64_t kTidA = (int64_t{100} << 24) | 101;  // pid 100, tid 101
constexpr int64_t kTidB = (int64_t{200} << 24) | 201;  // pid 200, tid 201

TEST(NsysSynthetic, PathsTextIdsNullEndsAndProcesses) {
  std::string sql = R"(
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
    INSERT INTO StringIds VALUES (1, 'kernel_demangled(int)'), (2, 'kshort'), (3, '_Z6kernelv'),
                                 (4, 'step 7'), (5, 'only_short');
    CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
      streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
      shortName INTEGER, mangledName INTEGER, gridX INTEGER, blockX INTEGER, extraColumn TEXT);
    INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
      (1000, 1100, 0, 7, 5, )" + std::to_string(int64_t{100} << 24) + R"(, 1, 2, 3, 64, 128, 'x'),
      (2000, 2300, 1, 9, 5, )" + std::to_string(int64_t{200} << 24) + R"(, NULL, 5, NULL, 1, 32, 'y'),
      (3000, 2900, 0, 7, 99, )" + std::to_string(int64_t{100} << 24) + R"(, 1, 2, 3, 1, 1, 'z');
    CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
      correlationId INTEGER);
    INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
      (950, 960, )" + std::to_string(kTidA) + R"(, 5), (1950, 1960, )" + std::to_string(kTidB) + R"(, 5);
    CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,
      textId INTEGER, globalTid INTEGER);
    INSERT INTO NVTX_EVENTS VALUES
      (900, NULL, 59, 'decode', NULL, )" + std::to_string(kTidA) + R"(),
      (940, 970, 59, NULL, 4, )" + std::to_string(kTidA) + R"(),
      (940, 5000, 60, 'async region', NULL, )" + std::to_string(kTidA) + R"(),
      (1900, 2000, 59, 'other process', NULL, )" + std::to_string(kTidB) + R"(),
      (10, 20, 75, 'a mark', NULL, )" + std::to_string(kTidA) + R"();
  )";
  std::string path = MakeDb("paths.sqlite", sql);
  auto t = ImportFile(path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->activities_size(), 3);
  const auto& a = t->activities(0);
  EXPECT_EQ(a.name(), "kernel_demangled(int)");
  EXPECT_EQ(a.mangled_name(), "_Z6kernelv");
  EXPECT_EQ(a.nvtx_path(), "decode/step 7");  // NULL end: open to the end; textId name
  EXPECT_EQ(a.pid(), 100u);
  EXPECT_EQ(a.tid(), 101u);
  EXPECT_EQ(a.grid().x(), 64u);
  EXPECT_EQ(a.block().x(), 128u);
  const auto& b = t->activities(1);
  EXPECT_EQ(b.name(), "only_short");  // no demangled name: shortName
  // Same correlation id 5 in another process: its own launch, its own thread's ranges.
  EXPECT_EQ(b.nvtx_path(), "other process");
  EXPECT_EQ(b.pid(), 200u);
  const auto& c = t->activities(2);
  EXPECT_EQ(c.end_ns(), c.start_ns());  // end < start: kept with zero length, counted
  EXPECT_EQ(c.nvtx_path(), "");         // no runtime record
  EXPECT_EQ(t->header().collector().records_invalid(), 1u);
  // Ranges: 3 push/pop + 1 start/end (the mark, eventType 75, is not a range).
  EXPECT_EQ(t->ranges_size(), 4);
  ASSERT_EQ(t->header().devices_size(), 2);  // no TARGET_INFO_GPU
}

TEST(NsysSynthetic, OnlyStringIdsIsAnEmptyTrace) {
  std::string path = MakeDb("empty.sqlite", "CREATE TABLE StringIds (id INTEGER, value TEXT);");
  auto t = ImportFile(path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->activities_size(), 0);
  EXPECT_FALSE(t->header().collector().warnings().empty());
}

TEST(NsysSynthetic, OtherSqliteIsWrongKind) {
  std::string path = MakeDb("other.sqlite", "CREATE TABLE people (name TEXT);");
  auto t = ImportFile(path, Quiet());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(t.status().message()).find("not an Nsight Systems export"),
            std::string::npos);
  EXPECT_NE(std::string(t.status().message()).find(path), std::string::npos);
}

TEST(NsysSynthetic, TruncatedRealFileIsOneClearError) {
  std::string dir = testing::TestDataDir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/testdata (set QPROF_TESTDATA)";
  std::string bytes = testing::ReadAll(dir + "/nsys/h100x2_train_before.sqlite");
  for (size_t keep : {size_t{100}, size_t{4096}, bytes.size() / 3}) {
    std::string path = testing::WriteTemp("cut.sqlite", bytes.substr(0, keep));
    auto t = ImportFile(path, Quiet());
    ASSERT_FALSE(t.ok()) << keep;
    std::string msg(t.status().message());
    EXPECT_EQ(msg.find('\n'), std::string::npos);
    EXPECT_EQ(msg.rfind(path, 0), 0u) << msg;
  }
}

}  // namespace
}  // namespace qprof::importers
