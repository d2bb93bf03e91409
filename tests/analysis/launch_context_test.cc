// The analyzer with launch contexts and occupancy on a hand-built trace: one kernel name
// launched from two contexts becomes two rows with their own roles and times; a kernel the
// name rules do not know gets its role from a plain aten::mm; NVTX paths count as contexts;
// launch statistics are time-weighted; roles say which evidence decided their time.
#include <string>

#include "analysis/analyze.h"
#include "analysis/occupancy/annotate.h"
#include "gtest/gtest.h"

namespace qprof {
namespace {

proto::Activity* Kernel(proto::Trace* t, const std::string& name, int64_t start, int64_t dur,
                        std::initializer_list<const char*> frames, uint32_t grid = 64) {
  proto::Activity* a = t->add_activities();
  a->set_kind(proto::ACTIVITY_KIND_KERNEL);
  a->set_name(name);
  a->set_start_ns(start);
  a->set_end_ns(start + dur);
  a->mutable_grid()->set_x(grid);
  a->mutable_grid()->set_y(1);
  a->mutable_grid()->set_z(1);
  a->mutable_block()->set_x(128);
  a->mutable_block()->set_y(1);
  a->mutable_block()->set_z(1);
  a->set_registers_per_thread(64);
  if (frames.size() == 0) return a;
  // One stack per call in the header's tables (the importers share equal stacks; the
  // analyzer must not depend on that).
  proto::LaunchContextStats* st = t->mutable_header()->mutable_launch_context_stats();
  if (st->stacks_size() == 0) st->add_stacks();
  proto::LaunchStack* stack = st->add_stacks();
  for (const char* f : frames) {
    proto::LaunchFrame* fr = st->add_frames();
    fr->set_name(f);
    fr->set_kind("cpu_op");
    stack->add_frames(static_cast<uint32_t>(st->frames_size() - 1));
  }
  a->mutable_launch_context()->set_stack(static_cast<uint32_t>(st->stacks_size() - 1));
  return a;
}

const proto::KernelRow* Row(const proto::Profile& p, const std::string& name,
                            const std::string& role) {
  for (const auto& k : p.kernels()) {
    if (k.name() == name && k.role() == role) return &k;
  }
  return nullptr;
}

TEST(AnalyzeLaunchContext, RowsSplitByContextRoleWithLaunchStatistics) {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  proto::DeviceInfo* d = t.mutable_header()->add_devices();
  d->set_id(0);
  d->set_kind("gpu");
  d->set_name("NVIDIA H100 80GB HBM3");
  d->set_cc_major(9);
  d->set_sm_count(132);
  // An FP8 batched GEMM: its name says a GEMM (an FP4 one would name the MoE by itself).
  const std::string bmm = "bmm_E4m3_E4m3E4m3_Fp32_t128x8x512_TN";
  int64_t t0 = 0;
  // Three launches in the MoE layer (one of 1000 blocks), two from a plain matmul.
  Kernel(&t, bmm, t0 += 1000, 100, {"vllm::moe_forward", "aten::empty"});
  Kernel(&t, bmm, t0 += 1000, 100, {"vllm::moe_forward"});
  Kernel(&t, bmm, t0 += 1000, 200, {"vllm::moe_forward"}, 1000);
  Kernel(&t, bmm, t0 += 1000, 50, {"aten::mm"});
  Kernel(&t, bmm, t0 += 1000, 50, {});
  // Not known by name: the plain op gives the role; the pipe class stays unknown.
  Kernel(&t, "void cutlass::Kernel2<cutlass_sm90_unknown>(Params)", t0 += 1000, 70, {"aten::addmm"});
  // An NVTX path (Kineto user annotations, our traces) is a context too.
  proto::Activity* n = Kernel(&t, "triton_red_fused_0", t0 += 1000, 30, {});
  n->set_nvtx_path("decode/fused_moe");
  occupancy::AnnotateStats st = occupancy::AnnotateOccupancy(&t);
  EXPECT_EQ(st.annotated, 7u);

  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok()) << p.status();
  const proto::KernelRow* moe = Row(*p, bmm, "moe.experts");
  const proto::KernelRow* dense = Row(*p, bmm, "gemm.dense");
  ASSERT_NE(moe, nullptr);
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(moe->time_ns(), 400u);
  EXPECT_EQ(moe->calls(), 3u);
  EXPECT_EQ(moe->evidence(), "launch_context");
  EXPECT_EQ(moe->class_(), "tensor");
  EXPECT_EQ(moe->launch_context(), "vllm::moe_forward (cpu_op)");
  EXPECT_EQ(dense->time_ns(), 100u);
  EXPECT_EQ(dense->evidence(), "name_rule");
  // Launch statistics of the MoE row: the most common grid is 64 (two launches of three);
  // waves and occupancy are time-weighted over all three.
  const proto::KernelLaunch& l = moe->launch();
  EXPECT_EQ(l.grid().x(), 64u);
  EXPECT_EQ(l.launches(), 3u);
  EXPECT_EQ(l.launches_with_occupancy(), 3u);
  // 128 threads, 64 regs on sm_90: 8 blocks per SM (registers); 132 x 8 = 1056 per wave.
  EXPECT_EQ(l.active_blocks_per_sm(), 8u);
  const double waves = (100 * 64.0 / 1056 + 100 * 64.0 / 1056 + 200 * 1000.0 / 1056) / 400;
  EXPECT_NEAR(l.waves(), waves, 1e-9);
  EXPECT_NEAR(l.theoretical_occupancy_pct(), 50.0, 1e-9);  // 32 of 64 warps
  EXPECT_FALSE(l.limits_source().empty());

