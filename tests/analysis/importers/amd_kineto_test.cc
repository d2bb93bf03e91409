// A PyTorch-on-ROCm profile read honestly: a synthetic Kineto trace shaped like the ones
// PyTorch writes on an MI300X (deviceProperties with the keys libkineto's ROCm build writes:
// HIP's computeMajor/Minor 9.4, warpSize 64, maxSharedMemoryPerMultiProcessor; hip* runtime
// records in category cuda_runtime; hipBLASLt Cijk_*_MI* and composable_kernel kernels).
// Kernel records carry their launch shape, as those of ROCm capture traces do, so that
// occupancy has something to refuse. Expected figures come from the events the test writes: which of them are matrix-core
// kernels is stated with each kernel (MFMA: the Tensile MatrixInstruction, CK's XDL, ck_tile
// FMHA), and the launch calls are counted from the runtime records.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "analysis/ingest.h"
#include "gtest/gtest.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

struct Kernel {
  std::string name;
  bool mfma;     // a matrix-core kernel
  double dur;    // us
  int launches;
  std::string api;  // the hip call that launches it
};

const std::vector<Kernel> kKernels = {
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT64x32x256_MI16x16x1_SN_LDSB1_AFC1_ISA942", true,
     40, 6, "hipExtModuleLaunchKernel"},
    {"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI32x32x8_SN_LDSB1_AFC1_ISA942", true,
     25, 6, "hipExtModuleLaunchKernel"},
    {"void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<"
     "ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t, ck_tile::bf16_t> > > >(ck_tile::"
     "FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<ck_tile::BlockFmhaPipelineProblem<"
     "ck_tile::bf16_t, ck_tile::bf16_t> > >::Kargs)",
     true, 30, 3, "hipModuleLaunchKernel"},
    {"void ck::kernel_gemm_xdl_cshuffle_v3<ck::GridwiseGemm_xdl_cshuffle_v3<ck::half_t>, true, "
     "(ck::InMemoryDataOperationEnum)0, 1, (ck::TailNumber)1>(ck::GridwiseGemm_xdl_cshuffle_v3<ck::"
     "half_t>::Argument)",
     true, 20, 3, "hipLaunchKernel"},
    {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
     "3ul>)",
     false, 5, 12, "hipLaunchKernel"},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, "
     "float, float, float>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::"
     "MeanOps<float, float, float, float>, unsigned int, float, 4, 4>)",
     false, 4, 6, "hipLaunchKernel"},
};

constexpr char kMi300x[] =
    R"({"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 205571227648, "computeMajor": 9, "computeMinor": 4, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 64, "sharedMemPerBlock": 65536, "numSms": 304, "maxSharedMemoryPerMultiProcessor": 65536})";

struct Written {
  std::string path;
  uint64_t runtime_calls = 0, launch_calls = 0;
  double tensor_us = 0, total_us = 0;
};

