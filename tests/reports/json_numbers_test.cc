// 64-bit integers are written as JSON numbers: singular, repeated and map values; map keys
// and string fields that merely look like numbers stay strings; beyond 2^53 written exact.
#include "reports/json/json_numbers.h"

#include <regex>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "proto/plan.pb.h"
#include "proto/profile.pb.h"
#include "proto/trace.pb.h"
#include "reports/json/json_report.h"
#include "tests/reports/fixtures.h"

namespace qprof::reports {
namespace {

TEST(JsonNumbersTest, SingularRepeatedAndMapValuesBecomeNumbers) {
  proto::Profile p;
  p.mutable_totals()->set_kernel_time_ns(1220926);
  p.mutable_totals()->set_provenance("1234");  // a string field stays a string
  proto::RoleRow* r = p.add_roles();
  r->set_role("moe.experts");
  (*r->mutable_class_time_ns())["simt"] = 42;
  p.mutable_run()->add_step_wall_ns(7);
  p.mutable_run()->add_step_wall_ns(8);
  auto json = MessageToJson(p, {.pretty = false});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"kernel_time_ns\":1220926"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"provenance\":\"1234\""), std::string::npos) << *json;
  EXPECT_NE(json->find("\"class_time_ns\":{\"simt\":42}"), std::string::npos) << *json;
  EXPECT_NE(json->find("\"step_wall_ns\":[7,8]"), std::string::npos) << *json;
  EXPECT_EQ(json->find(":\"0\""), std::string::npos) << *json;
  // Read back: protobuf's parser takes numbers for 64-bit fields.
  auto back = ProfileFromJson(*json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->totals().kernel_time_ns(), 1220926u);
  EXPECT_EQ(back->roles(0).class_time_ns().at("simt"), 42u);
}

TEST(JsonNumbersTest, SignedValuesAndMapsOfInt64) {
  proto::PlannedKernel k;
  (*k.mutable_shape())["tokens"] = -3;
  auto json = MessageToJson(k, {.pretty = false});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"shape\":{\"tokens\":-3}"), std::string::npos) << *json;
}

TEST(JsonNumbersTest, OnlyQuotingChangesAndWhitespaceIsKept) {
  proto::Profile p = testing::MakeFixtureProfile("mxfp4", true);
  auto ours = ProfileToJson(p);
  ASSERT_TRUE(ours.ok());
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  print.always_print_primitive_fields = true;
  print.add_whitespace = true;
  std::string theirs;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(p, &theirs, print).ok());
  // No string field of the fixture is all digits, so unquoting every all-digit string
  // value of protobuf's text must give ours, byte for byte.
  std::string unquoted = std::regex_replace(theirs, std::regex(": \"(-?[0-9]+)\""), ": $1");
  unquoted = std::regex_replace(unquoted, std::regex("\"(-?[0-9]+)\"(,?\n)"), "$1$2");
  EXPECT_NE(unquoted, theirs);
  EXPECT_TRUE(*ours == unquoted) << "ours and protobuf's text unquoted differ";
}

// Beyond 2^53 a count is written exact rather than failing the report (a trace with two
// clocks' timestamps; the analysis warns); below -2^53 is an error naming the field.
TEST(JsonNumbersTest, BeyondTwoToThe53IsWrittenExactAndNegativesBelowAreErrors) {
  proto::Profile p;
  p.mutable_totals()->set_span_ns(kMaxJsonSafeInteger + 1);
  auto json = ProfileToJson(p, {.pretty = false});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"span_ns\":9007199254740993"), std::string::npos) << *json;
  auto back = ProfileFromJson(*json, "test");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->totals().span_ns(), kMaxJsonSafeInteger + 1);
  proto::Trace t;
  t.add_activities()->set_start_ns(-static_cast<int64_t>(kMaxJsonSafeInteger) - 1);
  auto bad = MessageToJson(t, {.pretty = false});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(std::string(bad.status().message()).find("activities[0].start_ns = -9007199254740993"),
            std::string::npos)
      << bad.status();
}

TEST(JsonNumbersTest, UnixInstantsMayExceedTwoToThe53) {
  proto::Profile p;
  p.mutable_run()->set_start_unix_ns(1796154043794050755u);
  auto json = ProfileToJson(p, {.pretty = false});
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_NE(json->find("\"start_unix_ns\":1796154043794050755"), std::string::npos);
  auto back = ProfileFromJson(*json);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->run().start_unix_ns(), 1796154043794050755u);
  // A duration of that size is written exact too (the analysis warns about such spans);
  // the exemption by name is the schema's: instants have no maximum to explain.
  p.mutable_run()->set_wall_time_ns(1796154043794050755u);
  EXPECT_TRUE(ProfileToJson(p).ok());
}

TEST(JsonNumbersTest, RejectsTextItCannotFollow) {
  const auto* d = proto::Profile::descriptor();
  EXPECT_FALSE(Int64FieldsAsNumbers(d, "{\"totals\": {\"span_ns\": \"12x\"}}").ok());
  EXPECT_FALSE(Int64FieldsAsNumbers(d, "{\"totals\": ").ok());
  EXPECT_FALSE(Int64FieldsAsNumbers(d, "{} extra").ok());
  auto ok = Int64FieldsAsNumbers(d, "{\"unknown\": \"5\", \"totals\": {\"span_ns\": \"5\"}}");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, "{\"unknown\": \"5\", \"totals\": {\"span_ns\": 5}}");
}

}  // namespace
}  // namespace qprof::reports
