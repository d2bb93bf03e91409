// `qprof run`: run the bundled decode workload, write one trace per format and the reports.
//
// Structure (one function per stage, so other backends and outputs plug in):
//   FormatsToRun -> RunFormat (runtime::RunOnBackends over cli/decode_backends.h)
//   -> WriteFormatTrace -> PrintSummary -> WriteRunReports (cli/run_reports.h: JSON, HTML, Perfetto per format; the diff).
// `both` runs MXFP4 then NVFP4 on the same seed: identical synthetic weights before
// quantization, identical prompts and context lengths.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/decode_backends.h"
#include "cli/model_run.h"
#include "cli/run_reports.h"
#include "fmt/core.h"
#include "kernels/registry/dispatch.h"
#include "proto/trace_io.h"
#include "runtime/run.h"

namespace qprof::cli {
namespace {

struct RunArgs {
  runtime::RunOptions options;
  std::string format = "both";
  std::string batch = "16";   // one size, or a comma list (one sweep on the same weights)
  std::vector<int> batches;   // parsed from `batch`
  std::string out_dir = "qprof-out";
  ModelCliOptions model;  // --target, --model-param, --no-model-projection (cli/model_run.h)
  std::vector<std::string> argv;
};

std::vector<std::string> FormatsToRun(const std::string& format) {
  if (format == "both") return {"mxfp4", "nvfp4"};
  return {format};
}

// Every batch size of one format, on weights built (and uploaded) once.
absl::StatusOr<std::vector<runtime::RunResult>> RunFormat(const RunArgs& args,
                                                          const std::string& format, int index,
                                                          int count) {
  runtime::RunOptions o = args.options;
  o.format = format;
  const bool tty = StderrIsTty();
  const auto start = std::chrono::steady_clock::now();
  o.on_step = [&format, tty, index, count](int step, int steps) {
    if (tty) {  // a bar over steps and formats, redrawn in place
      fmt::print(stderr, "\r\x1b[2K{}", RunProgressLine(format, index, count, step, steps));
      if (step == steps) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "[{}] decode step {}/{}\n", format, step, steps);
    }
  };
  // Setup stages with the time since this format started, so a run cut short by a
  // timeout still says where its time went.
  o.on_progress = [&format, start](const std::string& line) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "[{}] +{:.1f} s {}\n", format, t, line);
  };
  fmt::print(stderr, "[{}] building weights and caches for model {} ...\n", format, o.model);
  const std::vector<std::unique_ptr<runtime::DecodeBackend>> owned = MakeDecodeBackends();
  std::vector<runtime::DecodeBackend*> backends;
  for (const auto& b : owned) backends.push_back(b.get());
  ASSIGN_OR_RETURN(std::vector<runtime::RunResult> runs,
                   runtime::RunOnBackends(backends, o, args.batches));
  for (runtime::RunResult& r : runs) {
    r.trace.mutable_header()->mutable_run()->set_command_line(absl::StrJoin(args.argv, " "));
    r.trace.mutable_header()->mutable_run()->set_qprof_version(QPROF_VERSION);
  }
  return runs;
}

