#include "proto/vocabulary.h"

#include "gtest/gtest.h"
#include "proto/profile.pb.h"

namespace qprof {
namespace {

TEST(Vocabulary, EvidenceRanksFollowDesignOrder) {
  EXPECT_GT(evidence::Rank(evidence::kMeasured), evidence::Rank(evidence::kSass));
  EXPECT_GT(evidence::Rank(evidence::kSass), evidence::Rank(evidence::kRegistry));
  EXPECT_GT(evidence::Rank(evidence::kRegistry), evidence::Rank(evidence::kLaunchContext));
  EXPECT_GT(evidence::Rank(evidence::kLaunchContext), evidence::Rank(evidence::kNameRule));
  EXPECT_GT(evidence::Rank(evidence::kNameRule), evidence::Rank(evidence::kUnknown));
  EXPECT_EQ(evidence::Rank("nonsense"), 0);
}

TEST(Vocabulary, KnownRolesAndClasses) {
  EXPECT_TRUE(IsKnownRole("moe.experts"));
  EXPECT_FALSE(IsKnownRole("moe"));
  EXPECT_TRUE(IsKnownPipeClass("simt"));
  EXPECT_FALSE(IsKnownPipeClass("cuda"));
  EXPECT_EQ(ProvenanceLabel(proto::PROVENANCE_MODELLED), "modelled");
}

}  // namespace
}  // namespace qprof
