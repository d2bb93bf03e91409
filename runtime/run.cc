// RunDecode for the CPU backend: weights (built once per batch sweep), decoder, host
// collector, optional FP32 check; dispatch to the CUDA backend.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/common/thread_pool.h"
#include "profiler/host/host_collector.h"
#include "runtime/cpu_decoder.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/run.h"
#if defined(QPROF_HAVE_CUDA_BACKEND)
#include "runtime/cuda/cuda_run.h"
#endif
#include "runtime/synthetic.h"

namespace qprof::runtime {
namespace {

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

DecoderOptions CpuDecoderOptions(const RunOptions& o) {
  const KernelChoice choice = ChooseKernels(o);
  DecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.moe_kernel_id = choice.moe_id;
  d.moe_grouped = choice.moe_backend != "slot_gemv";
  d.mla_kernel_id = choice.mla_id;
  d.seed = o.seed;
  return d;
}

// One batch size of a CPU run on weights already built.
absl::StatusOr<RunResult> RunCpuBatch(const RunOptions& options, const ModelConfig& config,
                                      const ModelWeights& weights, kernels::ThreadPool* pool,
                                      proto::RunSetup setup, int64_t run_start) {
  const KernelChoice choice = ChooseKernels(options);
  const DecoderOptions dopt = CpuDecoderOptions(options);
  const int64_t caches_start = profiler::HostNowNs();
  CpuDecoder decoder(weights, dopt, pool);
  RETURN_IF_ERROR(decoder.Init());
  setup.set_caches_ns(static_cast<uint64_t>(profiler::HostNowNs() - caches_start));

  RunResult result;
  result.moe_backend_used = choice.moe_backend;
  profiler::HostCollector collector(pool->size());
  std::vector<int32_t> tokens = InitialTokens(options.seed, options.batch, config.vocab_size);
  std::vector<std::vector<int32_t>> inputs;
  std::vector<std::vector<float>> all_logits;
  std::vector<float> logits;
  std::vector<int32_t> next;
  std::vector<uint64_t> step_ns;
  const int64_t start_unix = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  RETURN_IF_ERROR(collector.Start());
  const int64_t t0 = profiler::HostNowNs();
  {
    profiler::ScopedHostRange decode(&collector, "decode");
    for (int s = 0; s < options.steps; ++s) {
      const int64_t s0 = profiler::HostNowNs();
      RETURN_IF_ERROR(decoder.Step(s, tokens, &collector, &logits, &next));
      step_ns.push_back(static_cast<uint64_t>(profiler::HostNowNs() - s0));
      if (options.check) {
        inputs.push_back(tokens);
        all_logits.push_back(logits);
      }
      result.tokens.push_back(next);
      tokens = next;
      if (options.on_step) options.on_step(s + 1, options.steps);
    }
  }
  const int64_t t1 = profiler::HostNowNs();
  RETURN_IF_ERROR(collector.Stop());
  RETURN_IF_ERROR(collector.Flush(&result.trace));

  proto::TraceHeader* h = result.trace.mutable_header();
  h->set_schema_version(1);
  proto::RunInfo* run = h->mutable_run();
  run->set_model(config.name);
  run->set_format(options.format);
  run->set_moe_backend(choice.moe_backend);
  run->set_backend("cpu");
  run->set_batch(options.batch);
  run->set_steps(options.steps);
  run->set_tokens_generated(static_cast<uint64_t>(options.batch) * options.steps);
  run->set_wall_time_ns(static_cast<uint64_t>(t1 - t0));
  run->set_warmup_steps(0);  // host timers: no lazy module loading to leave out
  for (uint64_t ns : step_ns) run->add_step_wall_ns(ns);
  run->set_setup_wall_ns(static_cast<uint64_t>(t0 - run_start));
  for (const auto& step : result.tokens) {
    for (int32_t t : step) run->add_tokens(t);
  }
  run->set_tp(1);
  for (int len : dopt.context_lengths) run->add_context_lengths(len);
  run->set_hostname(Hostname());
  run->set_start_unix_ns(static_cast<uint64_t>(start_unix));
  run->set_layers(weights.layers);
  setup.set_cpu_threads(pool->size());
  *h->mutable_setup() = setup;
  (*run->mutable_extra())["weights"] = weights.source;
  (*run->mutable_extra())["cpu_threads"] = absl::StrCat(pool->size());
  (*run->mutable_extra())["seed"] = absl::StrCat(options.seed);
  (*run->mutable_extra())["mla_kernel"] = choice.mla_id;
  (*run->mutable_extra())["moe_kernel"] = choice.moe_id;
  (*run->mutable_extra())["moe_cpu_kernel"] =
      absl::StrCat(dopt.moe_grouped ? "moe.grouped." : "moe.slot_gemv.", options.format);
  (*run->mutable_extra())["expert_weight_bytes"] = absl::StrCat(weights.expert_bytes());
  (*run->mutable_extra())["dense_weight_bytes"] = absl::StrCat(weights.dense_bytes());
  (*run->mutable_extra())["kv_cache_bytes"] = absl::StrCat(decoder.cache_bytes());
  (*run->mutable_extra())["model_config"] = ModelConfigToJson(config);
  h->add_notes("CPU backend: kernel times are host CPU measurements (steady clock); pipe "
               "classes are those of the registered CUDA kernels on a GPU (evidence: registry)");
  if (dopt.moe_grouped) {
    h->add_notes(absl::StrCat("MoE path ", choice.moe_backend, ": on the CPU it runs the grouped "
                              "kernel moe.grouped.", options.format,
                              " (args.cpu_kernel); names are the CUDA kernel's"));
  } else {
    h->add_notes("MoE path slot_gemv: one (token, expert) slot at a time, weights decoded per "
                 "slot, no reuse across the batch");
  }
  h->add_notes(absl::StrCat("sparse MLA ", choice.mla_id,
                            ": the CPU runs one kernel for the simt and mma variants"));
  h->add_notes("the prompt KV cache is synthetic (seeded rows); prefill is not run or timed");

  if (options.check) {
    if (!options.checkpoint_dir.empty()) {
      return absl::FailedPreconditionError(
          "--check needs synthetic weights: a checkpoint holds no unquantized expert weights");
    }
    ASSIGN_OR_RETURN(CheckResult cr, ReplayOnCpu(weights, options, /*fp32_experts=*/true,
                                                 inputs, all_logits, result.tokens));
    result.check = cr;
    (*run->mutable_extra())["check_logits_rel_error"] = absl::StrCat(cr.logits_rel_error);
    (*run->mutable_extra())["check_token_agreement"] = absl::StrCat(cr.token_agreement);
  }
  return result;
}

absl::StatusOr<std::vector<RunResult>> RunCpuBatches(const RunOptions& options,
                                                     const std::vector<int>& batches) {
  const int64_t run_start = profiler::HostNowNs();
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(options.model));
  for (int b : batches) {
    RunOptions o = options;
    o.batch = b;
    RETURN_IF_ERROR(ValidateRunOptions(o, config));
  }
  if (options.tp != 1) {
    return absl::InvalidArgumentError("the CPU backend runs tp 1 only (use --backend model "
                                      "or cuda for tensor parallel)");
  }
  if (options.check && !options.checkpoint_dir.empty()) {
    return absl::FailedPreconditionError(
        "--check needs synthetic weights: a checkpoint holds no unquantized expert weights");
  }
  const kernels::Fp4Format format =
      options.format == "mxfp4" ? kernels::Fp4Format::kMxfp4 : kernels::Fp4Format::kNvfp4;
  kernels::ThreadPool pool(options.threads);
  const int layers = options.layers > 0 ? options.layers : config.n_layers;
  const int64_t w0 = profiler::HostNowNs();
  ModelWeights weights;
  if (!options.checkpoint_dir.empty()) {
    ASSIGN_OR_RETURN(weights, LoadCheckpointWeights(options.checkpoint_dir, config, format,
                                                    layers));
  } else {
    ASSIGN_OR_RETURN(weights,
                     MakeSyntheticWeights(config, format, layers, options.seed, &pool));
  }
  proto::RunSetup setup;
  setup.set_weights_ns(static_cast<uint64_t>(profiler::HostNowNs() - w0));
  setup.set_weights_source(weights.source);
  if (options.on_progress) {
    options.on_progress(absl::StrFormat("weights (%s) built in %.2f s", weights.source,
                                        setup.weights_ns() * 1e-9));
  }
  std::vector<RunResult> results;
  for (size_t i = 0; i < batches.size(); ++i) {
    RunOptions o = options;
    o.batch = batches[i];
    proto::RunSetup s = setup;
    if (i > 0) {
      s.set_weights_ns(0);
      s.set_weights_reused(true);
    }
    ASSIGN_OR_RETURN(RunResult r, RunCpuBatch(o, config, weights, &pool, s,
                                              i == 0 ? run_start : profiler::HostNowNs()));
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace

std::vector<int32_t> InitialTokens(uint64_t seed, int batch, int vocab) {
  std::vector<int32_t> t(batch);
  SynthSpec s{seed, "prompt.last_token", batch, 1, 1.0f};
  std::vector<float> v(batch);
  SynthRows(s, 0, batch, v.data());
  for (int b = 0; b < batch; ++b) {
    uint32_t bits;
    std::memcpy(&bits, &v[b], 4);
    t[b] = static_cast<int32_t>((bits * 2654435761u) % static_cast<uint32_t>(vocab));
  }
  return t;
}

absl::StatusOr<CheckResult> ReplayOnCpu(const ModelWeights& weights, const RunOptions& options,
                                        bool fp32_experts,
                                        const std::vector<std::vector<int32_t>>& inputs,
                                        const std::vector<std::vector<float>>& logits,
                                        const std::vector<std::vector<int32_t>>& tokens) {
  DecoderOptions o = CpuDecoderOptions(options);
  o.dense_fp32_experts = fp32_experts;
  kernels::ThreadPool pool(options.threads);
  CpuDecoder ref(weights, o, &pool);
  RETURN_IF_ERROR(ref.Init());
  double num = 0, den = 0;
  CheckResult r;
  int agree = 0;
  std::vector<float> rl;
  std::vector<int32_t> rn;
  for (size_t s = 0; s < inputs.size(); ++s) {
    RETURN_IF_ERROR(ref.Step(static_cast<int>(s), inputs[s], nullptr, &rl, &rn));
    if (logits[s].size() != rl.size() || tokens[s].size() != rn.size()) {
      return absl::InternalError("check: logits or tokens of another shape than the replay's");
    }
    for (size_t i = 0; i < rl.size(); ++i) {
      const double d = double(logits[s][i]) - rl[i];
      num += d * d;
      den += double(rl[i]) * rl[i];
    }
    for (size_t b = 0; b < rn.size(); ++b) {
      const bool same = rn[b] == tokens[s][b];
      agree += same;
      if (!same && r.first_disagreement_step < 0) r.first_disagreement_step = static_cast<int>(s);
      ++r.tokens_compared;
    }
  }
  r.logits_rel_error = den > 0 ? std::sqrt(num / den) : 0;
  r.token_agreement = r.tokens_compared ? double(agree) / r.tokens_compared : 0;
  return r;
}

absl::StatusOr<std::vector<RunResult>> RunDecodeBatches(const RunOptions& options,
                                                        const std::vector<int>& batches) {
  if (batches.empty()) return absl::InvalidArgumentError("no batch size to run");
#if defined(QPROF_HAVE_CUDA_BACKEND)
  if (options.backend == "cuda") return RunDecodeCudaBatches(options, batches);  // runtime/cuda
  if (options.backend == "auto") {  // cuda when a GPU this build can run on is present
    std::string why;
    RunOptions o = options;
    const bool gpu = CudaBackendUsable(&why);
    o.backend = gpu ? "cuda" : "cpu";
    ASSIGN_OR_RETURN(std::vector<RunResult> r, RunDecodeBatches(o, batches));
    if (!gpu && !why.empty() && why.rfind("no CUDA device", 0) != 0) {
      // A GPU is there but cannot run this build's kernels: say so instead of hiding it.
      for (RunResult& x : r) {
        x.backend_note = absl::StrCat("ran on the host CPU: ", why);
        x.trace.mutable_header()->add_notes(x.backend_note);
      }
    }
    return r;
  }
#else
  if (options.backend == "auto") {
    RunOptions o = options;
    o.backend = "cpu";
    return RunDecodeBatches(o, batches);
  }
#endif
  if (options.backend != "cpu") {
    return absl::UnimplementedError(absl::StrCat(
        "backend '", options.backend, "' is not available in this build (use --backend cpu)"));
  }
  return RunCpuBatches(options, batches);
}

absl::StatusOr<RunResult> RunDecode(const RunOptions& options) {
  ASSIGN_OR_RETURN(std::vector<RunResult> r, RunDecodeBatches(options, {options.batch}));
  return std::move(r[0]);
}

}  // namespace qprof::runtime
