#include "base/text.h"

#include "gtest/gtest.h"

namespace qprof {
namespace {

TEST(Text, Utf8ValidationFollowsRfc3629) {
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));  // é € 😀
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // cut sequence
}

TEST(Text, RepairKeepsLengthAndCountsBytes) {
  std::string s = "a\xFF" "b\xC3";
  EXPECT_EQ(RepairUtf8(s.data(), s.size()), 2u);
  EXPECT_EQ(s, "a?b?");
  EXPECT_EQ(Utf8Clean("ok\x80"), "ok?");
}

TEST(Text, JsonQuoteEscapesAndReplacesInvalidBytes) {
  EXPECT_EQ(JsonQuote("a\"b\\c\n\t\x01"), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
  EXPECT_EQ(JsonQuote("x\xFFy"), "\"x\\ufffdy\"");
  EXPECT_EQ(JsonQuote("\xC3\xA9"), "\"\xC3\xA9\"");
  std::string out = "[";
  AppendJsonString(out, "k<v>");
  EXPECT_EQ(out, "[\"k<v>\"");
}

}  // namespace
}  // namespace qprof
