// RunDecode for the CUDA backend: weights built and uploaded once per format, one
// TpRanks per format re-used across batch sizes, the CUPTI collector (trace mode) per
// batch, steady-state timing, optional checks against the CPU.
#include "runtime/cuda/cuda_run.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/cupti_collector.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/device_probe.h"
#include "runtime/cuda/host/graph_paths.h"
#include "runtime/cuda/tp_ranks.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/tp_partition.h"

namespace qprof::runtime {
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
  d.moe_backend = choice.moe_backend;
  d.mla_tensor = choice.mla_id == "attn.sparse_mla.mma";
  d.seed = o.seed;
  d.cuda_graph = o.cuda_graph;
  return d;
}

// Per-layer ranges for the records of every graph replay, from each rank's capture.
void AttributeReplays(const TpRanks& ranks, proto::Trace* trace) {
  int replays = 0, attributed = 0;
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
    for (std::string& p : a.unmatched) problems.push_back(std::move(p));
  }
  proto::TraceHeader* h = trace->mutable_header();
  if (replays > 0 || !problems.empty()) {
    h->add_notes(absl::StrCat(
        "CUDA graph: records of ", attributed, " of ", replays,
        " graph replays carry the range their node was captured in (args.nvtx_path_source ="
        " graph capture order)",
        problems.empty() ? "" : absl::StrCat("; left under .../graph: ",
                                             absl::StrJoin(problems, "; "))));
  }
}

