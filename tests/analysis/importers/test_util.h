// Shared helpers for the importer tests: where the real traces are, temp files.
#ifndef QPROF_TESTS_IMPORTERS_TEST_UTIL_H_
#define QPROF_TESTS_IMPORTERS_TEST_UTIL_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace qprof::importers::testing {

// ../shared/testdata next to the source tree, or $QPROF_TESTDATA; "" when neither exists.
inline std::string TestDataDir() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) {
    if (std::filesystem::is_directory(env)) return env;
  }
  std::filesystem::path p = std::filesystem::path(QPROF_SOURCE_DIR) / ".." / "shared" / "testdata";
  if (std::filesystem::is_directory(p)) return p.lexically_normal().string();
  return "";
}

// Files under TestDataDir()/sub with the given suffix, sorted.
inline std::vector<std::string> TestFiles(const std::string& sub, const std::string& suffix) {
  std::vector<std::string> out;
  std::string dir = TestDataDir();
  if (dir.empty() || !std::filesystem::is_directory(dir + "/" + sub)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/" + sub)) {
    std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(p);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file in a per-process temp dir, removed by the caller or left in /tmp.
inline std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("qprof_import_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace qprof::importers::testing

#endif  // QPROF_TESTS_IMPORTERS_TEST_UTIL_H_