// The trace: each launch under an aten op, the runtime records with their "kernel" arg and
// launch shape (ROCm puts grid/block on the runtime record), the kernel records with device,
// stream, correlation and "kind"; hipGetDevicePropertiesR0600 and hipMemcpyAsync calls
// that launch nothing.
Written WriteTrace(const std::string& file, const std::string& device_props) {
  Written w;
  std::vector<std::string> ev;
  auto add = [&ev](const std::string& cat, const std::string& name, int pid, int tid, double ts,
                   double dur, const std::string& args) {
    ev.push_back(absl::StrCat("{\"ph\": \"X\", \"cat\": \"", cat, "\", \"name\": \"", name,
                              "\", \"pid\": ", pid, ", \"tid\": ", tid, ", \"ts\": ", ts,
                              ", \"dur\": ", dur, ", \"args\": {", args, "}}"));
  };
  double t = 1000, gpu = 1000;
  int corr = 1;
  for (const Kernel& k : kKernels) {
    for (int i = 0; i < k.launches; ++i, ++corr) {
      add("cpu_op", "aten::linear", 23232, 23232, t, 20, "\"External id\": " + std::to_string(corr));
      add("cuda_runtime", "hipGetDevicePropertiesR0600", 23232, 23232, t + 1, 1,
          absl::StrCat("\"cid\": 1, \"correlation\": ", 100000 + corr));
      ++w.runtime_calls;
      add("cuda_runtime", k.api, 23232, 23232, t + 3, 5,
          absl::StrCat("\"External id\": ", corr, ", \"kernel\": \"", k.name, "\", \"cid\": 107, ",
                       "\"correlation\": ", corr, ", \"grid\": [304, 1, 1], \"block\": [256, 1, 1], ",
                       "\"shared memory\": 0"));
      ++w.runtime_calls;
      ++w.launch_calls;
      gpu = std::max(gpu, t + 10);
      add("kernel", k.name, 2, 0, gpu, k.dur,
          absl::StrCat("\"device\": 2, \"stream\": 0, \"correlation\": ", corr,
                       ", \"kind\": \"Dispatch Kernel\", \"grid\": [304, 1, 1], \"block\": [256, 1, 1]"));
      gpu += k.dur + 1;
      w.total_us += k.dur;
      if (k.mfma) w.tensor_us += k.dur;
      t += 30;
    }
  }
  add("cuda_runtime", "hipMemcpyAsync", 23232, 23232, t, 15, "\"cid\": 44, \"correlation\": 99999");
  ++w.runtime_calls;
  add("gpu_memcpy", "Memcpy DtoH (Device -> Host)", 2, 0, gpu + 5, 3,
      "\"device\": 2, \"stream\": 0, \"correlation\": 99999, \"bytes\": 4096");
  const std::string props = absl::StrCat("[", device_props, "]");
  std::string doc = absl::StrCat("{\"schemaVersion\": 1, \"deviceProperties\": ", props,
                                 ", \"roctracer_version\": 4, \"traceEvents\": [\n",
                                 absl::StrJoin(ev, ",\n"), "\n]}");
  w.path = importers::testing::WriteTemp(file, doc);
  return w;
}

std::string WithDevice(std::string props, const std::string& from, const std::string& to) {
  props.replace(props.find(from), from.size(), to);
  return props;
}

importers::ImportOptions Quiet() {
  importers::ImportOptions o;
  o.progress = false;
  return o;
}

TEST(AmdKineto, DeviceMatrixCoresHostCallsAndNoNvidiaOccupancy) {
  // As in PyTorch's ROCm traces, the kernels run on device 2 and deviceProperties lists the
  // process's one GPU as id 0: the one GPU listed describes the one used, with a warning.
  const Written w = WriteTrace("rocm.json", kMi300x);
  auto trace = importers::ImportFile(w.path, Quiet());
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->header().devices_size(), 1);
  const proto::DeviceInfo& d = trace->header().devices(0);
  EXPECT_EQ(d.id(), 2u);
  bool warned = false;
  for (const auto& m : trace->header().collector().warnings()) {
    warned |= m.find("kernels run on device 2, which deviceProperties does not list") !=
              std::string::npos;
  }
  EXPECT_TRUE(warned);
  EXPECT_EQ(d.name(), "AMD Instinct MI300X");
  EXPECT_EQ(d.vendor(), "AMD");
  EXPECT_EQ(d.arch(), "gfx942");  // the spec table's target for this name, never "sm_94"
  EXPECT_EQ(d.cc_major(), 0u);
  EXPECT_EQ(d.warp_size(), 64u);
  EXPECT_EQ(d.sm_count(), 304u);
  // HIP runtime calls count as CUDA's: every call, and the launches among them.
  EXPECT_EQ(trace->header().host_calls().runtime_calls(), w.runtime_calls);
  EXPECT_EQ(trace->header().host_calls().launch_calls(), w.launch_calls);
  // No NVIDIA occupancy on an AMD launch, whatever the trace says about its shape.
  for (const auto& a : trace->activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    EXPECT_EQ(a.occupancy().active_blocks_per_sm(), 0u) << a.name();
  }

  for (const std::string& device : {std::string(), std::string("h100")}) {
    auto state = IngestFile(w.path, Quiet());
    ASSERT_TRUE(state.ok()) << state.status();
    AnalyzeOptions ao;
    ao.device = device;  // --device h100 must not lend its CUDA rules to AMD launches
    auto p = AnalyzeState(*state, ao);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->devices_size(), 1);
    EXPECT_EQ(p->devices(0).vendor(), "AMD");
    EXPECT_EQ(p->devices(0).arch(), "gfx942");
    double tensor_share = 0;
    for (const auto& c : p->classes()) {
      if (c.class_() == "tensor") tensor_share = c.share();
    }
    EXPECT_NEAR(tensor_share, w.tensor_us / w.total_us, 1e-9);
    EXPECT_EQ(p->launch_summary().launches_with_occupancy(), 0u);
    for (const auto& k : p->kernels()) {
      EXPECT_EQ(k.launch().launches_with_occupancy(), 0u) << k.name();
      EXPECT_EQ(k.launch().active_blocks_per_sm(), 0u) << k.name();
    }
    // ...and the reason says so.
    EXPECT_NE(p->launch_summary().occupancy_unavailable().find("AMD's rules"), std::string::npos)
        << p->launch_summary().occupancy_unavailable();
    if (device.empty()) {
      EXPECT_NE(p->ceilings().notes().find("Instinct MI300X"), std::string::npos)
          << p->ceilings().notes();
    }
  }
}

