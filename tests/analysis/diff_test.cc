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
  // The sentence about total time names the role that moved most; `headline` is the
  // per-unit sentence the reports lead with.
  EXPECT_NE(d.totals_headline().find("moe.experts"), std::string::npos) << d.totals_headline();
  EXPECT_NE(d.totals_headline().find("from simt to tensor"), std::string::npos)
      << d.totals_headline();
  EXPECT_EQ(d.headline(), d.per_unit_headline());
  ASSERT_GT(d.roles_size(), 0);
  EXPECT_EQ(d.roles(0).key(), "moe.experts");
}

}  // namespace
}  // namespace qprof::diff
