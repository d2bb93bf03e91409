// Communication, copies and waits on hand-made traces whose answers are known by
// construction: exposed and hidden comm and copies, each idle cause, graph-launched
// collectives counted apart, NCCL's message sizes and bus-bandwidth factors, PtoP copies
// against the GPU link, and a partial profile merging to the same figures.
#include <cstdint>
#include <optional>
#include <string>

#include "analysis/aggregate/collectives.h"
#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "analysis/devices/device_specs.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace qprof {
namespace {

constexpr int64_t kUs = 1000;

proto::Trace NewTrace(const std::string& device_name = "NVIDIA RTX PRO 6000 Blackwell") {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  t.mutable_header()->set_source_path("synthetic.json");
  proto::DeviceInfo* d = t.mutable_header()->add_devices();
  d->set_id(0);
  d->set_name(device_name);
  d->set_kind("gpu");
  return t;
}

proto::Activity* Kernel(proto::Trace* t, const std::string& name, uint64_t stream, int64_t start,
                        int64_t end, std::optional<int64_t> launch = std::nullopt) {
  proto::Activity* a = t->add_activities();
  a->set_kind(proto::ACTIVITY_KIND_KERNEL);
  a->set_name(name);
  a->set_device_id(0);
  a->set_stream_id(stream);
  a->set_start_ns(start);
  a->set_end_ns(end);
  if (launch) a->set_launch_ns(*launch);
  return a;
}

proto::Activity* Copy(proto::Trace* t, const std::string& kind, int64_t start, int64_t end,
                      uint64_t bytes, const std::string& src = "", const std::string& dst = "") {
  proto::Activity* a = t->add_activities();
  a->set_kind(kind == "memset" ? proto::ACTIVITY_KIND_MEMSET : proto::ACTIVITY_KIND_MEMCPY);
  a->set_name(kind == "memset" ? "Memset" : "Memcpy " + kind);
  if (kind != "memset") a->set_copy_kind(kind);
  a->set_device_id(0);
  a->set_stream_id(9);
  a->set_start_ns(start);
  a->set_end_ns(end);
  a->set_bytes(bytes);
  a->set_src_memory(src);
  a->set_dst_memory(dst);
  return a;
}

proto::Profile AnalyzeOne(const proto::Trace& t, const std::string& device = "") {
  AnalyzeOptions o;
  o.device = device;
  auto p = Analyze({t}, o);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : proto::Profile();
}

const proto::IdleCauseRow* Cause(const proto::Profile& p, const std::string& cause) {
  for (const auto& c : p.idle().causes()) {
    if (c.cause() == cause) return &c;
  }
  return nullptr;
}

// Compute on stream 7, NCCL on stream 8, copies on stream 9; every interval chosen so the
// overlaps are known:
//   compute [0, 100) [150, 300)          comm [80, 200) [400, 450)
//   copies  [290, 320) memset [500, 510)
// comm 120 + 50 = 170; hidden under compute: [80, 100) + [150, 200) = 70; exposed 100.
// copies 30 + 10 = 40; under a kernel: [290, 300) = 10; exposed 30.
// kernels' union [0, 300) + [400, 450) = 350 of a 450 span: idle 100 in one gap.
TEST(CommSynthetic, ExposedAndHiddenCommAndCopies) {
  proto::Trace t = NewTrace();
  Kernel(&t, "gemm_a", 7, 0, 100 * kUs);
  Kernel(&t, "gemm_b", 7, 150 * kUs, 300 * kUs);
  Kernel(&t, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16", 8, 80 * kUs, 200 * kUs);
  Kernel(&t, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16", 8, 400 * kUs, 450 * kUs);
  Copy(&t, "DtoH", 290 * kUs, 320 * kUs, 3'000'000, "device", "pinned");
  Copy(&t, "memset", 500 * kUs, 510 * kUs, 1'000'000, "", "device");
  const proto::Profile p = AnalyzeOne(t);
  const proto::CommSummary& c = p.comm();
  EXPECT_EQ(c.total_ns(), 170 * kUs);
  EXPECT_EQ(c.hidden_ns(), 70 * kUs);
  EXPECT_EQ(c.exposed_ns(), 100 * kUs);
  EXPECT_EQ(c.copy_total_ns(), 40 * kUs);
  EXPECT_EQ(c.copy_hidden_ns(), 10 * kUs);
  EXPECT_EQ(c.copy_exposed_ns(), 30 * kUs);
  ASSERT_EQ(c.per_device_size(), 1);
  ASSERT_EQ(p.devices_size(), 1);
  const proto::ProfileDevice& d = p.devices(0);
  EXPECT_EQ(d.span_ns(), 450 * kUs);
  EXPECT_EQ(d.busy_time_ns(), 350 * kUs);
  EXPECT_EQ(d.idle_ns(), 100 * kUs);
  EXPECT_EQ(d.compute_ns(), 250 * kUs);
  EXPECT_EQ(d.band_span_ns(), 510 * kUs);
  // The band adds up: compute + exposed comm + exposed copies + idle = band span.
  const uint64_t covered = d.compute_ns() + d.comm_exposed_ns() + d.copy_exposed_ns();
  EXPECT_EQ(d.band_span_ns() - covered, 130 * kUs);  // [320,400) and [450,500)
  // The Amdahl row of class comm uses the exposed time, and says so.
  bool seen = false;
  for (const auto& a : p.ceilings().amdahl()) {
    if (a.scope() != "class" || a.name() != "comm") continue;
    seen = true;
    EXPECT_NEAR(a.share(), 100.0 / 420.0, 1e-12);  // exposed / kernel time (100+150+120+50)
    EXPECT_NE(a.time_basis().find("exposed comm time"), std::string::npos) << a.time_basis();
    EXPECT_NEAR(a.span_share(), 100.0 / 450.0, 1e-12);
  }
  EXPECT_TRUE(seen);
  // Copies: bytes / time against DRAM (memset) and the host link (DtoH) of the spec table.
  const devices::DeviceSpec* spec = devices::FindDevice("rtx-pro-6000");
  ASSERT_NE(spec, nullptr);
  ASSERT_EQ(p.copies_size(), 2);
  for (const auto& r : p.copies()) {
    if (r.kind() == "DtoH") {
      EXPECT_EQ(r.memory(), "device -> pinned");
      EXPECT_NEAR(r.gbps(), 3e6 / 30e3, 1e-12);
      EXPECT_EQ(r.link_peak_gbps(), spec->host_link_gbps.value);
      EXPECT_NEAR(r.link_fraction(), 100.0 / spec->host_link_gbps.value, 1e-12);
    } else {
      EXPECT_EQ(r.kind(), "memset");
      EXPECT_EQ(r.memory(), "device");
      EXPECT_EQ(r.link_peak_gbps(), spec->memory_bandwidth_gbps.value);
    }
  }
}

// One gap of each cause, by HTA's rule on the kernel that ends it:
//   [0,10) then [20,30) launched at 15 > 10: host wait 10 us
//   [20,30) then [30.02,40) launched at 5 < 30, gap 20 ns < 30 ns: kernel wait
//   then [50,60) launched at 6, gap 10 us: other (it waited on something)
//   then [70,80) with no launch call: no launch time
TEST(CommSynthetic, EachIdleCause) {
  proto::Trace t = NewTrace();
  Kernel(&t, "k0", 7, 0, 10 * kUs, 0);
  Kernel(&t, "k1", 7, 20 * kUs, 30 * kUs, 15 * kUs);
  Kernel(&t, "k2", 7, 30 * kUs + 20, 40 * kUs, 5 * kUs);
  Kernel(&t, "k3", 7, 50 * kUs, 60 * kUs, 6 * kUs);
  Kernel(&t, "k4", 7, 70 * kUs, 80 * kUs);
  const proto::Profile p = AnalyzeOne(t);
  ASSERT_NE(Cause(p, "host_wait"), nullptr);
  EXPECT_EQ(Cause(p, "host_wait")->gaps(), 1u);
  EXPECT_EQ(Cause(p, "host_wait")->time_ns(), 10 * kUs);
  EXPECT_EQ(Cause(p, "kernel_wait")->gaps(), 1u);
  EXPECT_EQ(Cause(p, "kernel_wait")->time_ns(), 20u);
  EXPECT_EQ(Cause(p, "other")->gaps(), 1u);
  EXPECT_EQ(Cause(p, "other")->time_ns(), 10 * kUs);
  EXPECT_EQ(Cause(p, "no_launch_time")->gaps(), 1u);
  EXPECT_EQ(Cause(p, "no_launch_time")->time_ns(), 10 * kUs);
  uint64_t sum = 0;
  for (const auto& c : p.idle().causes()) sum += c.time_ns();
  EXPECT_EQ(sum, p.idle().idle_ns());
  EXPECT_NE(p.idle().cause_rule().find("30 ns"), std::string::npos);
}

// A gap on the device ends with the earliest kernel after it, whichever stream: the kernel on
// stream 8 that starts first decides, and of two starting together the earlier launch.
TEST(CommSynthetic, CauseComesFromTheKernelThatEndsTheDeviceGap) {
  proto::Trace t = NewTrace();
  Kernel(&t, "a", 7, 0, 10 * kUs, 0);
  Kernel(&t, "late_launch_same_start", 7, 20 * kUs, 25 * kUs, 12 * kUs);
  Kernel(&t, "early_launch_same_start", 8, 20 * kUs, 30 * kUs, 1 * kUs);
  const proto::Profile p = AnalyzeOne(t);
  EXPECT_EQ(Cause(p, "other")->gaps(), 1u);  // launched at 1 us, long before the gap
  EXPECT_EQ(Cause(p, "host_wait")->gaps(), 0u);
}

proto::Activity* Collective(proto::Trace* t, const std::string& name, int64_t start, int64_t end,
                            const std::string& coll, uint64_t in, uint64_t out,
                            const std::string& dtype, int group) {
  proto::Activity* a = Kernel(t, name, 8, start, end);
  auto& args = *a->mutable_args();
  args["Collective name"] = coll;
  args["In msg nelems"] = std::to_string(in);
  args["Out msg nelems"] = std::to_string(out);
  args["dtype"] = dtype;
  args["Group size"] = std::to_string(group);
  args["Process Group Name"] = "0";
  args["Process Group Description"] = "default_pg";
  return a;
}

const proto::CollectiveRow* Row(const proto::Profile& p, const std::string& name) {
  for (const auto& r : p.comm().collectives()) {
    if (r.name() == name) return &r;
  }
  return nullptr;
}

// S is the whole buffer: all-gather's output, reduce-scatter's input (nccl-tests
// PERFORMANCE.md); busbw factors 2(n-1)/n, (n-1)/n; graph launches counted apart.
TEST(CommSynthetic, MessageSizesBusBandwidthAndGraphLaunches) {
  proto::Trace t = NewTrace();
  // all_gather: 1000 BFloat16 in, 8000 out (n = 8): S = 16000 bytes, 2 calls of 10 us.
  Collective(&t, "ncclDevKernel_AllGather_RING_LL", 0, 10 * kUs, "_allgather_base", 1000, 8000,
             "BFloat16", 8);
  Collective(&t, "ncclDevKernel_AllGather_RING_LL", 20 * kUs, 30 * kUs, "_allgather_base", 1000,
             8000, "BFloat16", 8)
      ->mutable_launch_context()
      ->set_graph_launch(true);
  // reduce_scatter: 8000 Float in, 1000 out: S = 32000 bytes in 16 us.
  Collective(&t, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", 40 * kUs, 56 * kUs,
             "reduce_scatter", 8000, 1000, "Float", 8);
  // all_reduce of 4096 Half (8192 bytes) in 4 us, launched by a graph; n = 8.
  Collective(&t, "ncclKernel_AllReduce_RING_LL_Sum_half", 60 * kUs, 64 * kUs, "allreduce", 4096,
             4096, "Half", 8)
      ->mutable_launch_context()
      ->set_graph_launch(true);
  // A dtype qprof does not know: calls and time counted, size unknown and said.
  Collective(&t, "ncclKernel_Broadcast_RING_LL_Sum_int8_t", 70 * kUs, 71 * kUs, "broadcast", 10,
             10, "Weird", 8);
  const proto::Profile p = AnalyzeOne(t, "rtx-pro-6000");
  const proto::CollectiveRow* ag = Row(p, "all_gather");
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->calls(), 2u);
  EXPECT_EQ(ag->graph_calls(), 1u);
  EXPECT_EQ(ag->graph_time_ns(), 10 * kUs);
  EXPECT_EQ(ag->bytes(), 32000u);
  EXPECT_EQ(ag->process_group(), "0 (default_pg)");
  EXPECT_EQ(ag->group_size(), 8u);
  EXPECT_NEAR(ag->algbw_gbps(), 32000.0 / 20000.0, 1e-12);
  EXPECT_NEAR(ag->busbw_gbps(), 32000.0 / 20000.0 * 7 / 8, 1e-12);
  EXPECT_EQ(ag->link(), "PCIe Gen5 x16");
  EXPECT_NEAR(ag->link_fraction(), ag->busbw_gbps() / ag->link_peak_gbps(), 1e-12);
  const proto::CollectiveRow* rs = Row(p, "reduce_scatter");
  ASSERT_NE(rs, nullptr);
  EXPECT_EQ(rs->bytes(), 32000u);
  EXPECT_NEAR(rs->busbw_gbps(), 32000.0 / 16000.0 * 7 / 8, 1e-12);
  const proto::CollectiveRow* ar = Row(p, "all_reduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->graph_calls(), ar->calls());
  EXPECT_NEAR(ar->busbw_gbps(), 8192.0 / 4000.0 * 2 * 7 / 8, 1e-12);
  const proto::CollectiveRow* bc = Row(p, "broadcast");
  ASSERT_NE(bc, nullptr);
  EXPECT_EQ(bc->calls(), 1u);
  EXPECT_EQ(bc->calls_with_bytes(), 0u);
  EXPECT_FALSE(bc->has_busbw_gbps());
  EXPECT_EQ(bc->bytes_source().rfind("unknown", 0), 0u) << bc->bytes_source();
}

// Custom all-reduce and NVLS multimem kernels are communication; multimem's factor is
// nccl-tests's in-network reduction, (n-1)/(n+1). Without a "Group size" the run's TP degree.
// PyTorch describes a group it did not name as "undefined" (vLLM's and SGLang's groups in the
// TraceLens traces): the row names the group by its ranks, else its size, never that word.
TEST(CommSynthetic, UnnamedProcessGroupsByRanksOrSize) {
  proto::Trace t = NewTrace();
  proto::Activity* a = Collective(&t, "ncclDevKernel_AllGather_RING_LL", 0, 10 * kUs,
                                  "_allgather_base", 1000, 8000, "BFloat16", 8);
  (*a->mutable_args())["Process Group Name"] = "3";
  (*a->mutable_args())["Process Group Description"] = "undefined";
  (*a->mutable_args())["Process Group Ranks"] = "[0, 1, 2, 3, 4, 5, 6, 7]";
  proto::Activity* b = Collective(&t, "ncclKernel_AllReduce_RING_LL_Sum_half", 20 * kUs, 30 * kUs,
                                  "allreduce", 64, 64, "Half", 4);
  (*b->mutable_args())["Process Group Name"] = "5";
  (*b->mutable_args())["Process Group Description"] = "undefined";
  (*b->mutable_args())["Process Group Ranks"] = "[0, 2, 4, 6]";
  proto::Activity* c = Collective(&t, "ncclKernel_Broadcast_RING_LL_Sum_int8_t", 40 * kUs,
                                  50 * kUs, "broadcast", 8, 8, "Half", 2);
  (*c->mutable_args())["Process Group Name"] = "7";
  (*c->mutable_args())["Process Group Description"] = "undefined";
  const proto::Profile p = AnalyzeOne(t, "rtx-pro-6000");
  ASSERT_NE(Row(p, "all_gather"), nullptr);
  EXPECT_EQ(Row(p, "all_gather")->process_group(), "3 (ranks 0-7)");
  ASSERT_NE(Row(p, "all_reduce"), nullptr);
  EXPECT_EQ(Row(p, "all_reduce")->process_group(), "5 (ranks 0,2,4,6)");
  ASSERT_NE(Row(p, "broadcast"), nullptr);
  EXPECT_EQ(Row(p, "broadcast")->process_group(), "7 (2 ranks)");
}

TEST(CommSynthetic, CustomAndSymmetricMemoryAllReduce) {
  proto::Trace t = NewTrace("NVIDIA H100 80GB HBM3");
  t.mutable_header()->mutable_run()->set_tp(4);
  Kernel(&t, "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 4>(...)", 8, 0, 5 * kUs)
      ->mutable_work()
      ->set_comm_bytes(1 << 20);
  Kernel(&t, "multimem_all_reduce_kernel", 8, 10 * kUs, 12 * kUs)->mutable_work()->set_comm_bytes(1 << 20);
  const proto::Profile p = AnalyzeOne(t);
  ASSERT_EQ(p.comm().collectives_size(), 2);
  for (const auto& r : p.comm().collectives()) {
    EXPECT_EQ(r.name(), "all_reduce");
    EXPECT_EQ(r.group_size(), 4u);
    EXPECT_EQ(r.group_size_source(), "run info: tensor-parallel degree");
    EXPECT_EQ(r.bytes(), 1u << 20);
    if (r.library() == "custom all-reduce") {
      EXPECT_NEAR(r.busbw_gbps(), (1 << 20) / 5000.0 * 2 * 3 / 4, 1e-9);
    } else {
      EXPECT_EQ(r.library(), "symmetric memory");
      EXPECT_NEAR(r.busbw_gbps(), (1 << 20) / 2000.0 * 3 / 5, 1e-9);
    }
  }
  EXPECT_EQ(p.comm().total_ns(), 7 * kUs);
  EXPECT_EQ(p.comm().exposed_ns(), 7 * kUs);
}

// PtoP copies go against the GPU-to-GPU link.
TEST(CommSynthetic, PeerToPeerCopiesAgainstTheGpuLink) {
  proto::Trace t = NewTrace();
  Copy(&t, "PtoP", 0, 100 * kUs, 4'000'000, "device", "device");
  Copy(&t, "PtoP", 200 * kUs, 300 * kUs, 2'000'000, "device", "device");
  const proto::Profile p = AnalyzeOne(t);
  ASSERT_EQ(p.copies_size(), 1);
  const proto::CopyRow& r = p.copies(0);
  EXPECT_EQ(r.kind(), "PtoP");
  EXPECT_EQ(r.calls(), 2u);
  EXPECT_EQ(r.bytes(), 6'000'000u);
  EXPECT_NEAR(r.gbps(), 6e6 / 200e3, 1e-12);
  const devices::DeviceSpec* spec = devices::FindDevice("rtx-pro-6000");
  EXPECT_EQ(r.link_peak_gbps(), spec->interconnect_gbps.value);
  EXPECT_NE(r.link().find("PCIe Gen5 x16"), std::string::npos);
  // No kernels at all: every copy is exposed.
  EXPECT_EQ(p.comm().copy_exposed_ns(), 200 * kUs);
}

// The partial profile carries everything above: merged partials equal one analysis.
TEST(CommSynthetic, PartialsCarryTheNewState) {
  proto::Trace a = NewTrace(), b = NewTrace();
  Kernel(&a, "gemm", 7, 0, 100 * kUs, 0);
  Kernel(&a, "gemm", 7, 150 * kUs, 200 * kUs, 120 * kUs);
  Collective(&a, "ncclKernel_AllReduce_RING_LL_Sum_half", 90 * kUs, 160 * kUs, "allreduce", 512,
             512, "Half", 2);
  Copy(&a, "HtoD", 40 * kUs, 50 * kUs, 10, "pageable", "device");
  Kernel(&b, "gemm", 7, 0, 10 * kUs, 0);
  Collective(&b, "ncclKernel_AllReduce_RING_LL_Sum_half", 20 * kUs, 30 * kUs, "allreduce", 512,
             512, "Half", 2);
  Copy(&b, "memset", 40 * kUs, 41 * kUs, 64, "", "device");
  auto whole = Analyze({a, b}, {});
  ASSERT_TRUE(whole.ok());
  aggregate::ProfileState sa, sb;
  aggregate::AccumulateTrace(a, &sa);
  aggregate::AccumulateTrace(b, &sb);
  auto ra = aggregate::FromPartial(aggregate::ToPartial(sa), "a");
  auto rb = aggregate::FromPartial(aggregate::ToPartial(sb), "b");
  ASSERT_TRUE(ra.ok() && rb.ok());
  ra->Merge(*std::move(rb));
  auto merged = AnalyzeState(*ra, {});
  ASSERT_TRUE(merged.ok());
  google::protobuf::util::MessageDifferencer diff;
  std::string report;
  diff.ReportDifferencesToString(&report);
  EXPECT_TRUE(diff.Compare(*whole, *merged)) << report;
  EXPECT_EQ(merged->comm().per_device_size(), 2);
  EXPECT_EQ(merged->copies_size(), 2);
  EXPECT_GT(merged->idle().causes_size(), 0);
}

}  // namespace
}  // namespace qprof
