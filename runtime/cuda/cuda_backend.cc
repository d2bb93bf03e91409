// The CUDA backend: weights built and uploaded once per format, one TpRanks per format
// re-used across batch sizes, the CUPTI collector (trace mode) per batch, steady-state
// timing, the plan's work models joined onto the kernel records, optional checks against
// the CPU.
#include "runtime/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/cupti_collector.h"
#include "runtime/cpu_backend.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/cuda_trace.h"
#include "runtime/cuda/device_probe.h"
#include "runtime/cuda/host/graph_paths.h"
#include "runtime/cuda/tp_ranks.h"
#include "runtime/decode_loop.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/tp_partition.h"

namespace qprof::runtime::cuda {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Progress(const RunOptions& o, const std::string& line) {
  if (o.on_progress) o.on_progress(line);
}

CudaDecoderOptions DecoderOptionsFor(const RunOptions& o, const KernelChoice& choice) {
  CudaDecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.choice = choice;
  d.seed = o.seed;
  d.cuda_graph = o.cuda_graph;
  return d;
}

// Per-layer ranges for the records of every graph replay, from each rank's capture.
void AttributeReplays(const TpRanks& ranks, proto::Trace* trace) {
  int replays = 0, attributed = 0, disagreements = 0;
  std::vector<std::string> problems;
  for (int r = 0; r < ranks.tp(); ++r) {
    const CudaGraphInfo& g = ranks.rank(r).graph_info();
    if (g.nodes == 0) continue;
    if (g.chain.empty()) {
      problems.push_back(absl::StrCat("rank ", r, ": ", g.chain_note));
      continue;
    }
    GraphAttribution a = AttributeGraphReplays(g.chain, ranks.devices()[r], trace);
    replays += a.replays;
    attributed += a.attributed;
    disagreements += a.path_disagreements;
    for (std::string& p : a.unmatched) problems.push_back(std::move(p));
  }
  proto::TraceHeader* h = trace->mutable_header();
  if (disagreements > 0) {
    h->add_notes(absl::StrCat("CUDA graph: ", disagreements, " replayed records had another "
                              "capture path from CUPTI's graph callbacks than from the capture "
                              "order; the capture order's was kept"));
  }
  if (replays > 0 || !problems.empty()) {
    h->add_notes(absl::StrCat(
        "CUDA graph: records of ", attributed, " of ", replays,
        " graph replays carry the range their node was captured in (args.nvtx_path_source ="
        " graph capture order)",
        problems.empty() ? "" : absl::StrCat("; left under .../graph: ",
                                             absl::StrJoin(problems, "; "))));
  }
}

// Each step's expected kernels on device `device_id`: the launch list of the rank on it.
StepKernelsFn RankLaunches(const TpRanks& ranks) {
  return [&ranks](int step, uint32_t device_id) -> absl::StatusOr<std::vector<StepKernels>> {
    for (int r = 0; r < ranks.tp(); ++r) {
      if (ranks.devices()[r] == static_cast<int>(device_id)) return ranks.rank(r).Launches(step);
    }
    return ranks.rank(0).Launches(step);  // a device the run did not use: rank 0's shapes
  };
}

// The CUPTI collector of one batch, started; null with the reason in *note when CUPTI
// cannot trace here (the run goes on without kernel records).
std::unique_ptr<profiler::Collector> StartCupti(std::string* note) {
  profiler::cupti::CuptiOptions copt;
  auto collector = profiler::cupti::MakeCuptiCollector(copt);
  if (!collector.ok()) {
    *note = absl::StrCat("CUPTI collector unavailable: ", collector.status().message());
    return nullptr;
  }
  absl::Status s = (*collector)->Start();
  if (!s.ok()) {
    *note = absl::StrCat("CUPTI collector not started: ", s.message(),
                         " (no kernel records in this trace)");
    return nullptr;
  }
  return std::move(*collector);
}

// --check: the run's inputs replayed on the CPU, with the same weights, then FP32 experts.
absl::Status CheckOnCpu(const RunOptions& options, const ModelWeights& weights,
                        const DecodeLoop& loop, RunResult* result) {
  Progress(options, "--check: replaying the run's inputs on the CPU (same weights, then "
                    "FP32 experts)");
  ASSIGN_OR_RETURN(CheckResult vs_cpu, ReplayOnCpu(weights, options, /*fp32_experts=*/false,
                                                   loop.inputs, loop.logits, result->tokens));
  ASSIGN_OR_RETURN(CheckResult vs_fp32, ReplayOnCpu(weights, options, /*fp32_experts=*/true,
                                                    loop.inputs, loop.logits, result->tokens));
  result->check_vs_cpu = vs_cpu;
  result->check = vs_fp32;
  proto::RunInfo* run = result->trace.mutable_header()->mutable_run();
  AddCheckExtras("check_vs_cpu_", vs_cpu, run);
  AddCheckExtras("check_", vs_fp32, run);
  return absl::OkStatus();
}

// One batch size on ranks whose decoders are set up for it.
absl::StatusOr<RunResult> RunCudaBatch(const RunOptions& options, const ModelArch& arch,
                                       const KernelChoice& choice, const ModelWeights& weights,
                                       TpRanks* ranks, proto::RunSetup setup,
                                       int64_t setup_wall_ns) {
  RunResult result;
  result.moe_backend_used = choice.moe_backend;
  std::string collector_note;
  std::unique_ptr<profiler::Collector> collector = StartCupti(&collector_note);
  DecodeLoop loop;
  nvtxRangePushA("decode");
  const absl::Status loop_status = RunDecodeLoop(
      options, arch.vocab_size,
      [ranks](int s, const std::vector<int32_t>& in, std::vector<int32_t>* next,
              std::vector<float>* logits) { return ranks->Step(s, in, next, logits); },
      &loop);  // rank 0's tokens and logits
  nvtxRangePop();
  cudaDeviceSynchronize();
  if (collector != nullptr) {
    RETURN_IF_ERROR(collector->Stop());
    RETURN_IF_ERROR(collector->Flush(&result.trace));
  }
  RETURN_IF_ERROR(loop_status);

  const int warmup = CudaWarmupSteps(options);
  uint64_t timed_ns = 0;
  for (int s = warmup; s < static_cast<int>(loop.step_ns.size()); ++s) timed_ns += loop.step_ns[s];
  RunFacts facts;
  facts.backend = "cuda";
  facts.choice = choice;
  facts.warmup_steps = warmup;
  facts.wall_time_ns = timed_ns;
  facts.setup_wall_ns = static_cast<uint64_t>(setup_wall_ns);
  facts.kv_cache_bytes = ranks->cache_bytes();
  CudaRunFacts cuda;
  cuda.devices = ranks->devices();
  cuda.all_reduce_name = options.tp > 1 ? ranks->all_reduce_name() : "";
  cuda.token_mismatch_steps = ranks->token_mismatch_steps();
  cuda.device_bytes = ranks->device_bytes();
  cuda.graph = ranks->rank(0).graph_info();
  setup.set_caches_ns(static_cast<uint64_t>(ranks->caches_ns()));
  if (options.cuda_graph) AttributeReplays(*ranks, &result.trace);
  RETURN_IF_ERROR(FinishCudaTrace(options, arch, weights, loop, facts, cuda, setup,
                                  RankLaunches(*ranks), &result.trace));
  if (!collector_note.empty()) result.trace.mutable_header()->add_notes(collector_note);
  result.tokens = std::move(loop.tokens);
  if (options.check) RETURN_IF_ERROR(CheckOnCpu(options, weights, loop, &result));
  return result;
}

// The device side of validation: a GPU, this build's code for it, enough GPUs for --tp.
absl::StatusOr<TpOptions> CheckDevices(const RunOptions& options, const ModelArch& arch) {
  // Before the weights are built: one line when the model or the machine cannot take it.
  RETURN_IF_ERROR(ValidateTensorParallel(arch, options.tp));
  TpOptions tpo;
  tpo.tp = options.tp;
  ASSIGN_OR_RETURN(tpo.env, ReadTpEnvironment([](const char* n) { return std::getenv(n); },
                                              options.tp));
  if (options.tp > 1 && tpo.env.devices.empty()) {
    RETURN_IF_ERROR(CheckTpDevices(options.tp, VisibleCudaDevices()));
  }
  for (int r = 0; r < options.tp; ++r) {
    RETURN_IF_ERROR(CheckKernelImage(tpo.env.devices.empty() ? r : tpo.env.devices[r]));
  }
  return tpo;
}

class CudaBackend : public DecodeBackend {
 public:
  std::string name() const override { return "cuda"; }
  std::string where() const override { return "the GPU"; }

