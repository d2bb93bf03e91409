// Test helpers: text-proto trace fixtures and golden files under tests/analysis/testdata.
#ifndef QPROF_TESTS_ANALYSIS_FIXTURE_UTIL_H_
#define QPROF_TESTS_ANALYSIS_FIXTURE_UTIL_H_

#include <string>

#include "base/file_util.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "proto/trace.pb.h"

namespace qprof::testing {

inline std::string TestDataPath(const std::string& rel) {
  return std::string(QPROF_SOURCE_DIR) + "/tests/analysis/testdata/" + rel;
}

// Reads a text-format proto::Trace; fails the test on error.
inline proto::Trace LoadTextTrace(const std::string& rel) {
  proto::Trace t;
  auto text = ReadFile(TestDataPath(rel));
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return t;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(*text, &t)) << rel;
  return t;
}

}  // namespace qprof::testing

#endif  // QPROF_TESTS_ANALYSIS_FIXTURE_UTIL_H_
