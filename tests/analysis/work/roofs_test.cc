// FillRoofs on synthetic kernel rows, with figures computed here from the H100 spec's own
// bandwidth: a row whose derived bytes need more than its measured time at that bandwidth
// is "above_roof", says so, and its role's work, rates and fraction are over the other rows.
#include "analysis/work/roofs.h"

#include "analysis/devices/device_specs.h"
#include "gtest/gtest.h"
#include "proto/profile.pb.h"

namespace qprof::work {
namespace {

proto::KernelRow* AddRow(proto::Profile* p, const char* name, double bytes, uint64_t time_ns,
                         uint64_t launches) {
  proto::KernelRow* k = p->add_kernels();
  k->set_name(name);
  k->set_role("elementwise");
  k->set_class_("simt");
  k->set_bytes(bytes);
  k->set_work_time_ns(time_ns);
  k->set_work_launches(launches);
  return k;
}

TEST(Roofs, RowAboveTheRoofIsMarkedAndLeftOutOfItsRole) {
  const devices::DeviceSpec* h100 = devices::FindDevice("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  const double bw = h100->EffectiveBandwidthGbps();  // bytes per ns
  ASSERT_GT(bw, 0);
  proto::Profile p;
  // At half the roof: bytes = 0.5 * bw * t. Twice the roof: bytes = 2 * bw * t.
  const uint64_t t_ok = 10000, t_fast = 2000;
  const double b_ok = 0.5 * bw * t_ok, b_fast = 2.0 * bw * t_fast;
  AddRow(&p, "copy_kernel", b_ok, t_ok, 4);
  AddRow(&p, "gather_kernel", b_fast, t_fast, 3);
  proto::RoleRow* role = p.add_roles();
  role->set_role("elementwise");
  role->set_bytes(b_ok + b_fast);
  role->set_work_time_ns(t_ok + t_fast);
  role->set_work_launches(7);
  role->set_achieved_gbps((b_ok + b_fast) / (t_ok + t_fast));

  FillRoofs(*h100, &p);

  const proto::KernelRow& ok = p.kernels(0);
  const proto::KernelRow& fast = p.kernels(1);
  EXPECT_NEAR(ok.peak_fraction(), 0.5, 1e-9);
  EXPECT_EQ(ok.bound(), "memory");
  EXPECT_NEAR(fast.peak_fraction(), 2.0, 1e-9);
  EXPECT_EQ(fast.bound(), "above_roof");
  EXPECT_NE(fast.work_note().find("above the roof: 2x"), std::string::npos) << fast.work_note();
  // The role is what is left: the copy kernel alone.
  const proto::RoleRow& r = p.roles(0);
  EXPECT_DOUBLE_EQ(r.bytes(), b_ok);
  EXPECT_EQ(r.work_time_ns(), t_ok);
  EXPECT_EQ(r.work_launches(), 4u);
  EXPECT_NEAR(r.achieved_gbps(), b_ok / t_ok, 1e-9);
  EXPECT_FALSE(r.has_achieved_tflops());
  EXPECT_NEAR(r.peak_fraction(), 0.5, 1e-9);
  EXPECT_EQ(r.bound(), "memory");
  EXPECT_NE(r.roof_note().find("1 of its 2 kernel rows with work ran above the roof "
                               "(gather_kernel: 2x)"),
            std::string::npos)
      << r.roof_note();
}

TEST(Roofs, RowJustUnderTheRoofStaysInItsRole) {
  const devices::DeviceSpec* h100 = devices::FindDevice("NVIDIA H100 80GB HBM3");
  ASSERT_NE(h100, nullptr);
  const double bw = h100->EffectiveBandwidthGbps();
  proto::Profile p;
  const uint64_t t = 1000;
  AddRow(&p, "fast_copy", 0.99 * bw * t, t, 1);
  proto::RoleRow* role = p.add_roles();
  role->set_role("elementwise");
  role->set_bytes(0.99 * bw * t);
  role->set_work_time_ns(t);
  role->set_work_launches(1);
  FillRoofs(*h100, &p);
  EXPECT_EQ(p.kernels(0).bound(), "memory");
  EXPECT_NEAR(p.roles(0).peak_fraction(), 0.99, 1e-9);
  EXPECT_TRUE(p.roles(0).roof_note().empty()) << p.roles(0).roof_note();
  EXPECT_DOUBLE_EQ(p.roles(0).bytes(), 0.99 * bw * t);
}

}  // namespace
}  // namespace qprof::work