absl::StatusOr<std::string> WriteFormatTrace(const std::string& out_dir, const std::string& format,
                                             const runtime::RunResult& r) {
  RETURN_IF_ERROR(MakeDirs(out_dir));
  std::string path = absl::StrCat(out_dir, "/", format, ".qtrace");
  RETURN_IF_ERROR(WriteTrace(r.trace, path));
  return path;
}

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
  fmt::print("{}: {} tokens in {:.3f} s = {:.1f} tokens/s (batch {}, {} steps{}{}, MoE {}; {})\n",
             format, run.tokens_generated(), secs,
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

absl::Status RunCommand(const RunArgs& args) {
  const std::string command_line = absl::StrJoin(args.argv, " ");
  if (args.options.backend == "model") {
    if (args.batches.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--batch ", args.batch, ": a list of batch sizes needs --backend cpu, cuda or auto"));
    }
    runtime::RunOptions base = args.options;
    base.batch = args.batches[0];
    ASSIGN_OR_RETURN(std::vector<std::string> modelled,
                     RunModelBackend(base, args.format, args.options.moe_backend,
                                     args.model, args.out_dir, command_line));
    // Reports for the modelled traces, exactly as for measured ones (they say "modelled").
    std::vector<FormatRunOutput> runs;
    for (const std::string& path : modelled) {
      ASSIGN_OR_RETURN(proto::Trace t, ReadTrace(path));
      std::string stem = path.substr(path.find_last_of('/') + 1);
      stem = stem.substr(0, stem.rfind(".qtrace"));
      runs.push_back({stem, std::move(t), path});
    }
    if (runs.size() > 2) runs.resize(2);  // the diff compares the first two variants
    return WriteRunReports(runs, {}, args.out_dir, stdout);
  }
  if (args.options.moe_backend.find(',') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("--moe-backend ", args.options.moe_backend,
                                                   ": a list of MoE backends needs --backend model"));
  }
  const std::vector<std::string> formats = FormatsToRun(args.format);
  // results[format][batch]: each format builds its weights once for every batch size.
  std::vector<std::vector<runtime::RunResult>> results;
  for (size_t i = 0; i < formats.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<runtime::RunResult> r,
                     RunFormat(args, formats[i], static_cast<int>(i), static_cast<int>(formats.size())));
    results.push_back(std::move(r));
  }
  // One folder per batch size when there are several (each reads like a one-batch run).
  for (size_t b = 0; b < args.batches.size(); ++b) {
    const std::string out_dir = args.batches.size() == 1
                                    ? args.out_dir
                                    : absl::StrCat(args.out_dir, "/b", args.batches[b]);
    std::vector<double> tps;
    bool on_host = false;
    std::vector<FormatRunOutput> runs;
    for (size_t i = 0; i < formats.size(); ++i) {
      runtime::RunResult& r = results[i][b];
      on_host |= r.trace.header().provenance() == proto::PROVENANCE_MEASURED_HOST;
      ASSIGN_OR_RETURN(std::string path, WriteFormatTrace(out_dir, formats[i], r));
      PrintSummary(formats[i], r, path);
      const auto& run = r.trace.header().run();
      tps.push_back(run.wall_time_ns() ? run.tokens_generated() / (run.wall_time_ns() * 1e-9) : 0);
      runs.push_back({formats[i], std::move(r.trace), path});
    }
    if (tps.size() == 2 && tps[0] > 0) {
      fmt::print("nvfp4 / mxfp4 decode throughput (batch {}): {:.2f}x ({})\n", args.batches[b],
                 tps[1] / tps[0], on_host ? "host CPU" : "GPU");
    }
    std::vector<std::string> projection;
    runtime::RunOptions base = args.options;
    base.batch = args.batches[b];
    if (on_host) {
      // Measured on the host CPU: add what the same workload would do on --target (default
      // the story's RTX PRO 6000), written and labelled as modelled.
      ASSIGN_OR_RETURN(projection, AddModelProjection(base, args.format, args.model, out_dir,
                                                      command_line));
    }
    // Per format <format>.json/.html/.perfetto.json, and diff.json/.html for two formats.
    // Host-CPU rooflines use --target, the projection's device, so both name one GPU.
    RETURN_IF_ERROR(WriteRunReports(runs, projection, out_dir, stdout,
                                    on_host ? args.model.target : std::string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> ParseBatches(const std::string& list) {
  std::vector<int> out;
  for (absl::string_view item : absl::StrSplit(list, ',')) {
    int b = 0;
    if (!absl::SimpleAtoi(item, &b) || b < 1 || b > 4096) {
      return absl::InvalidArgumentError(absl::StrCat(
          "each size must be an integer in [1, 4096] ('", std::string(item), "' in ", list, ")"));
    }
    if (std::find(out.begin(), out.end(), b) != out.end()) {
      return absl::InvalidArgumentError(absl::StrCat(b, " appears twice in ", list));
    }
    out.push_back(b);
  }
  return out;
}

// --moe-backend (a comma list for --backend model) and --mla-kernel: the names the kernel
// registry has, checked before anything runs ("" = fine, else the registry's message).
std::string CheckMoeBackends(std::string& value) {
  for (absl::string_view item : absl::StrSplit(value, ',')) {
    auto k = kernels::ResolveMoeVariant("mxfp4", std::string(item), "");
    if (!k.ok()) return std::string(k.status().message());
  }
  return std::string();
}

std::string CheckMlaKernel(std::string& value) {
  const kernels::KernelInfo* moe = *kernels::ResolveMoeVariant("mxfp4", "auto", "");
  auto k = kernels::ResolveMlaVariant(value, *moe);
  return k.ok() ? std::string() : std::string(k.status().message());
}

// What runs: where, which model and format, how much (batch, steps, context).
void AddWorkloadOptions(CLI::App* cmd, RunArgs& args) {
  runtime::RunOptions& o = args.options;
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
  cmd->add_option("--format", args.format,
                  "Expert weight format: mxfp4, nvfp4, or both (same weights and prompts)")
      ->check(CLI::IsMember({"mxfp4", "nvfp4", "both"}))
      ->capture_default_str();
  cmd->add_option("--batch", args.batch,
                  "Concurrent sequences decoded per step, or a comma list (e.g. 1,16,64): every "
                  "size on the same weights, built and uploaded once; then one folder per size "
                  "(--out/b<N>)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            auto b = ParseBatches(value);
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
                  absl::StrCat("MoE kernel path: ", kernels::MoeBackendChoices(),
                               ". auto: mxfp4 -> slot_gemv; nvfp4 -> fp4_mma where a kernel "
                               "for the GPU exists, else w4a16_mma (on the CPU the MMA paths "
                               "run the grouped kernel); with --backend model a comma list "
                               "models each path"))
      ->check(CLI::Validator(CheckMoeBackends,
                             absl::StrCat(absl::StrReplaceAll(kernels::MoeBackendChoices(),
                                                              {{", ", "|"}}),
                                          "[,...]")))
      ->capture_default_str();
  cmd->add_option("--mla-kernel", o.mla_kernel,
                  absl::StrCat("Sparse-MLA variant: ", kernels::MlaKernelChoices(),
                               ". auto: the one on the MoE path's pipe (simt with slot_gemv, "
                               "else mma)"))
      ->check(CLI::Validator(CheckMlaKernel,
                             absl::StrReplaceAll(kernels::MlaKernelChoices(), {{", ", "|"}})))
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
  runtime::RunOptions& o = args.options;
  cmd->add_option("--seed", o.seed, "Seed of the synthetic weights, prompts and caches")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--checkpoint", o.checkpoint_dir,
                  "Load expert and dense weights from a quantized checkpoint folder");
  cmd->add_flag("--check", o.check,
                "Compare logits and greedy tokens with a reference using unquantized FP32 "
                "experts; on the GPU also with the CPU backend on the same weights (replays the "
                "run's inputs on the host: slow for large models)");
  cmd->add_flag("--cuda-graph", o.cuda_graph,
                "CUDA backend: capture step 1 into a CUDA graph and replay it for later steps "
                "(steps 0 and 1 are then warm-up, left out of tokens/s)");
  cmd->add_option("--out", args.out_dir,
                  "Output folder: <format>.qtrace, <format>.json/.html/.perfetto.json, "
                  "diff.json and diff.html (open this one first)")
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
  AddKernelOptions(cmd, args->options);
  AddSplitOptions(cmd, args->options);
  AddModelOptions(cmd, args->model);
  AddRunSettings(cmd, *args);
  cmd->callback([&runner, args, &app] {
    args->batches = *ParseBatches(args->batch);  // validated by --batch's check
    args->options.batch = args->batches[0];
    args->argv = {"qprof", "run"};
    for (const std::string& s : app.remaining()) args->argv.push_back(s);
    runner.action = [args] { return RunCommand(*args); };
  });
}

}  // namespace qprof::cli
