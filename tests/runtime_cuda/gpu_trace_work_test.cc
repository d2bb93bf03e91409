// Work on every trace, on a CPU: CUPTI records fabricated from the CUDA decoder's launch
// list (NVTX markers, launch API records, kernel records of real CUpti struct versions,
// a device record) go through the collector's record decoding, then through exactly what
// the CUDA backend does after its collector flushed (FinishCudaTrace: RunInfo, notes, the
// work join), then through the analyzer `qprof run` uses. The resulting report must have
// every field the report of a CPU run of the same workload has: achieved GB/s per kernel,
// rooflines per role and class, format ceilings, ... (only the GPU is left out).
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>

#include <algorithm>
#include <deque>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analysis/analyze.h"
#include "cli/analysis_inputs.h"
#include "gtest/gtest.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/activity_decoder.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/cuda_trace.h"
#include "runtime/plan.h"
#include "runtime/run.h"
#include "tests/profiler_cupti/fake_records.h"

namespace qprof::runtime::cuda {
namespace {

namespace fake = profiler::cupti::testing;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr uint32_t kLaunch = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
constexpr uint32_t kTid = 5;

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

// Records of `steps` decode steps as CUPTI would hand them over: markers for every range,
// a runtime launch record and a kernel record per kernel of the launch list. Kernel
// durations follow their work at ~3 TB/s so the achieved rates are plausible.
class FakeRun {
 public:
  void Marker(bool start, const std::string& name) {
    if (start) {
      names_.push_back(name);
      ids_.push_back(next_id_++);
      buf_.Append(fake::Marker(true, ids_.back(), names_.back().c_str(), Tick(), kTid));
    } else {
      buf_.Append(fake::Marker(false, ids_.back(), nullptr, Tick(), kTid));
      ids_.pop_back();
    }
  }
  void Kernel(const std::string& name, double bytes) {
    kernel_names_.push_back(name);
    const uint32_t c = next_correlation_++;
    buf_.Append(fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME, kLaunch, Tick(), Tick(), kTid, c));
    const uint64_t start = std::max(gpu_ns_, now_);
    const uint64_t end = start + 2000 + static_cast<uint64_t>(bytes / 3000.0);
    kernels_.push_back(fake::Kernel(kernel_names_.back().c_str(), start, end, c));
    gpu_ns_ = end + 500;
  }
  void Device() {
    CUpti_ActivityDevice5 d;
    std::memset(&d, 0, sizeof(d));
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.name = "NVIDIA H200";
    d.computeCapabilityMajor = 9;
    d.numMultiprocessors = 132;
    d.globalMemorySize = 141ull << 30;
    d.globalMemoryBandwidth = 4'800'000'000ull;  // KB/s
    d.coreClockRate = 1'980'000;                  // kHz
    buf_.Append(d);
  }
  proto::Trace Decode() {
    for (const CUpti_ActivityKernel10& k : kernels_) buf_.Append(k);
    profiler::cupti::ActivityDecoder decoder;
    for (const CUpti_Activity* r : buf_.Records()) decoder.Add(r);
    proto::Trace trace;
    decoder.Finish(&trace);
    return trace;
  }
  uint64_t now() const { return now_; }

 private:
  uint64_t Tick() { return now_ += 100; }
  fake::FakeBuffer buf_;
  std::vector<CUpti_ActivityKernel10> kernels_;
  // The records point at these until they are decoded: a deque never moves its strings.
  std::deque<std::string> names_;
  std::deque<std::string> kernel_names_;
  std::vector<uint32_t> ids_;
  uint32_t next_id_ = 1, next_correlation_ = 100;
  uint64_t now_ = 1'000'000, gpu_ns_ = 0;
};

// What the CUDA backend's trace of `o` would be, from fabricated records.
proto::Trace FabricatedGpuTrace(const RunOptions& o, const ModelWeights& weights) {
  const CudaDecoderOptions dopt = DecoderOptionsFor(o);
  FakeRun run;
  run.Device();
  run.Marker(true, "decode");
  DecodeLoop loop;
  for (int s = 0; s < o.steps; ++s) {
    const uint64_t t0 = run.now();
    run.Marker(true, absl::StrCat("step ", s));
    auto list = CudaDecoder::LaunchList(weights.arch, weights.format, weights.layers, dopt, s, 132);
    EXPECT_TRUE(list.ok()) << list.status();
    std::string open;
    for (const StepKernels& c : *list) {
      SwitchRange(open, c.launch.range, [&](const std::string& n) { run.Marker(true, n); },
                  [&] { run.Marker(false, ""); });
      open = c.launch.range;
      for (const kernels::CudaLaunch* k : c.kernels) run.Kernel(k->name, k->work(c.launch.shape).bytes());
    }
    SwitchRange(open, "", [](const std::string&) {}, [&] { run.Marker(false, ""); });
    run.Marker(false, "");
    loop.step_ns.push_back(run.now() - t0 + 1'000'000);
    loop.tokens.push_back(std::vector<int32_t>(o.batch, 7 + s));
  }
  run.Marker(false, "");
  proto::Trace trace = run.Decode();
  // What CuptiCollector::Flush adds besides the decoded records (the collector's own
  // statistics); the decoder alone does not name the collector.
  trace.mutable_header()->mutable_collector()->set_collector("cupti");
  loop.start_unix_ns = 1'700'000'000'000'000'000;
  RunOptions on_gpu = o;
  on_gpu.backend = "cuda";
  on_gpu.target_arch = "sm_90";
  RunFacts facts;
  facts.backend = "cuda";
  facts.choice = dopt.choice;
  facts.warmup_steps = CudaWarmupSteps(on_gpu);
  facts.setup_wall_ns = 250'000'000;
  for (int s = facts.warmup_steps; s < o.steps; ++s) facts.wall_time_ns += loop.step_ns[s];
  CudaRunFacts cuda;
  cuda.devices = {0};
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

TEST(GpuTraceWorkTest, FabricatedCuptiRecordsReportEverythingACpuRunReports) {
  const RunOptions o = Workload();
  kernels::ThreadPool pool(2);
  auto weights = MakeSyntheticWeights(*LoadModelArch(o.model), kernels::Fp4Format::kNvfp4, 0,
                                      o.seed, &pool);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const proto::Trace gpu = FabricatedGpuTrace(o, *weights);
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
  opt.known_kernels = cli::RegistryKnownKernels();
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
