// RunDecode for the CUDA backend: weights, CudaDecoder, the CUPTI collector (trace mode).
#include "runtime/cuda/cuda_run.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/thread_pool.h"
#include "profiler/cupti/cupti_collector.h"
#include "runtime/cuda/cuda_decoder.h"
#include "runtime/cuda/tp_ranks.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"
#include "runtime/synthetic.h"
#include "runtime/tp_partition.h"

namespace qprof::runtime {
namespace {

// The same seeded first tokens as the CPU backend (runtime/run.cc), so both backends
// decode the same inputs.
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

std::string CudaDeviceArch() {
  std::string why;
  if (!CudaDevicePresent(&why)) return "";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "";
  return absl::StrCat("sm_", prop.major * 10 + prop.minor);
}

absl::StatusOr<RunResult> RunDecodeCuda(const RunOptions& in) {
  std::string why;
  if (!CudaDevicePresent(&why)) return absl::FailedPreconditionError("no CUDA device: " + why);
  RunOptions options = in;
  if (options.target_arch.empty()) options.target_arch = CudaDeviceArch();
  ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(options.model));
  RETURN_IF_ERROR(ValidateRunOptions(options, config));
  // Before the weights are built: one line when the model or the machine cannot take --tp.
  RETURN_IF_ERROR(ValidateTensorParallel(config, options.tp));
  if (options.tp > 1) RETURN_IF_ERROR(CheckTpDevices(options.tp, VisibleCudaDevices()));
  if (options.check) {
    return absl::FailedPreconditionError("--check runs with --backend cpu only for now");
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
  ModelWeights weights;
  if (!options.checkpoint_dir.empty()) {
    ASSIGN_OR_RETURN(weights, LoadCheckpointWeights(options.checkpoint_dir, config, format, layers));
  } else {
    ASSIGN_OR_RETURN(weights, MakeSyntheticWeights(config, format, layers, options.seed, &pool));
  }
  CudaDecoderOptions dopt;
  dopt.context_lengths = ContextLengths(options.context, options.batch);
  dopt.max_steps = options.steps;
  dopt.moe_backend = choice.moe_backend;
  dopt.mla_tensor = choice.mla_id == "attn.sparse_mla.mma";
  dopt.seed = options.seed;
  dopt.cuda_graph = options.cuda_graph;
  ASSIGN_OR_RETURN(std::unique_ptr<TpRanks> decoder, TpRanks::Create(weights, dopt, options.tp));

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
  const int64_t start_unix = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch()).count();
  const auto t0 = std::chrono::steady_clock::now();
  nvtxRangePushA("decode");
  absl::Status loop = absl::OkStatus();
  for (int s = 0; s < options.steps && loop.ok(); ++s) {
    loop = decoder->Step(s, tokens, &next);  // rank 0's tokens
    if (!loop.ok()) break;
    result.tokens.push_back(next);
    tokens = next;
    if (options.on_step) options.on_step(s + 1, options.steps);
  }
  nvtxRangePop();
  const auto t1 = std::chrono::steady_clock::now();
  cudaDeviceSynchronize();
  if (collecting) {
    RETURN_IF_ERROR((*collector)->Stop());
    RETURN_IF_ERROR((*collector)->Flush(&result.trace));
  }
  RETURN_IF_ERROR(loop);

  proto::TraceHeader* h = result.trace.mutable_header();
  h->set_schema_version(1);
  proto::RunInfo* run = h->mutable_run();
  run->set_model(config.name);
  run->set_format(options.format);
  run->set_moe_backend(choice.moe_backend);
  run->set_backend("cuda");
  run->set_batch(options.batch);
  run->set_steps(options.steps);
  run->set_tokens_generated(static_cast<uint64_t>(options.batch) * options.steps);
  run->set_wall_time_ns(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  run->set_tp(options.tp);
  for (int len : dopt.context_lengths) run->add_context_lengths(len);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) run->set_hostname(host);
  run->set_start_unix_ns(static_cast<uint64_t>(start_unix));
  run->set_layers(layers);
  (*run->mutable_extra())["weights"] = weights.source;
  (*run->mutable_extra())["seed"] = absl::StrCat(options.seed);
  (*run->mutable_extra())["mla_kernel"] = choice.mla_id;
  (*run->mutable_extra())["moe_kernel"] = choice.moe_id;
  (*run->mutable_extra())["cuda_graph"] = options.cuda_graph ? "true" : "false";
  (*run->mutable_extra())["device_arch"] = options.target_arch;
  (*run->mutable_extra())["expert_weight_bytes"] = absl::StrCat(weights.expert_bytes());
  (*run->mutable_extra())["dense_weight_bytes"] = absl::StrCat(weights.dense_bytes());
  (*run->mutable_extra())["kv_cache_bytes"] = absl::StrCat(decoder->cache_bytes());
  (*run->mutable_extra())["device_bytes"] = absl::StrCat(decoder->device_bytes());
  (*run->mutable_extra())["model_config"] = ModelConfigToJson(config);
  if (options.tp > 1) {
    (*run->mutable_extra())["tp_token_mismatch_steps"] = absl::StrCat(decoder->token_mismatch_steps());
    h->add_notes(absl::StrCat(
        "tensor parallel over ", options.tp, " GPUs (NCCL, one host thread per rank): heads and "
        "routed experts split across ranks, FP32 all-reduce of the hidden state after attention "
        "and after the MoE (range decode/step N/layer L/comm); tokens are rank 0's; sizes are "
        "summed over ranks"));
  }
  h->add_notes("CUDA backend: kernel records from CUPTI activity tracing; NVTX ranges "
               "decode/step N/layer L/<attn|moe>");
  if (options.cuda_graph) {
    h->add_notes("CUDA graph: step 0 eager, steps >= 1 replay one captured graph (range "
                 "decode/step N/graph; per-layer ranges exist only for step 0)");
  }
  h->add_notes("the prompt KV cache is synthetic (seeded rows); prefill is not run or timed");
  if (!collector_note.empty()) h->add_notes(collector_note);
  if (!path_note.empty()) h->add_notes(path_note);
  return result;
}

}  // namespace qprof::runtime
