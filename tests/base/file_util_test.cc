#include "base/file_util.h"

#include <filesystem>

#include "gtest/gtest.h"

namespace qprof {
namespace {

std::string TestDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("qprof_file_util_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(FileUtil, AtomicWriteReplacesAndLeavesNoTemp) {
  std::string dir = TestDir();
  std::string path = dir + "/out.txt";
  ASSERT_TRUE(WriteFileAtomic(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomic(path, "second").ok());
  auto data = ReadFile(path);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(*data, "second");
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) { (void)e; ++entries; }
  EXPECT_EQ(entries, 1) << "a temporary file was left behind";
  std::filesystem::remove_all(dir);
}

TEST(FileUtil, AtomicWriteIntoMissingDirFailsCleanly) {
  auto st = WriteFileAtomic("/nonexistent-dir-qprof/x/out.txt", "data");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent-dir-qprof/x/out.txt"), std::string::npos);
  // The user's path, not the temporary next to it.
  EXPECT_EQ(st.message().find(".tmp."), std::string::npos) << st.message();
}

int Entries(const std::string& dir) {
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) { (void)e; ++n; }
  return n;
}

TEST(FileUtil, FileSetWritesAllOrNothing) {
  std::string dir = TestDir();
  {
    AtomicFileSet set;
    ASSERT_TRUE(set.Add(dir + "/a.json", "A").ok());
    ASSERT_TRUE(set.Add(dir + "/b.html", "B").ok());
    EXPECT_FALSE(std::filesystem::exists(dir + "/a.json")) << "visible before Commit";
    ASSERT_TRUE(set.Commit().ok());
  }
  EXPECT_EQ(*ReadFile(dir + "/a.json"), "A");
  EXPECT_EQ(*ReadFile(dir + "/b.html"), "B");
  EXPECT_EQ(Entries(dir), 2);
  {
    // The second output cannot be written: the first is not renamed either, and no
    // temporary stays behind.
    AtomicFileSet set;
    ASSERT_TRUE(set.Add(dir + "/a.json", "new A").ok());
    absl::Status st = set.Add(dir + "/missing/b.html", "new B");
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find(dir + "/missing/b.html"), std::string::npos) << st.message();
  }
  EXPECT_EQ(*ReadFile(dir + "/a.json"), "A") << "a failed set replaced an earlier output";
  EXPECT_EQ(Entries(dir), 2) << "a temporary file was left behind";
  std::filesystem::remove_all(dir);
}

TEST(FileUtil, MapReadsBytesAndRejectsDirectories) {
  std::string dir = TestDir();
  std::string path = dir + "/m.bin";
  ASSERT_TRUE(WriteFileAtomic(path, std::string("abc\0def", 7)).ok());
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->size(), 7u);
  EXPECT_EQ(m->view(), std::string_view("abc\0def", 7));
  EXPECT_FALSE(MappedFile::Open(dir).ok());
  EXPECT_EQ(MappedFile::Open(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qprof
