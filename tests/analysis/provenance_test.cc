// Where each figure says it came from, end to end through Analyze():
//   - a modelled trace (analysis/model) stays "modelled": no kernel row says registry or
//     measured even when a registry entry matches, and the totals say "modelled";
//   - third-party NCCL kernels keep their name rule although the registry lists
//     comm.allreduce with NCCL's kernel name (registry evidence is for our kernels only);
//   - host-CPU traces get rooflines for the default projection device (the one `qprof run`
//     projects onto) unless --device names another, and the ceilings say which device.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analysis/analyze.h"
#include "analysis/devices/device_specs.h"
#include "analysis/importers/import.h"
#include "api/inputs.h"
#include "gtest/gtest.h"

namespace qprof {
namespace {

proto::Activity Launch(const std::string& name, int64_t start, int64_t dur) {
  proto::Activity a;
  a.set_kind(proto::ACTIVITY_KIND_KERNEL);
  a.set_name(name);
  a.set_start_ns(start);
  a.set_end_ns(start + dur);
  return a;
}

const proto::KernelRow* Row(const proto::Profile& p, const std::string& prefix) {
  for (const auto& k : p.kernels()) {
    if (k.name().rfind(prefix, 0) == 0) return &k;
  }
  return nullptr;
}

// A small modelled trace as analysis/model writes it: every activity attributed from the
// plan with evidence "modelled"; one activity without an attribution (a memcpy).
proto::Trace ModelledTrace() {
  proto::Trace t;
  auto* h = t.mutable_header();
  h->set_provenance(proto::PROVENANCE_MODELLED);
  h->set_source_path("mxfp4.qtrace");
  h->add_devices()->set_name("NVIDIA RTX PRO 6000 Blackwell Server Edition");
  h->mutable_run()->set_format("mxfp4");
  h->mutable_run()->set_tokens_generated(3);
  h->mutable_run()->set_wall_time_ns(30000);
  h->mutable_run()->set_steps(3);
  const char* kNames[] = {"qprof_moe_slot_gemv_mxfp4", "qprof_dense_gemm_bf16",
                          "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"};
  const char* kIds[] = {"moe.slot_gemv.mxfp4", "dense.gemm.bf16", "comm.allreduce"};
  const char* kClasses[] = {"simt", "tensor", "comm"};
  int64_t now = 0;
  for (int step = 0; step < 3; ++step) {
    for (int k = 0; k < 3; ++k) {
      proto::Activity a = Launch(kNames[k], now, 1000 + 700 * k);
      a.set_kernel_id(kIds[k]);
      a.mutable_attribution()->set_pipe_class(kClasses[k]);
      a.mutable_attribution()->set_role(k == 0 ? "moe.experts" : k == 1 ? "dense" : "comm");
      a.mutable_attribution()->set_evidence("modelled");
      a.mutable_attribution()->set_evidence_detail("modelled from the decode plan");
      now += 3001;
      *t.add_activities() = a;
    }
  }
  proto::Activity m = Launch("", now, 500);
  m.set_kind(proto::ACTIVITY_KIND_MEMCPY);
  *t.add_activities() = m;
  return t;
}

TEST(Provenance, ModelledTraceIsNeverRegistryOrMeasured) {
  AnalyzeOptions o;
  o.known_kernels = api::RegistryKnownKernels();  // as the cli passes them
  ASSERT_FALSE(o.known_kernels.empty());
  auto r = Analyze({ModelledTrace()}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  const proto::Profile& p = *r;
  ASSERT_EQ(p.kernels_size(), 3);
  for (const auto& k : p.kernels()) {
    EXPECT_EQ(k.evidence(), "modelled") << k.name() << ": " << k.evidence_detail();
    EXPECT_EQ(k.provenance(), "modelled") << k.name();
  }
  // The class still comes from the plan's attribution.
  ASSERT_NE(Row(p, "qprof_dense_gemm_bf16"), nullptr);
  EXPECT_EQ(Row(p, "qprof_dense_gemm_bf16")->class_(), "tensor");
  EXPECT_EQ(Row(p, "ncclDevKernel_AllReduce")->class_(), "comm");
  EXPECT_EQ(p.totals().provenance(), "modelled");
  EXPECT_EQ(p.totals().provenance().find("measured"), std::string::npos);
  for (const auto& f : p.ceilings().formats()) {
    EXPECT_EQ(f.provenance().find("measured"), std::string::npos) << f.provenance();
  }
}

TEST(Provenance, ThirdPartyNcclKeepsItsNameRule) {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  *t.add_activities() = Launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 0, 4000);
  *t.add_activities() = Launch("qprof_moe_slot_gemv_mxfp4", 5000, 2000);
  // Our collector's record of our own all-reduce: attributed by kernel_id.
  proto::Activity ours = Launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 8000, 1000);
  ours.set_kernel_id("comm.allreduce");
  AnalyzeOptions o;
  o.known_kernels = api::RegistryKnownKernels();
  auto r = Analyze({t}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  const auto* nccl = Row(*r, "ncclDevKernel_AllReduce");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->class_(), "comm");
  EXPECT_EQ(nccl->evidence(), "name_rule") << nccl->evidence_detail();
  EXPECT_TRUE(nccl->kernel_id().empty());
  const auto* gemv = Row(*r, "qprof_moe_slot_gemv_mxfp4");
  ASSERT_NE(gemv, nullptr);
  EXPECT_EQ(gemv->evidence(), "registry");  // our kernel, by name
  EXPECT_EQ(gemv->kernel_id(), "moe.slot_gemv.mxfp4");

