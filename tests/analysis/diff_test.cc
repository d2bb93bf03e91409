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

// Collectives and copies matched across the sides, per step (both know their steps), with
// their rates: the all-reduce got 3x faster per step on B, the HtoD copy exists only on A.
TEST(Diff, CommRowsPerUnitWithRates) {
  proto::Profile a, b;
  a.mutable_totals()->set_steps(4);
  b.mutable_totals()->set_steps(8);
  AddKernel(&a, "nccl_ar", "comm", "comm", 1200);
  AddKernel(&b, "nccl_ar", "comm", "comm", 800);
  for (auto* p : {&a, &b}) {
    proto::CollectiveRow* r = p->mutable_comm()->add_collectives();
    r->set_name("all_reduce");
    r->set_library("NCCL");
    r->set_process_group("0 (default_pg)");
    r->set_calls(p == &a ? 8 : 16);
    r->set_time_ns(p == &a ? 1200 : 800);
    r->set_bytes(p == &a ? 8000 : 16000);
    r->set_busbw_gbps(p == &a ? 5.0 : 15.0);
    r->set_algbw_gbps(p == &a ? 6.0 : 18.0);
    p->mutable_comm()->set_exposed_ns(p == &a ? 900 : 300);
  }
  proto::CopyRow* c = a.add_copies();
  c->set_kind("HtoD");
  c->set_memory("pageable -> device");
  c->set_calls(2);
  c->set_bytes(1000);
  c->set_time_ns(100);
  const proto::Diff d = DiffProfiles(a, b);
  ASSERT_EQ(d.unit(), "step");
  ASSERT_EQ(d.comm_size(), 2);
  const proto::CommDiffRow& ar = d.comm(0);
  EXPECT_EQ(ar.key(), "all_reduce 0 (default_pg)");
  EXPECT_EQ(ar.kind(), "collective");
  EXPECT_EQ(ar.status(), "both");
  EXPECT_DOUBLE_EQ(ar.a_per_unit_ns(), 1200.0 / 4);
  EXPECT_DOUBLE_EQ(ar.b_per_unit_ns(), 800.0 / 8);
  EXPECT_DOUBLE_EQ(ar.per_unit_ratio(), (800.0 / 8) / (1200.0 / 4));
  EXPECT_DOUBLE_EQ(ar.a_bytes_per_unit(), 8000.0 / 4);
  EXPECT_EQ(ar.rate(), "busbw");
  EXPECT_DOUBLE_EQ(ar.gbps_ratio(), 3.0);
  const proto::CommDiffRow& cp = d.comm(1);
  EXPECT_EQ(cp.key(), "HtoD pageable -> device");
  EXPECT_EQ(cp.status(), "only_a");
  EXPECT_DOUBLE_EQ(cp.a_gbps(), 10.0);
  EXPECT_FALSE(cp.has_b_gbps());
  EXPECT_EQ(d.a().comm_exposed_ns(), 900u);
  EXPECT_EQ(d.b().comm_exposed_ns(), 300u);
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
