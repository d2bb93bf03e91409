// `qprof run`: run the bundled decode workload, write one trace per format and the reports
// (api/run.h does the work; this file parses the options and prints what arrives).
// `both` runs MXFP4 then NVFP4 on the same seed: identical synthetic weights before
// quantization, identical prompts and context lengths.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "api/run.h"
#include "base/absl_fmt.h"
#include "cli/command.h"
#include "cli/run_progress.h"
#include "fmt/core.h"

namespace qprof::cli {
namespace {

struct RunArgs {
  api::RunRequest request;
  std::string batch = "16";   // one size, or a comma list (one sweep on the same weights)
  std::vector<std::string> argv;
};

// "GPU, measured" / "host CPU, measured" / ...: where the run's figures come from.
std::string MeasuredOn(const proto::TraceHeader& h) {
  switch (h.provenance()) {
    case proto::PROVENANCE_MEASURED_GPU: return "GPU, measured";
    case proto::PROVENANCE_MEASURED_HOST: return "host CPU, measured";
    case proto::PROVENANCE_MODELLED: return "modelled";
    default: return "measured";
  }
}

// FNV-1a over the greedy tokens: two runs of the same inputs print the same digest exactly
// when every token agrees (the device check compares eager and CUDA-graph runs with it).
uint64_t TokensDigest(const proto::RunInfo& run) {
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : run.tokens()) {
    for (int i = 0; i < 4; ++i) {
      h ^= (static_cast<uint32_t>(t) >> (8 * i)) & 0xFFu;
      h *= 1099511628211ull;
    }
  }
  return h;
}

void PrintCheck(const char* what, const runtime::CheckResult& c) {
  fmt::print("  check vs {}: logits rel. error {:.4g}, greedy token agreement {:.1f}% of {}{}\n",
             what, c.logits_rel_error, 100.0 * c.token_agreement, c.tokens_compared,
             c.first_disagreement_step >= 0
                 ? fmt::format(" (first difference at step {})", c.first_disagreement_step)
                 : std::string());
}

void PrintSummary(const std::string& format, const runtime::RunResult& r,
                  const std::string& path) {
  const proto::TraceHeader& h = r.trace.header();
  const proto::RunInfo& run = h.run();
  const double secs = run.wall_time_ns() * 1e-9;
  std::map<std::string, double> by_role;
  double total = 0;
  for (const proto::Activity& a : r.trace.activities()) {
    double t = (a.end_ns() - a.start_ns()) * 1e-9;
    by_role[a.attribution().role().empty() ? "other" : a.attribution().role()] += t;
    total += t;
  }
  // Steady-state steps: median and spread of their wall times.
  std::vector<uint64_t> steps(run.step_wall_ns().begin() + std::min<int>(run.warmup_steps(), run.step_wall_ns_size()),
                              run.step_wall_ns().end());
  std::sort(steps.begin(), steps.end());
  std::string step_stats;
  if (!steps.empty()) {
    step_stats = fmt::format(", step median {:.3f} ms [{:.3f}..{:.3f}]", steps[steps.size() / 2] * 1e-6,
                             steps.front() * 1e-6, steps.back() * 1e-6);
  }
  const std::string warm =
      run.warmup_steps() > 0 ? fmt::format(" after {} warm-up", run.warmup_steps()) : "";
  // The model in the headline, so a reader knows what the tokens/s is of.
  fmt::print("{} on {}: {} tokens in {:.3f} s = {:.1f} tokens/s (batch {}, {} steps{}{}, MoE {}; "
             "{})\n",
             format, run.model(), run.tokens_generated(), secs,
             secs > 0 ? run.tokens_generated() / secs : 0.0, run.batch(),
             run.steps() - run.warmup_steps(), warm, step_stats, r.moe_backend_used,
             MeasuredOn(h));
  if (run.setup_wall_ns() > 0) {
    const proto::RunSetup& s = h.setup();
    std::string parts = s.weights_reused()
                            ? "weights reused"
                            : fmt::format("weights {:.2f} s ({})", s.weights_ns() * 1e-9,
                                          s.weights_source());
    if (s.upload_ns() > 0) parts += fmt::format(", upload {:.2f} s", s.upload_ns() * 1e-9);
    parts += fmt::format(", caches {:.2f} s", s.caches_ns() * 1e-9);
    if (s.graph_nodes() > 0) {
      parts += fmt::format(", graph capture {:.1f} ms + instantiate {:.1f} ms ({} nodes)",
                           s.graph_capture_ns() * 1e-6, s.graph_instantiate_ns() * 1e-6,
                           s.graph_nodes());
    }
    fmt::print("  setup {:.2f} s: {}\n", run.setup_wall_ns() * 1e-9, parts);
  }
  std::vector<std::pair<std::string, double>> roles(by_role.begin(), by_role.end());
  std::sort(roles.begin(), roles.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [role, t] : roles) {
    fmt::print("  {:<16} {:9.2f} ms  {:5.1f}%\n", role, t * 1e3,
               total > 0 ? 100.0 * t / total : 0.0);
  }
  if (r.check_vs_cpu) PrintCheck("the CPU backend (same weights)", *r.check_vs_cpu);
  if (r.check) PrintCheck("FP32 experts", *r.check);
  fmt::print("  tokens: {} ({} steps x {}), digest {:016x}\n", run.tokens_size(), run.steps(),
             run.batch(), TokensDigest(run));
  if (!r.backend_note.empty()) fmt::print("  note: {}\n", r.backend_note);
  fmt::print("  trace: {}\n", path);
}

absl::Status RunCommand(RunArgs& args) {
  api::RunRequest& r = args.request;
  r.command_line = absl::StrJoin(args.argv, " ");
  r.qprof_version = QPROF_VERSION;
  const bool tty = StderrIsTty();
  r.on_step = [tty](const std::string& format, int index, int count, int step, int steps) {
    if (tty) {  // a bar over steps and formats, redrawn in place
      fmt::print(stderr, "\r\x1b[2K{}", RunProgressLine(format, index, count, step, steps));
      if (step == steps) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "[{}] decode step {}/{}\n", format, step, steps);
    }
  };
  r.on_progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  r.on_format_done = [](const api::FormatRunDone& done) {
    PrintSummary(done.format, *done.result, done.trace_path);
  };
  r.on_output = [](const std::string& text) {
    fmt::print("{}", text);
    std::fflush(stdout);
  };
  return api::Run(r);
}

