// Work on every trace, on a CPU: the CUDA decoder's launch list (made without a GPU) is
// played on the scripted fake GPU behind the collector's CUPTI seam (NVTX ranges pushed
// and popped, one launch per kernel), so the real CUPTI collector records and decodes it
// (Start, Stop, Flush: real CUpti record structs in its buffers); then exactly what the
// CUDA backend does after its collector flushed (FinishCudaTrace: RunInfo, notes, the work
// join); then the analyzer `qprof run` uses. The report must have every field the report
// of a CPU run of the same workload has: achieved GB/s per kernel, rooflines per role and
// class, format ceilings, ... (only the GPU is left out).
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analyze.h"
#include "api/inputs.h"
#include "gtest/gtest.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/cupti_collector.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/cuda_trace.h"
#include "runtime/plan.h"
#include "runtime/run.h"
#include "tests/profiler/cupti/fake/fake_cupti.h"

namespace qprof::runtime::cuda {
namespace {

namespace fake = profiler::cupti::fake;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr uint64_t kTid = 5;

RunOptions Workload() {
  RunOptions o;
  o.model = "tiny";
  o.format = "nvfp4";
  o.moe_backend = "slot_gemv";
  o.batch = 3;
  o.steps = 3;
  o.context = 40;
  o.threads = 2;
  return o;
}

CudaDecoderOptions DecoderOptionsFor(const RunOptions& o) {
  CudaDecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = *ChooseKernels(o);
  d.seed = o.seed;
  return d;
}

// The decode loop of `o` on the fake GPU: every kernel of each step's launch list, under
// the NVTX ranges the decoder pushes; kernel durations follow their work at ~3 TB/s so
// the achieved rates are plausible.
void PlayDecode(const RunOptions& o, const ModelWeights& weights, fake::FakeCupti& gpu,
                DecodeLoop* loop) {
  const CudaDecoderOptions dopt = DecoderOptionsFor(o);
  CUcontext ctx = gpu.CreateContext(0);
  gpu.NvtxPush(kTid, "decode");
  for (int s = 0; s < o.steps; ++s) {
    gpu.NvtxPush(kTid, absl::StrCat("step ", s));
    auto list = CudaDecoder::LaunchList(weights.arch, weights.format, weights.layers, dopt, s, 132);
    ASSERT_TRUE(list.ok()) << list.status();
    std::string open;
    for (const StepKernels& c : *list) {
      SwitchRange(open, c.launch.range, [&](const std::string& n) { gpu.NvtxPush(kTid, n); },
                  [&] { gpu.NvtxPop(kTid); });
      open = c.launch.range;
      for (const kernels::CudaLaunch* k : c.kernels) {
        const double bytes = k->work(c.launch.shape).bytes();
        gpu.LaunchKernel(ctx, 7, k->name, 2000 + static_cast<uint64_t>(bytes / 3000.0), kTid);
      }
    }
    SwitchRange(open, "", [](const std::string&) {}, [&] { gpu.NvtxPop(kTid); });
    gpu.NvtxPop(kTid);
    loop->step_ns.push_back(1'000'000 + 10'000 * s);
    loop->tokens.push_back(std::vector<int32_t>(o.batch, 7 + s));
  }
  gpu.NvtxPop(kTid);
  gpu.SyncAll();
}

// What the CUDA backend's trace of `o` is, from the real collector over the fake GPU.
proto::Trace FakeGpuTrace(const RunOptions& o, const ModelWeights& weights) {
  setenv("QPROF_CUPTI_QUIET", "1", 1);
  fake::FakeDevice h200;
  h200.name = "NVIDIA H200";
  fake::FakeCupti gpu({h200});
  auto collector = profiler::cupti::MakeCuptiCollector(profiler::cupti::CuptiOptions{}, gpu);
  EXPECT_TRUE(collector.ok()) << collector.status();
  EXPECT_TRUE((*collector)->Start().ok());
  DecodeLoop loop;
  loop.start_unix_ns = 1'700'000'000'000'000'000;
  PlayDecode(o, weights, gpu, &loop);
  proto::Trace trace;
  EXPECT_TRUE((*collector)->Stop().ok());
  EXPECT_TRUE((*collector)->Flush(&trace).ok());
  RunOptions on_gpu = o;
  on_gpu.backend = "cuda";
  on_gpu.target_arch = "sm_90";
  RunFacts facts;
  facts.backend = "cuda";
  facts.choice = DecoderOptionsFor(o).choice;
  facts.warmup_steps = CudaWarmupSteps(on_gpu);
  facts.setup_wall_ns = 250'000'000;
  for (int s = facts.warmup_steps; s < o.steps; ++s) facts.wall_time_ns += loop.step_ns[s];
  CudaRunFacts cuda;
  cuda.devices = {0};
  const CudaDecoderOptions dopt = DecoderOptionsFor(o);
  absl::Status st = FinishCudaTrace(
      on_gpu, weights.arch, weights, loop, facts, cuda, proto::RunSetup(),
      [&](int step, uint32_t) {
        return CudaDecoder::LaunchList(weights.arch, weights.format, weights.layers, dopt, step, 132);
      },
      &trace);
  EXPECT_TRUE(st.ok()) << st;
  return trace;
}

// Every populated field of `m`, as paths ("kernels.achieved_gbps"); repeated messages
// contribute the union over their elements.
void Fields(const Message& m, const std::string& prefix, std::set<std::string>* out) {
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    const std::string path = prefix + f->name();
    out->insert(path);
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || f->is_map()) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < m.GetReflection()->FieldSize(m, f); ++i) {
        Fields(m.GetReflection()->GetRepeatedMessage(m, f, i), path + ".", out);
      }
    } else {
      Fields(m.GetReflection()->GetMessage(m, f), path + ".", out);
    }
  }
}

