// The model's memory-level-parallelism and SIMT issue terms on hand-made launches:
// bytes in flight / latency caps the bandwidth of a small grid, a full grid is not capped,
// split launches grow to their target, and our SIMT kernels pay the static SASS issue
// slots per FMA on the SMs that hold a block.
#include "analysis/model/decode_model.h"
#include "analysis/model/formulas.h"
#include "analysis/model/kernel_facts.h"
#include "gtest/gtest.h"

namespace qprof::model {
namespace {

devices::DeviceSpec Device() {
  devices::DeviceSpec d;
  d.name = "Round";
  d.key = "round";
  d.arch = "sm_120";
  d.sm_count = {100, "test"};
  d.memory_bandwidth_gbps = {1000, "test"};
  d.fp32_simt_tflops = {100, "test"};
  d.bf16_tensor_tflops = {400, "test"};
  d.boost_clock_mhz = {2000, "test"};
  d.memory_latency_ns = {200, "test"};
  return d;
}

ModelParameters Params() {
  ModelParameters p = DefaultModelParameters();
  p.launch_overhead_ns.value = 0;
  return p;
}

proto::PlannedKernel Kernel(const std::string& cuda, uint64_t blocks, uint32_t threads,
                            double in_flight, double bytes, double flops) {
  proto::PlannedKernel k;
  k.set_kernel_id("test");
  k.set_role("attn.sparse_mla");
  k.set_pipe_class("simt");
  k.mutable_work()->set_bytes(bytes);
  k.mutable_work()->set_flops(flops);
  k.mutable_work()->set_compute_pipe("simt_fp32");
  k.mutable_launch()->set_cuda_kernel(cuda);
  k.mutable_launch()->set_blocks(blocks);
  k.mutable_launch()->set_threads_per_block(threads);
  k.mutable_launch()->set_bytes_in_flight_per_thread(in_flight);
  return k;
}

TEST(LatencyTerms, Formulas) {
  EXPECT_DOUBLE_EQ(LatencyBoundBandwidthGbps(1e5, 200), 500);
  EXPECT_TRUE(std::isinf(LatencyBoundBandwidthGbps(1e5, 0)));
  EXPECT_DOUBLE_EQ(IssueTimeNs(1280, 1, 1000), 10);  // 128 lanes at 1 GHz
  EXPECT_DOUBLE_EQ(IssueTimeNs(0, 1, 1000), 0);
}

TEST(LatencyTerms, SmallGridIsLatencyBound) {
  // No build facts for "x": registers unknown, so warps (48 / 8 = 6) and blocks (24) limit:
  // 6 per SM. 10 blocks are all resident: 10 x 256 x 16 B = 40960 B in flight, / 200 ns =
  // 204.8 GB/s, under 1000 x 0.85: the launch is latency-bound.
  auto e = EstimateKernel(Kernel("x", 10, 256, 16, 1e6, 0), 1, Device(), Params());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->active_blocks_per_sm, 6);
  EXPECT_DOUBLE_EQ(e->bytes_in_flight, 40960);
  EXPECT_DOUBLE_EQ(e->mlp_gbps, 204.8);
  EXPECT_NEAR(e->time.memory_ns, 1e6 / 204.8, 1e-6);
  EXPECT_EQ(e->time.bound, "latency");
  // 1000 blocks: 600 resident, 2.46 MB in flight: the bandwidth binds, not the latency.
  e = EstimateKernel(Kernel("x", 1000, 256, 16, 1e6, 0), 1, Device(), Params());
  ASSERT_TRUE(e.ok());
  EXPECT_NEAR(e->time.memory_ns, 1e6 / 850.0, 1e-6);
  EXPECT_EQ(e->time.bound, "memory");
}

TEST(LatencyTerms, SplitLaunchesGrowToTheirTarget) {
  proto::PlannedKernel k = Kernel("x", 4, 128, 16, 1e6, 0);
  k.mutable_launch()->set_split_blocks_per_sm(2);
  k.mutable_launch()->set_max_splits(10);
  auto e = EstimateKernel(k, 1, Device(), Params());
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->blocks, 40u);  // ceil(2 x 100 / 4) = 50 splits wanted, 10 allowed
}

TEST(LatencyTerms, SimtIssueFromTheKernelsSass) {
  const KernelFacts* f = FindKernelFacts("qprof_moe_slot_gemv_mxfp4_w13", "sm_120");
  if (f == nullptr) GTEST_SKIP() << "no generated kernel facts";
  // 1e9 FLOPs = 5e8 FMAs x issue slots per FMA, on 50 SMs x 128 lanes x 2 GHz.
  auto e = EstimateKernel(Kernel(f->kernel, 50, 256, 96, 1e3, 1e9), 1, Device(), Params());
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->registers, f->registers);
  EXPECT_DOUBLE_EQ(e->issue_slots_per_fma, IssueSlotsPerFma(*f));
  EXPECT_NEAR(e->time.simt_ns, 5e8 * IssueSlotsPerFma(*f) / (50 * 128 * 2.0), 1e-3);
  EXPECT_EQ(e->time.bound, "simt");
}

}  // namespace
}  // namespace qprof::model