// One batch size on ranks whose decoders are set up for it.
absl::StatusOr<RunResult> RunCudaBatch(const RunOptions& options, const ModelConfig& config,
                                       const KernelChoice& choice, const ModelWeights& weights,
                                       TpRanks* ranks, proto::RunSetup setup,
                                       int64_t setup_wall_ns) {
  RunResult result;
  result.moe_backend_used = choice.moe_backend;
  profiler::cupti::CuptiOptions copt;
  auto collector = profiler::cupti::MakeCuptiCollector(copt);
  std::string collector_note;
  bool collecting = collector.ok();
  if (collecting) {
    absl::Status s = (*collector)->Start();
    if (!s.ok()) {
      collecting = false;
      collector_note = absl::StrCat("CUPTI collector not started: ", s.message(),
                                    " (no kernel records in this trace)");
    }
  } else {
    collector_note = absl::StrCat("CUPTI collector unavailable: ", collector.status().message());
  }
  std::vector<int32_t> tokens = InitialTokens(options.seed, options.batch, config.vocab_size);
  std::vector<int32_t> next;
  std::vector<float> logits;  // copied from the device only for --check
  std::vector<std::vector<int32_t>> inputs;
  std::vector<std::vector<float>> all_logits;
  std::vector<uint64_t> step_ns;
  const int64_t start_unix = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
  nvtxRangePushA("decode");
  absl::Status loop = absl::OkStatus();
  for (int s = 0; s < options.steps && loop.ok(); ++s) {
    const int64_t s0 = NowNs();
    loop = ranks->Step(s, tokens, &next, options.check ? &logits : nullptr);  // rank 0's
    if (!loop.ok()) break;
    step_ns.push_back(static_cast<uint64_t>(NowNs() - s0));
    if (options.check) {
      inputs.push_back(tokens);
      all_logits.push_back(logits);
    }
    result.tokens.push_back(next);
    tokens = next;
    if (options.on_step) options.on_step(s + 1, options.steps);
  }
  nvtxRangePop();
  cudaDeviceSynchronize();
  if (collecting) {
    RETURN_IF_ERROR((*collector)->Stop());
    RETURN_IF_ERROR((*collector)->Flush(&result.trace));
  }
  RETURN_IF_ERROR(loop);

  // Steady state only: step 0 loads modules lazily; with a graph, step 1 captures and
  // instantiates it. Too few steps: everything is timed and the note says so.
  const int warmup_wanted = options.cuda_graph ? 2 : 1;
  const int warmup = options.steps > warmup_wanted ? warmup_wanted : 0;
  uint64_t timed_ns = 0;
  for (int s = warmup; s < static_cast<int>(step_ns.size()); ++s) timed_ns += step_ns[s];

  proto::TraceHeader* h = result.trace.mutable_header();
  h->set_schema_version(1);
  h->set_provenance(proto::PROVENANCE_MEASURED_GPU);  // also when CUPTI recorded nothing
  proto::RunInfo* run = h->mutable_run();
  run->set_model(config.name);
  run->set_format(options.format);
  run->set_moe_backend(choice.moe_backend);
  run->set_backend("cuda");
  run->set_batch(options.batch);
  run->set_steps(options.steps);
  run->set_warmup_steps(warmup);
  run->set_tokens_generated(static_cast<uint64_t>(options.batch) * (options.steps - warmup));
  run->set_wall_time_ns(timed_ns);
  for (uint64_t ns : step_ns) run->add_step_wall_ns(ns);
  run->set_setup_wall_ns(static_cast<uint64_t>(setup_wall_ns));
  for (const auto& step : result.tokens) {
    for (int32_t t : step) run->add_tokens(t);
  }
  run->set_tp(options.tp);
  for (int len : ContextLengths(options.context, options.batch)) run->add_context_lengths(len);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) run->set_hostname(host);
  run->set_start_unix_ns(static_cast<uint64_t>(start_unix));
  run->set_layers(weights.layers);
  const CudaGraphInfo& g = ranks->rank(0).graph_info();
  setup.set_graph_capture_ns(static_cast<uint64_t>(g.capture_ns));
  setup.set_graph_instantiate_ns(static_cast<uint64_t>(g.instantiate_ns));
  setup.set_graph_nodes(static_cast<uint32_t>(g.nodes));
  setup.set_caches_ns(static_cast<uint64_t>(ranks->caches_ns()));
  *h->mutable_setup() = setup;
  auto& extra = *run->mutable_extra();
  extra["weights"] = weights.source;
  extra["seed"] = absl::StrCat(options.seed);
  extra["mla_kernel"] = choice.mla_id;
  extra["moe_kernel"] = choice.moe_id;
  extra["cuda_graph"] = options.cuda_graph ? "true" : "false";
  extra["device_arch"] = options.target_arch;
  extra["expert_weight_bytes"] = absl::StrCat(weights.expert_bytes());
  extra["dense_weight_bytes"] = absl::StrCat(weights.dense_bytes());
  extra["kv_cache_bytes"] = absl::StrCat(ranks->cache_bytes());
  extra["device_bytes"] = absl::StrCat(ranks->device_bytes());
  extra["model_config"] = ModelConfigToJson(config);
  if (options.tp > 1) {
    extra["tp_token_mismatch_steps"] = absl::StrCat(ranks->token_mismatch_steps());
    extra["tp_all_reduce"] = ranks->all_reduce_name();
    extra["tp_devices"] = absl::StrJoin(ranks->devices(), ",");
    h->add_notes(absl::StrCat(
        "tensor parallel over ", options.tp, " ranks (GPUs ", absl::StrJoin(ranks->devices(), ","),
        ", one host thread per rank, all-reduce: ", ranks->all_reduce_name(),
        "): heads and routed experts split across ranks, FP32 all-reduce of the hidden state "
        "after attention and after the MoE (range decode/step N/layer L/comm); tokens are "
        "rank 0's; sizes are summed over ranks"));
  }
  h->add_notes(absl::StrCat(
      "CUDA backend: kernel records from CUPTI activity tracing (measured on the GPU); "
      "tokens/s from the host wall time of ", options.steps - warmup, " steady-state steps, "
      "leaving out ", warmup, " warm-up step(s) (",
      options.cuda_graph ? "lazy module loading, graph capture and instantiation"
                         : "lazy module loading", ")",
      warmup == 0 ? "; too few steps to leave any out: the figure includes the warm-up" : ""));
  if (options.cuda_graph) {
    h->add_notes(absl::StrFormat(
        "CUDA graph: step 0 eager, step 1 captured (%.2f ms) and instantiated (%.2f ms, %d "
        "nodes), later steps replay it",
        g.capture_ns * 1e-6, g.instantiate_ns * 1e-6, g.nodes));
    AttributeReplays(*ranks, &result.trace);
  }
  h->add_notes("the prompt KV cache is synthetic (seeded rows); prefill is not run or timed");
  if (!collector_note.empty()) h->add_notes(collector_note);

  if (options.check) {
    Progress(options, "--check: replaying the run's inputs on the CPU (same weights, then "
                      "FP32 experts)");
    ASSIGN_OR_RETURN(CheckResult vs_cpu, ReplayOnCpu(weights, options, /*fp32_experts=*/false,
                                                     inputs, all_logits, result.tokens));
    ASSIGN_OR_RETURN(CheckResult vs_fp32, ReplayOnCpu(weights, options, /*fp32_experts=*/true,
                                                      inputs, all_logits, result.tokens));
    result.check_vs_cpu = vs_cpu;
    result.check = vs_fp32;
    extra["check_vs_cpu_logits_rel_error"] = absl::StrCat(vs_cpu.logits_rel_error);
    extra["check_vs_cpu_token_agreement"] = absl::StrCat(vs_cpu.token_agreement);
    extra["check_logits_rel_error"] = absl::StrCat(vs_fp32.logits_rel_error);
    extra["check_token_agreement"] = absl::StrCat(vs_fp32.token_agreement);
  }
  return result;
}

}  // namespace

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

