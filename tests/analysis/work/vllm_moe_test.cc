// A vLLM-shaped synthetic Kineto trace (written here): eager decode steps on a B200 whose MoE
// layers run vllm::moe_forward -> flashinfer::trtllm_fp4_block_scale_moe, which launches a
// routing kernel, two TRT-LLM FP4 GEMMs (bmm_*E2m1*) and a finalize kernel; with a small
// Hugging Face config (NVFP4 experts) the GEMMs get the modelled work of each call, the
// row's bytes and achieved TB/s follow, and the role gets its format ceilings. Every
// expected figure is computed here from the config and the token count the trace records.
#include <cmath>
#include <fstream>
#include <string>

#include "analysis/aggregate/accumulator.h"
#include "analysis/aggregate/partial.h"
#include "analysis/analyze.h"
#include "analysis/importers/import.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "reports/html/html_report.h"
#include "reports/terminal/terminal_report.h"
#include "tests/analysis/importers/test_util.h"

namespace qprof {
namespace {

constexpr int kTokens = 16, kHidden = 2048, kInter = 768, kExperts = 64, kTopK = 6;
constexpr int kSteps = 2, kLayers = 3;
constexpr const char* kGateUp =
    "bmm_E2m1_E2m1E2m1_Fp32_t128x8x512u2_s3_et128x8_m128x8x64_cga1x1x1_16dp256b_TN_transOut_schedS_swiGlu_sm100f";
constexpr const char* kDown =
    "bmm_Bfloat16_E2m1E2m1_Fp32_t128x8x512u2_s3_et128x8_m128x8x64_cga1x1x1_16dp256b_TN_transOut_schedS_sm100f";

std::string Config() {
  return R"({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "hidden_size": 2048, "moe_intermediate_size": 768, "n_routed_experts": 64,
    "num_experts_per_tok": 6, "n_shared_experts": 1, "num_hidden_layers": 3,
    "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}})";
}

class TraceWriter {
 public:
  void Frame(const std::string& cat, const std::string& name, double ts, double dur,
             const std::string& args = "") {
    Add(R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":77,"tid":77,"ts":)" +
        Num(ts) + R"(,"dur":)" + Num(dur) + (args.empty() ? "" : R"(,"args":)" + args) + "}");
  }
  // A launch call on the CPU thread at `ts` and its kernel on the GPU at gpu_.
  void Launch(const std::string& kernel, double ts, double dur_us) {
    ++corr_;
    Add(R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":77,"tid":77,"ts":)" +
        Num(ts) + R"(,"dur":2,"args":{"correlation":)" + std::to_string(corr_) + "}}");
    Add(R"({"ph":"X","cat":"kernel","name":")" + kernel + R"(","pid":0,"tid":7,"ts":)" +
        Num(gpu_) + R"(,"dur":)" + Num(dur_us) + R"(,"args":{"device":0,"stream":7,"correlation":)" +
        std::to_string(corr_) + R"(,"grid":[132,1,1],"block":[256,1,1],"registers per thread":128,"shared memory":65536}})");
    gpu_ += dur_us + 1;
  }
  std::string Json() const {
    return R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA B200","totalGlobalMem":191000000000,"computeMajor":10,"computeMinor":0,"maxThreadsPerBlock":1024,"maxThreadsPerMultiprocessor":2048,"regsPerBlock":65536,"warpSize":32,"sharedMemPerBlock":49152,"numSms":148,"regsPerMultiprocessor":65536,"sharedMemPerBlockOptin":232448,"sharedMemPerMultiprocessor":233472}],"traceEvents":[)" +
           events_ + "]}";
  }
  double gpu_ = 1000000;

