// The checked-in JSON Schemas (schemas/*.schema.json) are what the descriptor-driven
// generator makes today: a field added to proto/profile.proto or proto/diff.proto shows up
// here until the schemas are regenerated:
//   QPROF_UPDATE_GOLDEN=1 build/tests/reports/reports_json_schema_test
// Outputs are validated against these files with jsonschema in the Python tests
// (python/tests/test_schemas.py).
#include "reports/json/json_schema.h"

#include <cstdlib>
#include <string>

#include "base/file_util.h"
#include "gtest/gtest.h"
#include "proto/profile.pb.h"

namespace qprof::reports {
namespace {

void CheckShipped(const std::string& name) {
  const std::string path = std::string(QPROF_SOURCE_DIR) + "/schemas/" + name + ".schema.json";
  const std::string generated = ShippedJsonSchema(name);
  ASSERT_FALSE(generated.empty());
  if (std::getenv("QPROF_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(WriteFileAtomic(path, generated).ok());
    GTEST_SKIP() << "updated " << path;
  }
  auto checked_in = ReadFile(path);
  ASSERT_TRUE(checked_in.ok()) << checked_in.status();
  EXPECT_EQ(generated, *checked_in)
      << path << " is not what proto/ describes today; regenerate it with "
      << "QPROF_UPDATE_GOLDEN=1 build/tests/reports/reports_json_schema_test and review the diff";
}

TEST(JsonSchemaTest, ProfileSchemaIsCheckedIn) { CheckShipped("profile"); }
TEST(JsonSchemaTest, DiffSchemaIsCheckedIn) { CheckShipped("diff"); }

TEST(JsonSchemaTest, StatesTheWritersContract) {
  const std::string s = ShippedJsonSchema("profile");
  // 64-bit figures are bounded integers, doubles may be protobuf's special strings.
  EXPECT_NE(s.find("\"kernel_time_ns\": {\n"), std::string::npos);
  EXPECT_NE(s.find("\"maximum\": 9007199254740992"), std::string::npos);
  EXPECT_NE(s.find("\"Infinity\""), std::string::npos);
  // Optional fields (presence) are not required; plain scalars are.
  const size_t row = s.find("\"title\": \"qprof.proto.KernelRow\"");
  ASSERT_NE(row, std::string::npos);
  const size_t req = s.find("\"required\": [", row);
  const std::string required = s.substr(req, s.find(']', req) - req);
  EXPECT_NE(required.find("\"time_ns\""), std::string::npos) << required;
  EXPECT_EQ(required.find("\"tensor_pipe_pct\""), std::string::npos) << required;
  EXPECT_EQ(ShippedJsonSchema("nonsense"), "");
}

}  // namespace
}  // namespace qprof::reports