  const proto::KernelRow* cut = nullptr;
  for (const auto& k : p->kernels()) {
    if (k.name().find("Kernel2") != std::string::npos) cut = &k;
  }
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->role(), "gemm.dense");
  EXPECT_EQ(cut->evidence(), "launch_context");
  EXPECT_EQ(cut->class_(), "other");
  bool warned = false;
  for (const auto& w : p->warnings()) warned |= w.code() == "class_unknown";
  EXPECT_TRUE(warned);
  const proto::KernelRow* tri = Row(*p, "triton_red_fused_0", "moe.experts");
  ASSERT_NE(tri, nullptr);
  EXPECT_EQ(tri->launch_context(), "fused_moe (nvtx)");

  for (const auto& r : p->roles()) {
    if (r.role() != "moe.experts") continue;
    EXPECT_EQ(r.evidence_time_ns().at("launch_context"), 430u);
    EXPECT_EQ(r.kernel_rows(), 2u);
  }
  EXPECT_EQ(p->launch_summary().launches(), 7u);
  EXPECT_EQ(p->launch_summary().launches_with_context(), 6u);
  EXPECT_EQ(p->launch_summary().launches_with_occupancy(), 7u);
}

TEST(AnalyzeLaunchContext, DeviceOptionSuppliesLimitsTheTraceLacks) {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  proto::DeviceInfo* d = t.mutable_header()->add_devices();
  d->set_id(0);
  d->set_kind("gpu");
  d->set_name("unknown");
  Kernel(&t, "nvjet_tst_128x64", 0, 100, {"aten::mm"}, 66);
  occupancy::AnnotateOccupancy(&t);
  EXPECT_FALSE(t.activities(0).occupancy().error().empty());
  auto p = Analyze({t}, {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kernels(0).launch().launches_with_occupancy(), 0u);
  EXPECT_FALSE(p->kernels(0).launch().note().empty());
  AnalyzeOptions o;
  o.device = "h100";
  p = Analyze({t}, o);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kernels(0).launch().launches_with_occupancy(), 1u);
  EXPECT_EQ(p->kernels(0).launch().sm_count(), 132u);
  EXPECT_NEAR(p->kernels(0).launch().waves(), 66.0 / (132 * 8), 1e-12);
  // Half the SMs idle and little occupancy: flagged, with the numbers.
  ASSERT_TRUE(p->kernels(0).has_diagnosis());
  EXPECT_EQ(p->kernels(0).diagnosis().kind(), "parallelism_bound");
  EXPECT_NE(p->kernels(0).diagnosis().evidence().find("66 blocks on 132 SMs"), std::string::npos);
  EXPECT_NE(p->kernels(0).diagnosis().evidence().find("66 SMs idle"), std::string::npos);
}

}  // namespace
}  // namespace qprof
