#include "analysis/diff/diff.h"

#include "gtest/gtest.h"

namespace qprof::diff {
namespace {

void AddKernel(proto::Profile* p, const std::string& name, const std::string& role,
               const std::string& cls, uint64_t t) {
  auto* k = p->add_kernels();
  k->set_name(name);
  k->set_role(role);
  k->set_class_(cls);
  k->set_time_ns(t);
  k->set_calls(1);
  p->mutable_totals()->set_kernel_time_ns(p->totals().kernel_time_ns() + t);
  proto::RoleRow* rr = nullptr;
  for (auto& r : *p->mutable_roles()) {
    if (r.role() == role) rr = &r;
  }
  if (!rr) {
    rr = p->add_roles();
    rr->set_role(role);
    rr->set_class_(cls);
  }
  rr->set_time_ns(rr->time_ns() + t);
}

const proto::DiffRow* Row(const proto::Diff& d, const std::string& a, const std::string& b) {
  for (const auto& r : d.kernels()) {
    if (r.a_name() == a && r.b_name() == b) return &r;
  }
  return nullptr;
}

TEST(Diff, MatchesByRoleThenNameAndKeepsUnknownsApart) {
  proto::Profile a, b;
  a.set_label("A");
  b.set_label("B");
  AddKernel(&a, "slot_gemv", "moe.experts", "simt", 900);
  AddKernel(&a, "nvjet_x", "gemm.dense", "tensor", 100);
  AddKernel(&a, "Kernel2", "other", "other", 10);
  AddKernel(&a, "only_in_a_norm", "norm", "simt", 5);
  AddKernel(&b, "fp4_grouped_gemm", "moe.experts", "tensor", 300);
  AddKernel(&b, "nvjet_x", "gemm.dense", "tensor", 110);
  AddKernel(&b, "device_kernel", "other", "other", 20);
  proto::Diff d = DiffProfiles(a, b);
  const auto* moe = Row(d, "slot_gemv", "fp4_grouped_gemm");
  ASSERT_NE(moe, nullptr);
  EXPECT_EQ(moe->status(), "both");
  EXPECT_EQ(moe->key(), "moe.experts");
  EXPECT_EQ(moe->delta_ns(), -600);
  EXPECT_DOUBLE_EQ(moe->ratio(), 300.0 / 900);
  const auto* gemm = Row(d, "nvjet_x", "nvjet_x");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->key(), "nvjet_x");
  // Unknown kernels of role "other" are not paired by rank.
  ASSERT_NE(Row(d, "Kernel2", ""), nullptr);
  EXPECT_EQ(Row(d, "Kernel2", "")->status(), "only_a");
  ASSERT_NE(Row(d, "", "device_kernel"), nullptr);
  EXPECT_EQ(Row(d, "", "device_kernel")->status(), "only_b");
  EXPECT_EQ(Row(d, "only_in_a_norm", "")->status(), "only_a");
  EXPECT_FALSE(d.has_tokens_per_s_ratio());  // neither side has tokens/s
  EXPECT_NE(d.headline().find("moe.experts"), std::string::npos) << d.headline();
  EXPECT_NE(d.headline().find("from simt to tensor"), std::string::npos) << d.headline();
  ASSERT_GT(d.roles_size(), 0);
  EXPECT_EQ(d.roles(0).key(), "moe.experts");
}

// Both sides' achieved rates sit side by side on the role rows (and the kernel rows).
TEST(Diff, RoleRowsCarryBothSidesAchievedRates) {
  proto::Profile a, b;
  AddKernel(&a, "slot_gemv", "moe.experts", "simt", 900);
  AddKernel(&b, "fp4_grouped_gemm", "moe.experts", "tensor", 300);
  AddKernel(&b, "nvjet_x", "gemm.dense", "tensor", 110);
  a.mutable_roles(0)->set_achieved_gbps(310);
  a.mutable_roles(0)->set_peak_fraction(0.17);
  b.mutable_roles(0)->set_achieved_gbps(1500);
  b.mutable_roles(0)->set_achieved_tflops(15);
  b.mutable_roles(0)->set_peak_fraction(0.84);
  a.mutable_kernels(0)->set_achieved_gbps(310);
  proto::Diff d = DiffProfiles(a, b);
  const proto::DiffRow* moe = nullptr;
  const proto::DiffRow* gemm = nullptr;
  for (const auto& r : d.roles()) {
    if (r.key() == "moe.experts") moe = &r;
    if (r.key() == "gemm.dense") gemm = &r;
  }
  ASSERT_NE(moe, nullptr);
  EXPECT_DOUBLE_EQ(moe->a_achieved_gbps(), 310);
  EXPECT_DOUBLE_EQ(moe->b_achieved_gbps(), 1500);
  EXPECT_FALSE(moe->has_a_achieved_tflops());  // A's role has no FLOPs figure
  EXPECT_DOUBLE_EQ(moe->b_achieved_tflops(), 15);
  EXPECT_DOUBLE_EQ(moe->a_peak_fraction(), 0.17);
  EXPECT_DOUBLE_EQ(moe->b_peak_fraction(), 0.84);
  ASSERT_NE(gemm, nullptr);
  EXPECT_FALSE(gemm->has_a_achieved_gbps());  // no rates where a side has no work
  EXPECT_FALSE(gemm->has_b_achieved_gbps());
  const auto* k = Row(d, "slot_gemv", "fp4_grouped_gemm");
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ(k->a_achieved_gbps(), 310);
  EXPECT_FALSE(k->has_b_achieved_gbps());
}

}  // namespace
}  // namespace qprof::diff