bool CudaBackendUsable(std::string* why) {
  std::string reason;
  if (!CudaDevicePresent(&reason)) {
    *why = "no CUDA device: " + reason;
    return false;
  }
  absl::Status s = CheckKernelImage(0);
  if (!s.ok()) {
    *why = std::string(s.message());
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

absl::StatusOr<std::vector<RunResult>> RunDecodeCudaBatches(const RunOptions& in,
                                                            const std::vector<int>& batches) {
  const int64_t run_start = NowNs();
  std::string why;
  if (!CudaDevicePresent(&why)) return absl::FailedPreconditionError("no CUDA device: " + why);
  RunOptions options = in;
  if (options.target_arch.empty()) options.target_arch = CudaDeviceArch();
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(options.model));
  for (int b : batches) {
    RunOptions o = options;
    o.batch = b;
    RETURN_IF_ERROR(ValidateRunOptions(o, config));
  }
  // Before the weights are built: one line when the model or the machine cannot take it.
  RETURN_IF_ERROR(ValidateTensorParallel(config, options.tp));
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
  if (options.check && !options.checkpoint_dir.empty()) {
    return absl::FailedPreconditionError(
        "--check needs synthetic weights: a checkpoint holds no unquantized expert weights");
  }
  KernelChoice choice = ChooseKernels(options);
  std::string path_note;
  if (choice.moe_backend == "fp4_mma" && options.target_arch != "sm_120" &&
      (options.moe_backend.empty() || options.moe_backend == "auto")) {
    // Native FP4 MMA is implemented for sm_120a only (no tcgen05 variant for sm_100a yet).
    options.moe_backend = "w4a16_mma";
    choice = ChooseKernels(options);
    path_note = "auto MoE path: fp4_mma has no kernel for " + options.target_arch +
                " in this build (sm_120a only); ran w4a16_mma";
  }
  const kernels::Fp4Format format =
      options.format == "mxfp4" ? kernels::Fp4Format::kMxfp4 : kernels::Fp4Format::kNvfp4;
  kernels::ThreadPool pool(options.threads);
  const int layers = options.layers > 0 ? options.layers : config.n_layers;
  proto::RunSetup setup;
  setup.set_cpu_threads(pool.size());
  const int64_t w0 = NowNs();
  ModelWeights weights;
  if (!options.checkpoint_dir.empty()) {
    ASSIGN_OR_RETURN(weights, LoadCheckpointWeights(options.checkpoint_dir, config, format, layers));
  } else {
    ASSIGN_OR_RETURN(weights, MakeSyntheticWeights(config, format, layers, options.seed, &pool));
  }
  setup.set_weights_ns(static_cast<uint64_t>(NowNs() - w0));
  setup.set_weights_source(weights.source);
  Progress(options, absl::StrFormat("weights (%s, %d layers, %.2f GB) built in %.2f s on %d "
                                    "threads",
                                    weights.source, weights.layers,
                                    (weights.expert_bytes() + weights.dense_bytes()) * 1e-9,
                                    setup.weights_ns() * 1e-9, pool.size()));
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
    ASSIGN_OR_RETURN(RunResult r, RunCudaBatch(o, config, choice, weights, ranks.get(), s, setup_wall));
    if (!path_note.empty()) r.trace.mutable_header()->add_notes(path_note);
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace qprof::runtime