TEST(GpuTraceWorkTest, CollectedCuptiRecordsReportEverythingACpuRunReports) {
  const RunOptions o = Workload();
  kernels::ThreadPool pool(2);
  auto weights = MakeSyntheticWeights(*LoadModelArch(o.model), kernels::Fp4Format::kNvfp4, 0,
                                      o.seed, &pool);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const proto::Trace gpu = FakeGpuTrace(o, *weights);
  ASSERT_EQ(gpu.header().provenance(), proto::PROVENANCE_MEASURED_GPU);
  int kernels = 0, with_work = 0;
  for (const proto::Activity& a : gpu.activities()) {
    if (a.kind() != proto::ACTIVITY_KIND_KERNEL) continue;
    ++kernels;
    with_work += a.work().bytes() > 0;
    EXPECT_FALSE(a.kernel_id().empty()) << a.name();
  }
  ASSERT_GT(kernels, 0);
  EXPECT_EQ(with_work, kernels);
  bool join_note = false;
  for (const std::string& n : gpu.header().notes()) {
    join_note |= n.find(absl::StrCat("joined onto ", kernels, " of ", kernels)) != std::string::npos;
  }
  EXPECT_TRUE(join_note);

  AnalyzeOptions opt;
  opt.known_kernels = api::RegistryKnownKernels();
  auto gpu_profile = Analyze({gpu}, opt);
  ASSERT_TRUE(gpu_profile.ok()) << gpu_profile.status();
  RunOptions host = o;
  host.backend = "cpu";
  auto cpu = RunDecode(host);
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  opt.device = "h200";  // the CPU run's rooflines on the same GPU
  auto cpu_profile = Analyze({cpu->trace}, opt);
  ASSERT_TRUE(cpu_profile.ok()) << cpu_profile.status();

  // The figures the issue names, on the GPU trace: achieved GB/s on every kernel row (and
  // under the device's measured copy bandwidth), rooflines, format ceilings.
  for (const proto::KernelRow& k : gpu_profile->kernels()) {
    ASSERT_TRUE(k.has_achieved_gbps()) << k.name();
    EXPECT_GT(k.achieved_gbps(), 0) << k.name();
    EXPECT_LT(k.achieved_gbps(), 4300) << k.name();  // H200's measured copy rate
    EXPECT_FALSE(k.kernel_id().empty()) << k.name();
  }
  EXPECT_GT(gpu_profile->ceilings().formats_size(), 0);
  // The figures, for the log (what a GPU run's report now shows).
  for (const proto::KernelRow& k : gpu_profile->kernels()) {
    std::printf("  %-36s %4lu calls  %8.1f GB/s  (%s)\n", k.name().c_str(),
                static_cast<unsigned long>(k.calls()), k.achieved_gbps(), k.work_source().c_str());
  }
  for (const proto::FormatCeiling& f : gpu_profile->ceilings().formats()) {
    std::printf("  ceiling %s on %s: %.4g bits/weight, %.1f tok/s\n", f.format().c_str(),
                f.device().c_str(), f.bits_per_weight(), f.tokens_per_s());
  }
  // Every field the CPU run's report has, the GPU trace's has too.
  std::set<std::string> cpu_fields, gpu_fields;
  Fields(*cpu_profile, "", &cpu_fields);
  Fields(*gpu_profile, "", &gpu_fields);
  std::vector<std::string> missing;
  for (const std::string& f : cpu_fields) {
    if (!gpu_fields.count(f)) missing.push_back(f);
  }
  EXPECT_TRUE(missing.empty()) << "fields of the CPU report missing in the GPU report: "
                               << absl::StrJoin(missing, ", ");
}

}  // namespace
}  // namespace qprof::runtime::cuda