TEST(AmdKineto, UnlistedDeviceStaysUnknownWhenTheListedOnesDiffer) {
  // Two different GPUs listed, neither the one used: nothing tells which it is.
  const std::string other = WithDevice(WithDevice(kMi300x, "\"id\": 0", "\"id\": 1"),
                                       "AMD Instinct MI300X", "AMD Instinct MI325X");
  const Written w = WriteTrace("rocm_two.json", absl::StrCat(kMi300x, ", ", other));
  auto t = importers::ImportFile(w.path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->header().devices_size(), 1);
  EXPECT_EQ(t->header().devices(0).id(), 2u);
  EXPECT_EQ(t->header().devices(0).name(), "unknown");
}

TEST(AmdKineto, UnnamedDevicesAreIdentifiedByTheirPropertiesOrTarget) {
  // vLLM's ROCm traces leave the name empty; newer Kineto builds add gcnArchName. Their 304
  // CUs and ~192 GiB fit one row of the spec table: the name says which, and how.
  std::string props = WithDevice(kMi300x, "\"name\": \"AMD Instinct MI300X\"",
                                 "\"name\": \"\", \"gcnArchName\": \"gfx942:sramecc+:xnack-\"");
  const Written w = WriteTrace("rocm_gcn.json", WithDevice(props, "\"id\": 0", "\"id\": 2"));
  auto t = importers::ImportFile(w.path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().devices(0).name(), "Instinct MI300X (identified by 304 CUs, 191 GiB and gfx942)");
  EXPECT_EQ(t->header().devices(0).arch(), "gfx942");

  props = WithDevice(kMi300x, "\"name\": \"AMD Instinct MI300X\"", "\"name\": \"\"");
  const Written bare = WriteTrace("rocm_bare.json", WithDevice(props, "\"id\": 0", "\"id\": 2"));
  t = importers::ImportFile(bare.path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().devices(0).name(), "Instinct MI300X (identified by 304 CUs and 191 GiB)");
  EXPECT_EQ(t->header().devices(0).arch(), "gfx942");  // the row's target
  EXPECT_EQ(t->header().devices(0).vendor(), "AMD");

  // Properties no row fits (a CU count the table has not): named by what the trace says.
  props = WithDevice(props, "\"numSms\": 304", "\"numSms\": 200");
  const Written odd = WriteTrace("rocm_odd.json", WithDevice(props, "\"id\": 0", "\"id\": 2"));
  t = importers::ImportFile(odd.path, Quiet());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->header().devices(0).name(), "AMD GPU (HIP 9.4)");
  EXPECT_EQ(t->header().devices(0).arch(), "");
}

}  // namespace
}  // namespace qprof