// --target, --model-param, --no-model-projection (api/model_run.h).
void AddModelOptions(CLI::App* cmd, api::ModelProjectionOptions& options) {
  cmd->add_option("--target", options.target,
                  "GPU of the spec table to model (qprof devices): the target of --backend "
                  "model, and of the modelled projection and the roofline ceilings of a cpu "
                  "run")
      ->capture_default_str();
  cmd->add_option("--model-param", options.param_overrides,
                  "Override model parameters: name=value[,name=value...] (see docs/model.md)");
  cmd->add_flag("--no-model-projection", options.no_projection,
                "With --backend cpu: do not add the modelled projection for --target");
}

// What runs: where, which model and format, how much (batch, steps, context).
void AddWorkloadOptions(CLI::App* cmd, RunArgs& args) {
  runtime::RunOptions& o = args.request.options;
  // The main job picks the GPU when one is present (issue: `qprof run` with no options).
  o.backend = "auto";
  cmd->add_option("--backend", o.backend,
                  "Where to run: cpu (host CPU, timed per kernel), cuda (GPU, CUPTI), auto "
                  "(cuda when a GPU is present), model (projected onto --target from the "
                  "weight-free decode plan; no GPU, no weights)")
      ->check(CLI::IsMember({"cpu", "cuda", "auto", "model"}))
      ->capture_default_str();
  cmd->add_option("--model", o.model,
                  "Model: a preset (tiny, small, v4-flash) or a JSON config file")
      ->capture_default_str();
  cmd->add_option("--format", args.request.format,
                  "Expert weight format: mxfp4, nvfp4, or both (same weights and prompts)")
      ->check(CLI::IsMember({"mxfp4", "nvfp4", "both"}))
      ->capture_default_str();
  cmd->add_option("--batch", args.batch,
                  "Concurrent sequences decoded per step, or a comma list (e.g. 1,16,64): every "
                  "size on the same weights, built and uploaded once; then one folder per size "
                  "(--out/b<N>)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            auto b = api::ParseBatches(value);
            return b.ok() ? std::string() : std::string(b.status().message());
          },
          "N[,N...]"))
      ->capture_default_str();
  cmd->add_option("--steps", o.steps, "Decode steps (tokens generated per sequence)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--context", o.context,
                  "Context length of the first sequence; the others spread down to half")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
}

