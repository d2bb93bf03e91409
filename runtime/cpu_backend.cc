#include "runtime/cpu_backend.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "kernels/common/thread_pool.h"
#include "profiler/host/host_collector.h"
#include "runtime/cpu_decoder.h"
#include "runtime/decode_loop.h"
#include "runtime/model_weights.h"
#include "runtime/plan.h"

namespace qprof::runtime {
namespace {

DecoderOptions CpuDecoderOptions(const RunOptions& o, const KernelChoice& choice) {
  DecoderOptions d;
  d.context_lengths = ContextLengths(o.context, o.batch);
  d.max_steps = o.steps;
  d.moe_kernel_id = choice.moe_id;
  d.mla_kernel_id = choice.mla_id;
  d.seed = o.seed;
  return d;
}

// What the CPU backend's trace says about itself besides RunInfo.
void AddCpuHeader(const KernelChoice& choice, int threads, proto::TraceHeader* h) {
  auto& extra = *h->mutable_run()->mutable_extra();
  extra["cpu_threads"] = absl::StrCat(threads);
  extra["moe_cpu_kernel"] = choice.moe_cpu_kernel;
  h->add_notes("CPU backend: kernel times are host CPU measurements (steady clock); pipe "
               "classes are those of the registered CUDA kernels on a GPU (evidence: registry)");
  if (choice.moe_grouped()) {
    h->add_notes(absl::StrCat("MoE path ", choice.moe_backend, ": on the CPU it runs the grouped "
                              "kernel ", choice.moe_cpu_kernel,
                              " (args.cpu_kernel); names are the CUDA kernel's"));
  } else {
    h->add_notes("MoE path slot_gemv: one (token, expert) slot at a time, weights decoded per "
                 "slot, no reuse across the batch");
  }
  h->add_notes(absl::StrCat("sparse MLA ", choice.mla_id,
                            ": the CPU runs one kernel for the simt and mma variants"));
  h->add_notes(kSyntheticPromptNote);
}

// One batch size of a CPU run on weights already built.
absl::StatusOr<RunResult> RunCpuBatch(const RunOptions& options, const ModelArch& arch,
                                      const ModelWeights& weights, kernels::ThreadPool* pool,
                                      proto::RunSetup setup, int64_t run_start) {
  ASSIGN_OR_RETURN(const KernelChoice choice, ChooseKernels(options));
  const DecoderOptions dopt = CpuDecoderOptions(options, choice);
  const int64_t caches_start = profiler::HostNowNs();
  CpuDecoder decoder(weights, dopt, pool);
  RETURN_IF_ERROR(decoder.Init());
  setup.set_caches_ns(static_cast<uint64_t>(profiler::HostNowNs() - caches_start));

  RunResult result;
  result.moe_backend_used = choice.moe_backend;
  profiler::HostCollector collector(pool->size());
  std::vector<float> logits;  // the decoder always computes them
  DecodeLoop loop;
  RETURN_IF_ERROR(collector.Start());
  const int64_t first_step = profiler::HostNowNs();
  {
    profiler::ScopedHostRange decode(&collector, "decode");
    RETURN_IF_ERROR(RunDecodeLoop(
        options, arch.vocab_size,
        [&](int s, const std::vector<int32_t>& in, std::vector<int32_t>* next,
            std::vector<float>* out) {
          return decoder.Step(s, in, &collector, out != nullptr ? out : &logits, next);
        },
        &loop));
  }
  RETURN_IF_ERROR(collector.Stop());
  RETURN_IF_ERROR(collector.Flush(&result.trace));

  proto::TraceHeader* h = result.trace.mutable_header();
  h->set_schema_version(1);
  RunFacts facts;
  facts.backend = "cpu";
  facts.choice = choice;
  facts.warmup_steps = 0;  // host timers: no lazy module loading to leave out
  facts.wall_time_ns = static_cast<uint64_t>(loop.wall_ns);
  facts.setup_wall_ns = static_cast<uint64_t>(first_step - run_start);
  facts.kv_cache_bytes = decoder.cache_bytes();
  FillRunInfo(options, arch, weights, loop, facts, h->mutable_run());
  *h->mutable_setup() = setup;
  AddCpuHeader(choice, pool->size(), h);
  result.tokens = std::move(loop.tokens);
  if (options.check) {
    ASSIGN_OR_RETURN(CheckResult cr, ReplayOnCpu(weights, options, /*fp32_experts=*/true,
                                                 loop.inputs, loop.logits, result.tokens));
    result.check = cr;
    AddCheckExtras("check_", cr, h->mutable_run());
  }
  return result;
}

class CpuBackend : public DecodeBackend {
 public:
  std::string name() const override { return "cpu"; }
  std::string where() const override { return "the host CPU"; }
  Availability Probe(std::string* why) const override { return Availability::kReady; }

  absl::StatusOr<std::vector<RunResult>> RunBatches(const RunOptions& options,
                                                    const std::vector<int>& batches) override {
    const int64_t run_start = profiler::HostNowNs();
    if (options.tp != 1) {
      return absl::InvalidArgumentError("the CPU backend runs tp 1 only (use --backend model "
                                        "or cuda for tensor parallel)");
    }
    ASSIGN_OR_RETURN(const ModelArch arch, LoadModelArch(options.model));
    kernels::ThreadPool pool(options.threads);
    proto::RunSetup setup;
    ASSIGN_OR_RETURN(const ModelWeights weights, BuildRunWeights(options, arch, &pool, &setup));
    std::vector<RunResult> results;
    for (size_t i = 0; i < batches.size(); ++i) {
      RunOptions o = options;
      o.batch = batches[i];
      proto::RunSetup s = setup;
      if (i > 0) {
        s.set_weights_ns(0);
        s.set_weights_reused(true);
      }
      ASSIGN_OR_RETURN(RunResult r, RunCpuBatch(o, arch, weights, &pool, s,
                                                i == 0 ? run_start : profiler::HostNowNs()));
      results.push_back(std::move(r));
    }
    return results;
  }
};

}  // namespace

std::unique_ptr<DecodeBackend> MakeCpuBackend() { return std::make_unique<CpuBackend>(); }

absl::StatusOr<CheckResult> ReplayOnCpu(const ModelWeights& weights, const RunOptions& options,
                                        bool fp32_experts,
                                        const std::vector<std::vector<int32_t>>& inputs,
                                        const std::vector<std::vector<float>>& logits,
                                        const std::vector<std::vector<int32_t>>& tokens) {
  ASSIGN_OR_RETURN(const KernelChoice choice, ChooseKernels(options));
  DecoderOptions o = CpuDecoderOptions(options, choice);
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

}  // namespace qprof::runtime
