#include "runtime/decode_loop.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "runtime/model_weights.h"
#include "runtime/synthetic.h"

namespace qprof::runtime {
namespace {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
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

absl::Status RunDecodeLoop(const RunOptions& options, int vocab, const DecodeStepFn& step,
                           DecodeLoop* loop) {
  std::vector<int32_t> tokens = InitialTokens(options.seed, options.batch, vocab);
  std::vector<int32_t> next;
  std::vector<float> logits;
  loop->start_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  const int64_t t0 = SteadyNs();
  absl::Status status = absl::OkStatus();
  for (int s = 0; s < options.steps; ++s) {
    const int64_t s0 = SteadyNs();
    status = step(s, tokens, &next, options.check ? &logits : nullptr);
    if (!status.ok()) break;
    loop->step_ns.push_back(static_cast<uint64_t>(SteadyNs() - s0));
    if (options.check) {
      loop->inputs.push_back(tokens);
      loop->logits.push_back(logits);
    }
    loop->tokens.push_back(next);
    tokens = next;
    if (options.on_step) options.on_step(s + 1, options.steps);
  }
  loop->wall_ns = SteadyNs() - t0;
  return status;
}

void FillRunInfo(const RunOptions& options, const ModelArch& arch, const ModelWeights& weights,
                 const DecodeLoop& loop, const RunFacts& facts, proto::RunInfo* run) {
  run->set_model(arch.name);
  run->set_format(options.format);
  run->set_moe_backend(facts.choice.moe_backend);
  run->set_backend(facts.backend);
  run->set_batch(options.batch);
  run->set_steps(options.steps);
  run->set_warmup_steps(facts.warmup_steps);
  run->set_tokens_generated(static_cast<uint64_t>(options.batch) *
                            (options.steps - facts.warmup_steps));
  run->set_wall_time_ns(facts.wall_time_ns);
  for (uint64_t ns : loop.step_ns) run->add_step_wall_ns(ns);
  run->set_setup_wall_ns(facts.setup_wall_ns);
  for (const auto& step : loop.tokens) {
    for (int32_t t : step) run->add_tokens(t);
  }
  run->set_tp(options.tp);
  for (int len : ContextLengths(options.context, options.batch)) run->add_context_lengths(len);
  run->set_hostname(Hostname());
  run->set_start_unix_ns(static_cast<uint64_t>(loop.start_unix_ns));
  run->set_layers(weights.layers);
  auto& extra = *run->mutable_extra();
  extra["weights"] = weights.source;
  extra["seed"] = absl::StrCat(options.seed);
  extra["mla_kernel"] = facts.choice.mla_id;
  extra["moe_kernel"] = facts.choice.moe_id;
  extra["expert_weight_bytes"] = absl::StrCat(weights.expert_bytes());
  extra["dense_weight_bytes"] = absl::StrCat(weights.dense_bytes());
  extra["kv_cache_bytes"] = absl::StrCat(facts.kv_cache_bytes);
  extra["model_config"] = ModelArchToJson(arch);
}

absl::StatusOr<ModelWeights> BuildRunWeights(const RunOptions& options, const ModelArch& arch,
                                             kernels::ThreadPool* pool, proto::RunSetup* setup) {
  if (options.check && !options.checkpoint_dir.empty()) {
    return absl::FailedPreconditionError(
        "--check needs synthetic weights: a checkpoint holds no unquantized expert weights");
  }
  const kernels::Fp4Format format =
      options.format == "mxfp4" ? kernels::Fp4Format::kMxfp4 : kernels::Fp4Format::kNvfp4;
  const int layers = options.layers > 0 ? options.layers : arch.n_layers;
  const int64_t w0 = SteadyNs();
  ModelWeights weights;
  if (!options.checkpoint_dir.empty()) {
    ASSIGN_OR_RETURN(weights, LoadCheckpointWeights(options.checkpoint_dir, arch, format, layers));
  } else {
    ASSIGN_OR_RETURN(weights, MakeSyntheticWeights(arch, format, layers, options.seed, pool));
  }
  setup->set_weights_ns(static_cast<uint64_t>(SteadyNs() - w0));
  setup->set_weights_source(weights.source);
  setup->set_cpu_threads(pool->size());
  if (options.on_progress) {
    options.on_progress(absl::StrFormat(
        "weights (%s, %d layers, %.2f GB) built in %.2f s on %d threads", weights.source,
        weights.layers, (weights.expert_bytes() + weights.dense_bytes()) * 1e-9,
        setup->weights_ns() * 1e-9, pool->size()));
  }
  return weights;
}

void AddCheckExtras(const std::string& prefix, const CheckResult& check, proto::RunInfo* run) {
  auto& extra = *run->mutable_extra();
  extra[prefix + "logits_rel_error"] = absl::StrCat(check.logits_rel_error);
  extra[prefix + "token_agreement"] = absl::StrCat(check.token_agreement);
}

}  // namespace qprof::runtime