// The kernel variants: choices, rule and checks from the registry (kernels/registry/dispatch.h).
void AddKernelOptions(CLI::App* cmd, runtime::RunOptions& o) {
  cmd->add_option("--moe-backend", o.moe_backend,
                  absl::StrCat("MoE kernel path: ", api::MoeBackendChoices(),
                               ". auto: mxfp4 -> slot_gemv; nvfp4 -> fp4_mma where a kernel "
                               "for the GPU exists, else w4a16_mma (on the CPU the MMA paths "
                               "run the grouped kernel); with --backend model a comma list "
                               "models each path"))
      ->check(CLI::Validator([](std::string& v) { return api::CheckMoeBackends(v); },
                             absl::StrCat(absl::StrReplaceAll(api::MoeBackendChoices(),
                                                              {{", ", "|"}}),
                                          "[,...]")))
      ->capture_default_str();
  cmd->add_option("--mla-kernel", o.mla_kernel,
                  absl::StrCat("Sparse-MLA variant: ", api::MlaKernelChoices(),
                               ". auto: the one on the MoE path's pipe (simt with slot_gemv, "
                               "else mma)"))
      ->check(CLI::Validator([](std::string& v) { return api::CheckMlaKernel(v); },
                             absl::StrReplaceAll(api::MlaKernelChoices(), {{", ", "|"}})))
      ->capture_default_str();
}

// How much of the model runs, and split over how many ranks.
void AddSplitOptions(CLI::App* cmd, runtime::RunOptions& o) {
  cmd->add_option("--layers", o.layers, "Run only the first N layers (0 = all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tp", o.tp,
                  "Tensor-parallel degree: --backend cuda runs one GPU per rank over NCCL; "
                  "--backend model models the ranks' interconnect; the CPU backend runs tp 1 only")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
}

// Weights, threads, checks and where the files go.
void AddRunSettings(CLI::App* cmd, RunArgs& args) {
  runtime::RunOptions& o = args.request.options;
  cmd->add_option("--seed", o.seed, "Seed of the synthetic weights, prompts and caches")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads (0 = all cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--checkpoint", o.checkpoint_dir,
                  "Load expert and dense weights from a quantized checkpoint folder");
  cmd->add_flag("--check", o.check,
                "Compare logits and greedy tokens with a reference using unquantized FP32 "
                "experts; on the GPU also with the CPU backend on the same weights (replays the "
                "run's inputs on the host: slow for large models)");
  cmd->add_flag("--cuda-graph", o.cuda_graph,
                "CUDA backend: capture step 1 into a CUDA graph and replay it for later steps "
                "(steps 0 and 1 are then warm-up, left out of tokens/s)");
  cmd->add_option("--split-repeats", args.request.split_repeats,
                  "With both formats: measure mxfp4 on its MoE path, mxfp4 on nvfp4's path and "
                  "nvfp4 on its path this many times each, and print the throughput ratio as "
                  "run, for the format alone and for the path alone (median and range; "
                  "split.json). 0 = off")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  cmd->add_option("--out", args.request.out_dir,
                  "Output folder: <format>.qtrace, <format>.json/.html/.perfetto.json, "
                  "diff.json and diff.html (open this one first), split.json (--split-repeats)")
      ->capture_default_str();
}

}  // namespace

void RegisterRunCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run the bundled DeepSeek-style decode workload (MXFP4 and NVFP4 on identical weights by "
      "default) and write traces, reports and their diff into --out");
  AddWorkloadOptions(cmd, *args);
  AddKernelOptions(cmd, args->request.options);
  AddSplitOptions(cmd, args->request.options);
  AddModelOptions(cmd, args->request.model);
  AddRunSettings(cmd, *args);
  cmd->callback([&runner, args, &app] {
    args->request.batches = *api::ParseBatches(args->batch);  // validated by --batch's check
    args->request.options.batch = args->request.batches[0];
    args->argv = {"qprof", "run"};
    for (const std::string& s : app.remaining()) args->argv.push_back(s);
    runner.action = [args] { return RunCommand(*args); };
  });
}

}  // namespace qprof::cli
