// A per-test temporary folder, removed afterwards.
#ifndef QPROF_TESTS_WEIGHTS_TEMP_DIR_H_
#define QPROF_TESTS_WEIGHTS_TEMP_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace qprof::weights::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("qprof_weights_test.") + std::to_string(getpid()) + "." +
            info->test_suite_name() + "." + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static void WriteBytes(const std::string& path, const std::string& bytes) {
    std::filesystem::remove(path);  // a fresh file: rewriting one in place is slow on ext4
    std::ofstream(path, std::ios::binary) << bytes;
  }
  static std::string ReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::filesystem::path dir_;
};

}  // namespace qprof::weights::testing

#endif  // QPROF_TESTS_WEIGHTS_TEMP_DIR_H_
