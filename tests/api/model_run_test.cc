// The CLI side of modelled runs: every target of the spec table, file names, errors.
#include "api/model_run.h"

#include <filesystem>
#include <unistd.h>

#include "analysis/devices/device_specs.h"
#include "gtest/gtest.h"
#include "kernels/registry/dispatch.h"
#include "proto/trace_io.h"

namespace qprof::api {
namespace {

ModelRunRequest Request(const std::string& target) {
  ModelRunRequest r;
  r.base.model = "v4-flash";
  r.base.batch = 16;
  r.base.tp = 8;
  r.base.context = 1000;
  r.base.steps = 1;
  r.variants = {{"mxfp4", "auto"}, {"nvfp4", "auto"}};
  r.target = target;
  return r;
}

TEST(ModelRun, EveryTargetOfTheTableWithAutoPaths) {
  for (const devices::DeviceSpec& d : devices::AllDevices()) {
    if (!d.IsNvidia()) {
      // The model projects our CUDA kernels: an AMD GPU is refused as a target, by name.
      auto refused = RunModelled(Request(d.key));
      ASSERT_FALSE(refused.ok()) << d.key;
      EXPECT_NE(refused.status().message().find("AMD GPU"), std::string::npos)
          << refused.status();
      continue;
    }
    auto r = RunModelled(Request(d.key));
    if (!kernels::RunsOnArch(*kernels::KernelRegistry::Global().Find("moe.slot_gemv.mxfp4"),
                             d.arch)) {
      // Older than the registry's kernels (sm_80+: the V100 of the public traces is in the
      // table for their roofs): refused, naming the architecture.
      ASSERT_FALSE(r.ok()) << d.key;
      EXPECT_NE(r.status().message().find(d.arch), std::string::npos) << r.status();
      continue;
    }
    ASSERT_TRUE(r.ok()) << d.key << ": " << r.status();
    ASSERT_EQ(r->runs.size(), 2u) << d.key;
    EXPECT_EQ(r->runs[0].variant.moe_backend, "slot_gemv");
    // auto: native FP4 MMA where the registry has a kernel for the arch (sm_120a; none
    // for B200's tcgen05), W4A16 elsewhere (kernels/registry/dispatch.h).
    const bool fp4 = kernels::RunsOnArch(
        *kernels::KernelRegistry::Global().Find("moe.fp4_mma.nvfp4"), d.arch);
    if (fp4) {
      EXPECT_GT(d.fp4_tensor_tflops.value, 0) << d.key;
    }
    EXPECT_EQ(r->runs[1].variant.moe_backend, fp4 ? "fp4_mma" : "w4a16_mma") << d.key;
    for (const ModelRunOutput& o : r->runs) {
      EXPECT_GT(o.summary.tokens_per_s, 0) << d.key;
      EXPECT_EQ(o.trace.header().provenance(), proto::PROVENANCE_MODELLED);
      EXPECT_EQ(o.trace.header().run().extra().at("model.target"), d.key);
    }
  }
}

TEST(ModelRun, FasterMemoryMeansMoreTokens) {
  auto pro = RunModelled(Request("rtx-pro-6000"));
  auto b200 = RunModelled(Request("b200"));
  ASSERT_TRUE(pro.ok() && b200.ok());
  EXPECT_GT(b200->runs[0].summary.tokens_per_s, pro->runs[0].summary.tokens_per_s);
}

// The monotonicity on the real v4-flash plan: more batch never gives fewer tokens/s
// while no MoE kernel is tensor-bound (tile padding makes tensor time a step function of
// the batch); memory-, latency- and issue-bound MoE time grows at most linearly with the
// batch (more tokens give more blocks: more bytes in flight, more SMs issuing). More
// bandwidth is never slower.
TEST(ModelRun, V4FlashBatchAndBandwidthMonotone) {
  for (const char* backend : {"slot_gemv", "w4a16_mma", "fp4_mma"}) {
    double prev = 0;
    int checked = 0;
    for (int batch : {1, 2, 3, 8, 16, 24, 48, 96, 200}) {
      ModelRunRequest r = Request("rtx-pro-6000");
      r.base.batch = batch;
      r.variants = {{std::string(backend) == "slot_gemv" ? "mxfp4" : "nvfp4", backend}};
      auto out = RunModelled(r);
      ASSERT_TRUE(out.ok()) << out.status();
      bool compute_bound = false;
      for (const proto::Activity& a : out->runs[0].trace.activities()) {
        const std::string& b = a.args().at("model.bound");
        compute_bound |= a.attribution().role() == "moe.experts" && b == "tensor";
      }
      if (compute_bound) break;
      EXPECT_GE(out->runs[0].summary.tokens_per_s, prev) << backend << " batch " << batch;
      prev = out->runs[0].summary.tokens_per_s;
      ++checked;
    }
    EXPECT_GE(checked, 5) << backend;
  }
  double prev_step = 1e300;
  for (const char* target : {"l40s", "a100", "h100", "h200", "b200"}) {  // rising bandwidth
    ModelRunRequest r = Request(target);
    r.variants = {{"nvfp4", "w4a16_mma"}};
    auto out = RunModelled(r);
    ASSERT_TRUE(out.ok()) << out.status();
    // Different devices differ in more than bandwidth; only the memory-bound MoE is compared.
    double moe_ns = 0;
    for (const proto::Activity& a : out->runs[0].trace.activities()) {
      if (a.attribution().role() == "moe.experts") moe_ns += a.end_ns() - a.start_ns();
    }
    EXPECT_LE(moe_ns, prev_step) << target;
    prev_step = moe_ns;
  }
}

TEST(ModelRun, ErrorsAreOneClearLine) {
  auto unknown = RunModelled(Request("tpu-v9"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(unknown.status().message()).find("rtx-pro-6000"), std::string::npos);
  ModelRunRequest fp4_on_hopper = Request("h200");
  fp4_on_hopper.variants = {{"nvfp4", "fp4_mma"}};
  auto r = RunModelled(fp4_on_hopper);
  ASSERT_FALSE(r.ok());
  // The registry refuses a path with no kernel for the target, naming the choices there.
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(r.status().message()).find("fp4_mma has no kernel for sm_90"),
            std::string::npos)
      << r.status();
  ModelRunRequest bad_param = Request("h200");
  bad_param.param_overrides = "simt_efficiency=2";
  EXPECT_EQ(RunModelled(bad_param).status().code(), absl::StatusCode::kInvalidArgument);
  ModelRunRequest bad_tp = Request("h200");
  bad_tp.base.tp = 3;
  EXPECT_EQ(RunModelled(bad_tp).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseModelVariants("int4", "auto").ok());
  EXPECT_FALSE(ParseModelVariants("both", "marlin").ok());
  auto v = ParseModelVariants("nvfp4", "w4a16_mma,fp4_mma");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->size(), 2u);
  EXPECT_EQ(ParseModelVariants("both", "")->size(), 2u);
}

TEST(ModelRun, WritesTracesAndSummaryWithSuffix) {
  std::string dir = ::testing::TempDir() + "/model_run_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  ModelRunRequest r = Request("rtx-pro-6000");
  r.out_dir = dir;
  r.file_suffix = ".model-rtx-pro-6000";
  auto out = RunModelled(r);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->runs[0].trace_path, dir + "/mxfp4.model-rtx-pro-6000.qtrace");
  EXPECT_EQ(out->runs[1].trace_path, dir + "/nvfp4.model-rtx-pro-6000.qtrace");
  EXPECT_EQ(out->summary_path, dir + "/model-rtx-pro-6000.summary.json");
  auto back = ReadTrace(out->runs[0].trace_path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_FALSE(back->truncated());
  EXPECT_EQ(back->header().provenance(), proto::PROVENANCE_MODELLED);
  EXPECT_EQ(back->activities_size(), out->runs[0].trace.activities_size());
  EXPECT_TRUE(std::filesystem::exists(out->summary_path));
  std::string report = ModelRunReport(*out, "rtx-pro-6000");
  EXPECT_NE(report.find("MODELLED (not measured)"), std::string::npos);
  EXPECT_NE(report.find("mxfp4 via slot_gemv"), std::string::npos);
  // Two variants of one format get the backend in the name.
  r.variants = {{"nvfp4", "w4a16_mma"}, {"nvfp4", "fp4_mma"}};
  r.file_suffix = "";
  auto two = RunModelled(r);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->runs[0].trace_path, dir + "/nvfp4-w4a16_mma.qtrace");
  EXPECT_EQ(two->runs[1].trace_path, dir + "/nvfp4-fp4_mma.qtrace");
  std::filesystem::remove_all(dir);
}