 private:
  static std::string Num(double v) {
    char b[64];
    std::snprintf(b, sizeof b, "%.3f", v);
    return b;
  }
  void Add(const std::string& e) {
    if (!events_.empty()) events_ += ",\n";
    events_ += e;
  }
  std::string events_;
  int corr_ = 0;
};

// The trace: per step and layer one MoE call with the kernels FlashInfer's TRT-LLM FP4 MoE
// launches; GEMM times chosen per layer.
std::string VllmTrace() {
  TraceWriter w;
  const std::string moe_args =
      R"({"Input Dims":[[16,2048],[16,64],[]],"Input type":["c10::BFloat16","c10::BFloat16",""],"Concrete Inputs":["","",""]})";
  const std::string fi_args =
      R"({"Input Dims":[[16,64],[],[16,1024],[16,128],[64,3072,1024],[64,3072,128],[64,2048,384],[64,2048,48]],"Input type":["c10::BFloat16","","unsigned char","unsigned char","unsigned char","unsigned char","unsigned char","unsigned char"],"Concrete Inputs":["","","","","","","",""]})";
  double t = 100;
  for (int s = 0; s < kSteps; ++s) {
    const double step0 = t;
    for (int l = 0; l < kLayers; ++l) {
      w.Frame("python_function", "vllm/model_executor/layers/fused_moe/layer.py(1500): forward", t, 90);
      w.Frame("cpu_op", "vllm::moe_forward", t + 1, 88, moe_args);
      w.Frame("cpu_op", "flashinfer::trtllm_fp4_block_scale_moe", t + 5, 80, fi_args);
      w.Launch("void moe::dev::routing::routingIndicesClusterKernel<KernelParams>(KernelParams)", t + 10, 3);
      w.Launch(kGateUp, t + 20, 40 + 5 * l);
      w.Launch(kDown, t + 40, 20 + 5 * l);
      w.Launch("void moe::dev::finalize::finalizeKernel<KernelParams>(KernelParams)", t + 60, 2);
      t += 100;
    }
    // Steps do not overlap, as torch.profiler's do not.
    w.Frame("user_annotation", "ProfilerStep#" + std::to_string(s + 1), step0 - 5, t - step0 - 10);
  }
  return w.Json();
}

proto::Profile Analyse(const proto::Trace& trace, bool with_config) {
  AnalyzeOptions o;
  if (with_config) {
    auto m = ceilings::ParseModelConfig(Config(), "dsv3-small/config.json");
    EXPECT_TRUE(m.ok()) << m.status();
    o.model = *m;
  }
  auto p = Analyze({trace}, o);
  EXPECT_TRUE(p.ok()) << p.status();
  return *p;
}

TEST(VllmMoe, Fp4MoeRowsGetTheModelledWorkOfEachCall) {
  importers::ImportOptions io;
  io.progress = false;
  const std::string path = importers::testing::WriteTemp("vllm_fp4_moe.json", VllmTrace());
  auto trace = importers::ImportFile(path, io);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const proto::Profile p = Analyse(*trace, true);
  // One call: T tokens, top-k of E experts, gated MLP at NVFP4's 4.5 bits per weight.
  const double touched = kExperts * (1 - std::pow(1 - double(kTopK) / kExperts, kTokens));
  const double weights = touched * 3.0 * kHidden * kInter * 4.5 / 8;
  const double call_bytes = weights + 2.0 * kTokens * kHidden * 2;  // BF16 tokens in and out
  const double call_flops = 2.0 * kTokens * kTopK * 3 * kHidden * kInter;
  const double calls = kSteps * kLayers;
  int gemm_rows = 0;
  double moe_time = 0;
  for (const auto& k : p.kernels()) {
    const bool gemm = k.name().rfind("bmm_", 0) == 0;
    if (!gemm) {
      EXPECT_EQ(k.work_launches(), 0u) << k.name() << " is a helper of the call";
      continue;
    }
    ++gemm_rows;
    EXPECT_EQ(k.role(), "moe.experts");
    EXPECT_EQ(k.class_(), "tensor");
    EXPECT_EQ(k.work_launches(), static_cast<uint64_t>(calls));
    // Two GEMM kernels per call: each carries half of the call's work.
    EXPECT_NEAR(k.flops(), calls * call_flops / 2, 1e-6 * call_flops);
    EXPECT_NEAR(k.bytes(), calls * call_bytes / 2, 1e-6 * call_bytes);
    EXPECT_DOUBLE_EQ(k.achieved_gbps(), k.bytes() / static_cast<double>(k.work_time_ns()));
    EXPECT_EQ(k.roof_pipe(), "tensor_fp4") << "the kernel name says E2M1";
    EXPECT_EQ(k.work_source().rfind("modelled from --model-shape", 0), 0u) << k.work_source();
    EXPECT_NE(k.work_source().find("uniform routing"), std::string::npos);
    EXPECT_NE(k.work_source().find("1/2 of the call"), std::string::npos) << k.work_source();
    moe_time += static_cast<double>(k.work_time_ns());
  }
  EXPECT_EQ(gemm_rows, 2);
  // The role's format ceilings from the measured work, per step (two ProfilerStep ranges).
  const proto::RoleCeiling* rc = nullptr;
  for (const auto& r : p.ceilings().roles()) {
    if (r.role() == "moe.experts") rc = &r;
  }
  ASSERT_NE(rc, nullptr);
  EXPECT_DOUBLE_EQ(rc->steps(), kSteps);
  EXPECT_NEAR(rc->bytes_per_step(), kLayers * call_bytes, 1e-6 * call_bytes);
  EXPECT_NEAR(rc->weight_bytes_per_step(), kLayers * weights, 1e-6 * weights);
  EXPECT_NEAR(rc->time_per_step_ns(), moe_time / kSteps, 1e-6);
  EXPECT_EQ(rc->current_format(), "nvfp4");
  const devices::DeviceSpec* b200 = devices::FindDevice("b200");
  ASSERT_NE(b200, nullptr);
  EXPECT_NEAR(rc->bandwidth_fraction(), calls * call_bytes / moe_time / b200->EffectiveBandwidthGbps(), 1e-9);
  ASSERT_EQ(rc->formats_size(), 4);
  for (const auto& f : rc->formats()) {
    // bytes_F = parameters x bpw(F) / 8 + the activations; parameters at NVFP4's 4.5 bits.
    const double params = kLayers * weights * 8 / 4.5;
    const double bpw = ceilings::BitsPerWeight(f.format());
    EXPECT_NEAR(f.bytes_per_step(), params * bpw / 8 + kLayers * (call_bytes - weights), 1e-3)
        << f.format();
    EXPECT_EQ(f.is_current(), f.format() == "nvfp4");
    EXPECT_GT(f.time_ns(), 0);
  }
  EXPECT_NE(rc->note().find("moe.experts reads"), std::string::npos) << rc->note();
  EXPECT_NE(rc->note().find("as NVFP4 (4.5 bits per weight)"), std::string::npos) << rc->note();
  EXPECT_NE(rc->note().find("as MXFP4"), std::string::npos);
  EXPECT_NE(rc->note().find("as FP8"), std::string::npos);
  EXPECT_NE(rc->note().find("time measured"), std::string::npos);
  EXPECT_NE(rc->note().find("modelled"), std::string::npos);
  // Reports show it.
  const std::string text = reports::ProfileSummaryText(p);
  EXPECT_NE(text.find("Achieved vs roof"), std::string::npos);
  EXPECT_NE(text.find("moe.experts reads"), std::string::npos);
  const std::string html = reports::RenderProfileHtml(p, {});
  EXPECT_NE(html.find("id=\"roofline\""), std::string::npos);
  EXPECT_NE(html.find("data-pipe=\"tensor_fp4\""), std::string::npos);
  // Without the config the GEMMs carry no work and a warning says what to pass.
  const proto::Profile bare = Analyse(*trace, false);
  bool warned = false;
  for (const auto& w : bare.warnings()) warned |= w.code() == "work_needs_model";
  EXPECT_TRUE(warned);
  for (const auto& k : bare.kernels()) EXPECT_EQ(k.work_launches(), 0u) << k.name();
}

// A partial profile carries the calls' work: analysing it equals analysing the trace.
TEST(VllmMoe, PartialProfileCarriesTheWork) {
  importers::ImportOptions io;
  io.progress = false;
  const std::string path = importers::testing::WriteTemp("vllm_fp4_moe_partial.json", VllmTrace());
  auto trace = importers::ImportFile(path, io);
  ASSERT_TRUE(trace.ok()) << trace.status();
  aggregate::ProfileState state;
  aggregate::AccumulateTrace(*trace, &state);
  auto bytes = aggregate::PartialBytes(state);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  auto back = aggregate::ParsePartialBytes(*bytes, "partial");
  ASSERT_TRUE(back.ok()) << back.status();
  auto m = ceilings::ParseModelConfig(Config(), "dsv3-small/config.json");
  ASSERT_TRUE(m.ok());
  AnalyzeOptions o;
  o.model = *m;
  auto direct = AnalyzeState(state, o);
  auto merged = AnalyzeState(*back, o);
  ASSERT_TRUE(direct.ok() && merged.ok());
  std::string diff;
  google::protobuf::util::MessageDifferencer d;
  d.ReportDifferencesToString(&diff);
  EXPECT_TRUE(d.Compare(*direct, *merged)) << diff;
}

}  // namespace
}  // namespace qprof
