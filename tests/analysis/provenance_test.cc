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
#include "cli/analysis_inputs.h"
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

TEST(Provenance, ThirdPartyNcclKeepsItsNameRule) {
  proto::Trace t;
  t.mutable_header()->set_provenance(proto::PROVENANCE_IMPORTED);
  *t.add_activities() = Launch("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", 0, 4000);
  *t.add_activities() = Launch("qprof_moe_slot_gemv_mxfp4", 5000, 2000);
  // Our collector's record of our own all-reduce: attributed by kernel_id.
  proto::Activity ours = Launch("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 8000, 1000);
  ours.set_kernel_id("comm.allreduce");
  AnalyzeOptions o;
  o.known_kernels = cli::RegistryKnownKernels();
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
  o.known_kernels = cli::RegistryKnownKernels();
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

}  // namespace
}  // namespace qprof