  proto::Trace t2;
  t2.mutable_header()->set_provenance(proto::PROVENANCE_MEASURED_GPU);
  *t2.add_activities() = ours;
  auto r2 = Analyze({t2}, o);
  ASSERT_TRUE(r2.ok()) << r2.status();
  ASSERT_EQ(r2->kernels_size(), 1);
  EXPECT_EQ(r2->kernels(0).evidence(), "registry");
  EXPECT_EQ(r2->kernels(0).class_(), "comm");
}

std::string TestDataDir() {
  if (const char* env = std::getenv("QPROF_TESTDATA"); env && *env) return env;
  return std::string(QPROF_SOURCE_DIR) + "/../shared/testdata";
}

TEST(Provenance, RealNcclTraceIsNameRuleNotRegistry) {
  const std::string path = TestDataDir() + "/kineto/a100x2_nccl_allreduce.json.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data not found: " << path;
  importers::ImportOptions io;
  io.progress = false;
  auto t = importers::ImportFile(path, io);
  ASSERT_TRUE(t.ok()) << t.status();
  AnalyzeOptions o;
  o.known_kernels = api::RegistryKnownKernels();
  auto r = Analyze({*t}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  int nccl = 0;
  for (const auto& k : r->kernels()) {
    if (k.name().find("nccl") == std::string::npos) continue;
    ++nccl;
    EXPECT_EQ(k.class_(), "comm") << k.name();
    EXPECT_EQ(k.evidence(), "name_rule") << k.name() << ": " << k.evidence_detail();
  }
  EXPECT_GE(nccl, 2);  // all-reduce and broadcast
}

proto::Trace HostTrace() {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_MEASURED_HOST);
  t.mutable_header()->add_devices()->set_name("host CPU (test)");
  proto::Activity a = Launch("qprof_moe_slot_gemv_mxfp4", 0, 50000);
  a.mutable_work()->set_bytes(1000000);
  a.mutable_work()->set_weight_bytes(1000000);
  a.mutable_work()->set_compute_pipe("simt_fp32");
  *t.add_activities() = a;
  return t;
}

TEST(Provenance, HostTraceRooflinesUseTheDefaultProjectionDevice) {
  const devices::DeviceSpec* def = devices::FindDevice(devices::kDefaultProjectionDevice);
  ASSERT_NE(def, nullptr);
  auto r = Analyze({HostTrace()}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->ceilings().notes().find("Rooflines"), std::string::npos) << r->ceilings().notes();
  EXPECT_NE(r->ceilings().notes().find(def->name), std::string::npos) << r->ceilings().notes();
  EXPECT_NE(r->ceilings().notes().find("default projection device"), std::string::npos);
  bool any_roof = false;
  for (const auto& a : r->ceilings().amdahl()) any_roof |= a.has_speedup_at_roofline();
  EXPECT_TRUE(any_roof);

  AnalyzeOptions o;
  o.device = "h200";
  auto h = Analyze({HostTrace()}, o);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_NE(h->ceilings().notes().find(devices::FindDevice("h200")->name), std::string::npos);
  EXPECT_NE(h->ceilings().notes().find("(named by --device"), std::string::npos);
  EXPECT_EQ(h->ceilings().notes().find(def->name), std::string::npos);
}

}  // namespace
}  // namespace qprof
