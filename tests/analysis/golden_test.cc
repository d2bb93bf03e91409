// Golden tests: a small input trace (text proto) -> Profile / Diff JSON, compared with the
// expected JSON checked in next to it. After an intended change, regenerate with:
//   QPROF_REGENERATE_GOLDEN=1 build-analysis/tests/analysis/analysis_golden_test
// (any build directory works) and review the diff of tests/analysis/testdata/golden/.
#include <cstdlib>
#include <string>

#include "analysis/analyze.h"
#include "analysis/ceilings/ceilings.h"
#include "analysis/diff/diff.h"
#include "base/file_util.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "reports/json/json_report.h"
#include "tests/analysis/fixture_util.h"

namespace qprof {
namespace {

bool Regenerate() {
  const char* v = std::getenv("QPROF_REGENERATE_GOLDEN");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

// Compares as messages, not text: protobuf prints map entries in an unspecified order.
template <typename M>
void CompareGolden(const std::string& json, const std::string& rel) {
  const std::string path = testing::TestDataPath(rel);
  if (Regenerate()) {
    ASSERT_TRUE(WriteFileAtomic(path, json).ok()) << path;
    GTEST_SKIP() << "regenerated " << path;
  }
  auto expected = ReadFile(path);
  ASSERT_TRUE(expected.ok()) << expected.status() << " (regenerate with QPROF_REGENERATE_GOLDEN=1)";
  M want, got;
  google::protobuf::util::JsonParseOptions opts;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*expected, &want, opts).ok()) << rel;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &got, opts).ok());
  google::protobuf::util::MessageDifferencer diff;
  std::string report;
  diff.ReportDifferencesToString(&report);
  EXPECT_TRUE(diff.Compare(want, got))
      << "golden " << rel << " differs (if intended, regenerate with QPROF_REGENERATE_GOLDEN=1 "
      << "and review the diff):\n" << report;
}

proto::Profile AnalyzeFixture(const std::string& rel, const AnalyzeOptions& o = {}) {
  auto p = Analyze({testing::LoadTextTrace(rel)}, o);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : proto::Profile();
}

TEST(Golden, ProfileOfKnownAnswerTrace) {
  auto json = reports::ProfileToJson(AnalyzeFixture("golden/decode_known_answer.textproto"));
  ASSERT_TRUE(json.ok());
  CompareGolden<proto::Profile>(*json, "golden/decode_known_answer.profile.json");
}

TEST(Golden, DiffMxfp4VsNvfp4MatchesExpertsByRole) {
  proto::Profile a = AnalyzeFixture("golden/decode_known_answer.textproto");
  proto::Profile b = AnalyzeFixture("golden/decode_nvfp4.textproto");
  proto::Diff d = diff::DiffProfiles(a, b);
  // The SIMT slot GEMV and the tensor-core Marlin kernel share the moe.experts row.
  bool matched = false;
  for (const auto& k : d.kernels()) {
    if (k.role() == "moe.experts" && k.status() == "both" && k.a_name() != k.b_name()) {
      matched = true;
      EXPECT_EQ(k.a_class(), "simt");
      EXPECT_EQ(k.b_class(), "tensor");
      EXPECT_EQ(k.a_time_ns(), 10000u);
      EXPECT_EQ(k.b_time_ns(), 3000u);
    }
  }
  EXPECT_TRUE(matched);
  EXPECT_GT(d.tensor_share_delta(), 0);
  ASSERT_TRUE(d.has_tokens_per_s_ratio());
  EXPECT_NEAR(d.tokens_per_s_ratio(), 40000.0 / 33000, 1e-12);
  auto json = reports::DiffToJson(d);
  ASSERT_TRUE(json.ok());
  CompareGolden<proto::Diff>(*json, "golden/diff_mxfp4_nvfp4.diff.json");
}

TEST(Golden, ModelConfigCeilings) {
  // A third-party-style trace (no work models) with --model: ceilings from the config.
  auto m = ceilings::ParseModelConfig(
      R"({"name": "toy", "active_params": 1e9, "batch": 8, "format": "bf16"})", "toy.json");
  ASSERT_TRUE(m.ok()) << m.status();
  proto::Trace t = testing::LoadTextTrace("golden/decode_known_answer.textproto");
  for (auto& a : *t.mutable_activities()) a.clear_work();
  t.mutable_header()->mutable_run()->Clear();
  AnalyzeOptions o;
  o.model = *m;
  auto p = Analyze({t}, o);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_GT(p->ceilings().formats_size(), 0);
  const auto& f = p->ceilings().formats(0);
  EXPECT_EQ(f.device(), "H200 SXM");
  EXPECT_EQ(f.batch(), 8u);
  EXPECT_NEAR(f.bytes_per_step(), 1e9 * 4.25 / 8, 1);
  EXPECT_NEAR(f.flops_per_step(), 2e9 * 8, 1);
  EXPECT_NE(f.inputs().find("model config toy.json"), std::string::npos);
  auto json = reports::ProfileToJson(*p);
  ASSERT_TRUE(json.ok());
  CompareGolden<proto::Profile>(*json, "golden/model_config.profile.json");
}

}  // namespace
}  // namespace qprof