TEST(ModelRun, RunCommandEntryPoints) {
  std::string dir = ::testing::TempDir() + "/model_cli_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  runtime::RunOptions base;
  base.model = "small";
  base.batch = 8;
  base.context = 128;
  base.steps = 4;  // a host run's steps; the model plans one step
  ModelProjectionOptions opt;
  auto projected = AddModelProjection(base, "both", opt, dir, "qprof run --out x");
  ASSERT_TRUE(projected.ok()) << projected.status();
  ASSERT_EQ(projected->trace_paths.size(), 2u);
  EXPECT_EQ(projected->trace_paths[0], dir + "/mxfp4.model-rtx-pro-6000.qtrace");
  EXPECT_NE(projected->report.find("MODELLED"), std::string::npos) << projected->report;
  auto back = ReadTrace(projected->trace_paths[1]);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->header().run().command_line(), "qprof run --out x");
  EXPECT_EQ(back->header().run().moe_backend(), "fp4_mma");  // auto on sm_120
  EXPECT_EQ(back->header().run().steps(), 1u);
  opt.no_projection = true;
  EXPECT_TRUE(AddModelProjection(base, "both", opt, dir, "")->trace_paths.empty());
  opt.no_projection = false;
  opt.target = "h100";
  auto backend = RunModelBackend(base, "nvfp4", "w4a16_mma,fp4_mma", opt, dir, "qprof run");
  ASSERT_FALSE(backend.ok());  // the registry has no fp4_mma kernel for H100 (sm_90)
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kInvalidArgument);
  backend = RunModelBackend(base, "mxfp4", "auto", opt, dir, "qprof run");
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_EQ(backend->trace_paths.size(), 1u);
  EXPECT_EQ(backend->trace_paths[0], dir + "/mxfp4.qtrace");
  EXPECT_TRUE(std::filesystem::exists(dir + "/model-h100.summary.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace qprof::api
