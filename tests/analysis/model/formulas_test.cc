#include "analysis/model/formulas.h"

#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace qprof::model {
namespace {

TEST(ExpectedUniqueExperts, StoryShapeMatchesHandValue) {
  // 256 experts, top-6, 16 tokens: 256 * (1 - (250/256)^16) = 80.8377 (by hand: ln(250/256)
  // = -0.0237165, x16 = -0.379464, exp = 0.684227).
  EXPECT_NEAR(ExpectedUniqueExperts(256, 6, 16), 80.8377, 1e-3);
  // The slot path reads 16 * 6 = 96: the grouped path saves only 16% at batch 16.
  EXPECT_LT(ExpectedUniqueExperts(256, 6, 16), 96);
}

TEST(ExpectedUniqueExperts, EdgeCases) {
  EXPECT_DOUBLE_EQ(ExpectedUniqueExperts(256, 6, 1), 6);   // one token touches k experts
  EXPECT_DOUBLE_EQ(ExpectedUniqueExperts(8, 8, 5), 8);     // k = E: all experts
  EXPECT_DOUBLE_EQ(ExpectedUniqueExperts(8, 20, 3), 8);    // k clamped to E
  EXPECT_EQ(ExpectedUniqueExperts(256, 6, 0), 0);
  EXPECT_EQ(ExpectedUniqueExperts(0, 6, 16), 0);
  EXPECT_NEAR(ExpectedUniqueExperts(256, 6, 100000), 256, 1e-9);
}

TEST(ExpectedUniqueExperts, MonotoneAndBoundedAgainstSimulation) {
  std::mt19937 rng(12345);
  for (int experts : {7, 64, 256}) {
    for (int topk : {1, 3, 6}) {
      double prev = 0;
      for (int tokens : {1, 2, 5, 13, 16, 37}) {
        double u = ExpectedUniqueExperts(experts, topk, tokens);
        EXPECT_GE(u, prev);
        EXPECT_LE(u, std::min<double>(experts, tokens * topk) + 1e-9);
        prev = u;
        // Monte Carlo of uniform top-k routing without replacement.
        const int kTrials = 400;
        double sum = 0;
        std::vector<int> ids(experts);
        for (int t = 0; t < kTrials; ++t) {
          std::vector<bool> hit(experts, false);
          for (int b = 0; b < tokens; ++b) {
            for (int i = 0; i < experts; ++i) ids[i] = i;
            for (int j = 0; j < topk; ++j) {
              std::uniform_int_distribution<int> pick(j, experts - 1);
              std::swap(ids[j], ids[pick(rng)]);
              hit[ids[j]] = true;
            }
          }
          for (bool h : hit) sum += h;
        }
        EXPECT_NEAR(sum / kTrials, u, 0.05 * u + 0.3)
            << "E=" << experts << " k=" << topk << " B=" << tokens;
      }
    }
  }
}

TEST(PaddedRows, RoundsUpToTiles) {
  EXPECT_EQ(PaddedRows(1, 16), 16);
  EXPECT_EQ(PaddedRows(16, 16), 16);
  EXPECT_EQ(PaddedRows(17, 16), 32);
  EXPECT_EQ(PaddedRows(1.19, 16), 16);
  EXPECT_EQ(PaddedRows(0, 16), 0);
  EXPECT_EQ(PaddedRows(5, 1), 5);
}

TEST(AllReduce, BusFactor) {
  EXPECT_EQ(AllReduceBusFactor(1), 0);
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(2), 1.0);
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(8), 1.75);
  EXPECT_DOUBLE_EQ(AllReduceBusFactor(3), 4.0 / 3);
}

TEST(AllReduce, HandComputedTime) {
  // 16 tokens x 4096 x bf16 = 131072 bytes over 8 PCIe ranks at 63 GB/s x 0.75:
  // latency 5000 + 2*7*1000 = 19000 ns; bandwidth 1.75 * 131072 / 47.25 = 4854.52 ns.
  AllReduceInputs in{131072, 8, 63, 0.75, 5000, 1000};
  EXPECT_NEAR(AllReduceTimeNs(in), 23854.52, 0.01);
  in.ranks = 1;
  EXPECT_EQ(AllReduceTimeNs(in), 0);
  in.ranks = 2;
  in.link_gbps = 0;
  EXPECT_TRUE(std::isinf(AllReduceTimeNs(in)));
}

TEST(AllReduce, MoreBandwidthNeverSlowerMoreBytesNeverFaster) {
  AllReduceInputs in{1 << 20, 4, 10, 0.8, 3000, 700};
  double prev = AllReduceTimeNs(in);
  for (double link : {20.0, 63.0, 300.0, 900.0}) {
    in.link_gbps = link;
    double t = AllReduceTimeNs(in);
    EXPECT_LE(t, prev);
    prev = t;
  }
  double last = 0;
  for (double bytes : {0.0, 1e3, 1e5, 1e7}) {
    in.message_bytes = bytes;
    double t = AllReduceTimeNs(in);
    EXPECT_GE(t, last);
    last = t;
  }
}

TEST(CombineKernelTime, MaxPlusLaunchAndBound) {
  KernelTime t = CombineKernelTime(100, 300, 50, 0, 10);
  EXPECT_EQ(t.total_ns, 310);
  EXPECT_EQ(t.bound, "simt");
  EXPECT_EQ(CombineKernelTime(100, 30, 50, 0, 10).bound, "memory");
  EXPECT_EQ(CombineKernelTime(1, 3, 500, 0, 10).bound, "tensor");
  EXPECT_EQ(CombineKernelTime(1, 3, 5, 900, 10).bound, "comm");
  KernelTime tiny = CombineKernelTime(1, 2, 0, 0, 3000);
  EXPECT_EQ(tiny.bound, "simt");  // the body's limit, however small next to the launch
  EXPECT_EQ(tiny.total_ns, 3002);
  EXPECT_EQ(CombineKernelTime(0, 0, 0, 0, 3000).bound, "launch");
}

}  // namespace
}  // namespace qprof::model