  Availability Probe(std::string* why) const override {
    std::string reason;
    if (!CudaDevicePresent(&reason)) {
      *why = "no CUDA device: " + reason;
      return Availability::kAbsent;
    }
    absl::Status s = CheckKernelImage(0);
    if (!s.ok()) {
      *why = std::string(s.message());
      return Availability::kUnusable;
    }
    return Availability::kReady;
  }

  absl::StatusOr<std::vector<RunResult>> RunBatches(const RunOptions& in,
                                                    const std::vector<int>& batches) override;
};

absl::StatusOr<std::vector<RunResult>> CudaBackend::RunBatches(const RunOptions& in,
                                                               const std::vector<int>& batches) {
  const int64_t run_start = NowNs();
  std::string why;
  if (!CudaDevicePresent(&why)) return absl::FailedPreconditionError("no CUDA device: " + why);
  RunOptions options = in;
  if (options.target_arch.empty()) options.target_arch = CudaDeviceArch();
  ASSIGN_OR_RETURN(const ModelArch arch, LoadModelArch(options.model));
  ASSIGN_OR_RETURN(const TpOptions tpo, CheckDevices(options, arch));
  // The registry's choice for this GPU: `auto` takes what has code for it; a named path
  // without code for it is InvalidArgument naming the choices here.
  ASSIGN_OR_RETURN(const KernelChoice choice, ChooseKernels(options));
  kernels::ThreadPool pool(options.threads);
  proto::RunSetup setup;
  ASSIGN_OR_RETURN(const ModelWeights weights, BuildRunWeights(options, arch, &pool, &setup));
  std::vector<RunResult> results;
  std::unique_ptr<TpRanks> ranks;
  for (size_t i = 0; i < batches.size(); ++i) {
    RunOptions o = options;
    o.batch = batches[i];
    const CudaDecoderOptions dopt = DecoderOptionsFor(o, choice);
    proto::RunSetup s = setup;
    const int64_t t0 = NowNs();
    if (ranks == nullptr) {
      ASSIGN_OR_RETURN(ranks, TpRanks::Create(weights, dopt, tpo));
      s.set_upload_ns(static_cast<uint64_t>(ranks->upload_ns()));
      Progress(o, absl::StrFormat("weights uploaded to %d GPU(s) in %.2f s",
                                  options.tp, ranks->upload_ns() * 1e-9));
    } else {
      RETURN_IF_ERROR(ranks->NewBatch(dopt));
      s.set_weights_ns(0);
      s.set_weights_reused(true);
    }
    Progress(o, absl::StrFormat("batch %d: caches in %.2f s", o.batch, ranks->caches_ns() * 1e-9));
    const int64_t setup_wall = i == 0 ? NowNs() - run_start : NowNs() - t0;
    ASSIGN_OR_RETURN(RunResult r,
                     RunCudaBatch(o, arch, choice, weights, ranks.get(), s, setup_wall));
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace

std::unique_ptr<DecodeBackend> MakeCudaBackend() { return std::make_unique<CudaBackend>(); }

bool CudaDevicePresent(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *why = cudaGetErrorString(e);
    return false;
  }
  if (n == 0) {
    *why = "cudaGetDeviceCount found no device";
    return false;
  }
  return true;
}

std::string CudaDeviceArch() {
  std::string why;
  if (!CudaDevicePresent(&why)) return "";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "";
  return absl::StrCat("sm_", prop.major * 10 + prop.minor);
}

}  // namespace qprof::runtime::cuda
