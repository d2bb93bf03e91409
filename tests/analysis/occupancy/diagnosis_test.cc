// The latency / parallelism diagnosis on hand-made kernel rows: under one wave with idle
// SMs, low occupancy far under the roofline, a kernel that streams memory (not flagged),
// and the remedy naming the register or shared-memory limiter.
#include "analysis/occupancy/diagnosis.h"

#include "gtest/gtest.h"

namespace qprof::occupancy {
namespace {

proto::KernelRow* Row(proto::Profile* p, const char* name, uint64_t ns, uint64_t blocks,
                      uint32_t per_sm, double waves, double est, uint32_t sms = 188) {
  proto::KernelRow* k = p->add_kernels();
  k->set_name(name);
  k->set_time_ns(ns);
  proto::KernelLaunch* l = k->mutable_launch();
  l->set_blocks(blocks);
  l->set_threads_per_block(128);
  l->set_active_blocks_per_sm(per_sm);
  l->set_sm_count(sms);
  l->set_waves(waves);
  l->set_est_occupancy_pct(est);
  l->set_theoretical_occupancy_pct(est * 2);
  l->set_launches(1);
  l->set_launches_with_occupancy(1);
  p->mutable_totals()->set_kernel_time_ns(p->totals().kernel_time_ns() + ns);
  return k;
}

TEST(Diagnosis, UnderOneWaveWithIdleSms) {
  proto::Profile p;
  proto::KernelRow* k = Row(&p, "sparse", 380, 128, 3, 128.0 / 564, 5.7);
  k->mutable_launch()->set_limited_by("registers");
  k->mutable_launch()->set_registers_per_thread(168);
  k->set_achieved_gbps(179);  // its work places it at 10% of 1790 GB/s
  Row(&p, "big", 620, 100000, 4, 132.98, 90);
  Diagnose(1790, &p);
  ASSERT_TRUE(p.kernels(0).has_diagnosis());
  const auto& d = p.kernels(0).diagnosis();
  EXPECT_EQ(d.kind(), "parallelism_bound");
  EXPECT_FALSE(d.hypothesis());
  EXPECT_EQ(d.evidence(), "128 blocks on 188 SMs (3 fit per SM): 0.23 waves, 60 SMs idle; "
                          "est. occupancy 5.7%; 10% of the device bandwidth (from its work)");
  EXPECT_NE(d.remedy().find("564 fill one wave"), std::string::npos) << d.remedy();
  EXPECT_FALSE(p.kernels(1).has_diagnosis());
  EXPECT_EQ(p.launch_summary().latency_bound_kernels(), 1u);
  EXPECT_NEAR(p.launch_summary().latency_bound_time_share(), 0.38, 1e-12);
}

TEST(Diagnosis, LowOccupancyFarUnderTheRooflineAndStreamingKernels) {
  proto::Profile p;
  // Several waves but 12% occupancy and 10% of the bandwidth: latency-bound.
  proto::KernelRow* lat = Row(&p, "lat", 100, 5000, 1, 26.6, 12);
  lat->set_achieved_gbps(179);
  lat->mutable_launch()->set_limited_by("shared_memory");
  lat->mutable_launch()->set_shared_mem_bytes(96 * 1024);
  // Under one wave but already at 80% of the bandwidth: memory-bound, not flagged.
  proto::KernelRow* stream = Row(&p, "stream", 100, 150, 2, 0.4, 10);
  stream->set_achieved_gbps(1432);
  // Low occupancy at 60% of the bandwidth: not flagged.
  proto::KernelRow* ok = Row(&p, "ok", 100, 5000, 1, 26.6, 12);
  ok->set_achieved_gbps(1074);
  Diagnose(1790, &p);
  ASSERT_TRUE(p.kernels(0).has_diagnosis());
  EXPECT_EQ(p.kernels(0).diagnosis().kind(), "latency_bound");
  EXPECT_NEAR(p.kernels(0).diagnosis().bandwidth_fraction(), 0.1, 1e-12);
  EXPECT_NE(p.kernels(0).diagnosis().remedy().find("less shared memory per block (now 96.0 KiB"),
            std::string::npos) << p.kernels(0).diagnosis().remedy();
  EXPECT_FALSE(p.kernels(1).has_diagnosis());
  EXPECT_FALSE(p.kernels(2).has_diagnosis());
}

// Without work or a measured throughput the launch shape is a hint, not a verdict: the
// diagnosis is a question with what would settle it, counted apart.
TEST(Diagnosis, WithoutARooflinePositionItIsAHypothesis) {
  proto::Profile p;
  Row(&p, "sparse", 300, 128, 3, 128.0 / 564, 5.7);
  Diagnose(1790, &p);
  ASSERT_TRUE(p.kernels(0).has_diagnosis());
  const auto& d = p.kernels(0).diagnosis();
  EXPECT_EQ(d.kind(), "parallelism_bound");
  EXPECT_TRUE(d.hypothesis());
  EXPECT_NE(d.settle().find("achieved bandwidth"), std::string::npos) << d.settle();
  EXPECT_EQ(p.launch_summary().latency_bound_kernels(), 0u);
  EXPECT_EQ(p.launch_summary().latency_hypothesis_kernels(), 1u);
  EXPECT_NEAR(p.launch_summary().latency_hypothesis_time_share(), 1.0, 1e-12);
}

// A measured DRAM throughput (ncu, CUPTI) places the kernel as well as its work does.
TEST(Diagnosis, MeasuredDramThroughputIsEvidence) {
  proto::Profile p;
  proto::KernelRow* low = Row(&p, "low", 100, 128, 3, 128.0 / 564, 5.7);
  low->set_dram_throughput_pct(8);
  proto::KernelRow* high = Row(&p, "high", 100, 128, 3, 128.0 / 564, 5.7);
  high->set_dram_throughput_pct(70);  // streams: memory-bound whatever its waves
  Diagnose(0, &p);
  ASSERT_TRUE(p.kernels(0).has_diagnosis());
  EXPECT_FALSE(p.kernels(0).diagnosis().hypothesis());
  EXPECT_EQ(p.kernels(0).diagnosis().bandwidth_source(), "measured");
  EXPECT_NEAR(p.kernels(0).diagnosis().bandwidth_fraction(), 0.08, 1e-12);
  EXPECT_FALSE(p.kernels(1).has_diagnosis());
}

// One block per SM at full shared memory on (nearly) every SM is how persistent GEMMs are
// built (cuBLAS sm90, 226 KiB of shared memory): not starved, whatever "waves" says.
TEST(Diagnosis, OneBlockPerSmOnEverySmIsTheDesign) {
  proto::Profile p;
  proto::KernelRow* k = Row(&p, "sm90_xmma_gemm", 100, 128, 1, 128.0 / 132, 1.0 / 64 * 100, 132);
  k->mutable_launch()->set_limited_by("shared_memory");
  k->mutable_launch()->set_shared_mem_bytes(226 * 1024);
  // The same shape on a third of the SMs is starved.
  Row(&p, "small_grid", 100, 44, 1, 44.0 / 132, 1.0 / 64 * 100, 132);
  Diagnose(3350, &p);
  EXPECT_FALSE(p.kernels(0).has_diagnosis());
  ASSERT_TRUE(p.kernels(1).has_diagnosis());
  EXPECT_EQ(p.kernels(1).diagnosis().kind(), "parallelism_bound");
}

TEST(Diagnosis, NothingWithoutOccupancy) {
  proto::Profile p;
  proto::KernelRow* k = Row(&p, "x", 100, 10, 1, 0.05, 1);
  k->mutable_launch()->set_launches_with_occupancy(0);
  Diagnose(0, &p);
  EXPECT_FALSE(p.kernels(0).has_diagnosis());
  EXPECT_EQ(p.launch_summary().latency_bound_kernels(), 0u);
  EXPECT_EQ(p.launch_summary().latency_hypothesis_kernels(), 0u);
}

}  // namespace
}  // namespace qprof::occupancy
