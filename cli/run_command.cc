// `qprof run`: run the bundled decode workload, write one trace per format and the reports.
//
// Structure (one function per stage, so other backends and outputs plug in):
//   FormatsToRun -> RunFormat (runtime::RunDecode) -> WriteFormatTrace -> PrintSummary
//   -> WriteRunReports (cli/run_reports.h: JSON, HTML, Perfetto per format; the diff).
// `both` runs MXFP4 then NVFP4 on the same seed: identical synthetic weights before
// quantization, identical prompts and context lengths.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/absl_fmt.h"
#include "base/file_util.h"
#include "base/status_macros.h"
#include "cli/command.h"
#include "cli/model_run.h"
#include "cli/run_reports.h"
#include "fmt/core.h"
#include "proto/trace_io.h"
#include "runtime/run.h"

namespace qprof::cli {
namespace {

struct RunArgs {
  runtime::RunOptions options;
  std::string format = "both";
  std::string out_dir = "qprof-out";
  ModelCliOptions model;  // --target, --model-param, --no-model-projection (cli/model_run.h)
  std::vector<std::string> argv;
};

std::vector<std::string> FormatsToRun(const std::string& format) {
  if (format == "both") return {"mxfp4", "nvfp4"};
  return {format};
}

absl::StatusOr<runtime::RunResult> RunFormat(const RunArgs& args, const std::string& format,
                                             int index, int count) {
  runtime::RunOptions o = args.options;
  o.format = format;
  const bool tty = StderrIsTty();
  o.on_step = [&format, tty, index, count](int step, int steps) {
    if (tty) {  // a bar over steps and formats, redrawn in place
      fmt::print(stderr, "\r\x1b[2K{}", RunProgressLine(format, index, count, step, steps));
      if (step == steps) fmt::print(stderr, "\n");
    } else {
      fmt::print(stderr, "[{}] decode step {}/{}\n", format, step, steps);
    }
  };
  fmt::print(stderr, "[{}] building weights and caches for model {} ...\n", format, o.model);
  ASSIGN_OR_RETURN(runtime::RunResult r, runtime::RunDecode(o));
  r.trace.mutable_header()->mutable_run()->set_command_line(absl::StrJoin(args.argv, " "));
  r.trace.mutable_header()->mutable_run()->set_qprof_version(QPROF_VERSION);
  return r;
}

absl::StatusOr<std::string> WriteFormatTrace(const RunArgs& args, const std::string& format,
                                             const runtime::RunResult& r) {
  RETURN_IF_ERROR(MakeDirs(args.out_dir));
  std::string path = absl::StrCat(args.out_dir, "/", format, ".qtrace");
  RETURN_IF_ERROR(WriteTrace(r.trace, path));
  return path;
}

void PrintSummary(const std::string& format, const runtime::RunResult& r,
                  const std::string& path) {
  const proto::RunInfo& run = r.trace.header().run();
  const double secs = run.wall_time_ns() * 1e-9;
  std::map<std::string, double> by_role;
  double total = 0;
  for (const proto::Activity& a : r.trace.activities()) {
    double t = (a.end_ns() - a.start_ns()) * 1e-9;
    by_role[a.attribution().role().empty() ? "other" : a.attribution().role()] += t;
    total += t;
  }
  fmt::print("{}: {} tokens in {:.3f} s = {:.1f} tokens/s (batch {}, {} steps, MoE {}, "
             "host CPU, measured)\n",
             format, run.tokens_generated(), secs,
             secs > 0 ? run.tokens_generated() / secs : 0.0, run.batch(), run.steps(),
             r.moe_backend_used);
  auto setup = run.extra().find("setup_wall_ns");
  if (setup != run.extra().end()) {
    fmt::print("  weights and caches built in {:.2f} s ({})\n",
               std::strtod(setup->second.c_str(), nullptr) * 1e-9, run.extra().at("weights"));
  }
  std::vector<std::pair<std::string, double>> roles(by_role.begin(), by_role.end());
  std::sort(roles.begin(), roles.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [role, t] : roles) {
    fmt::print("  {:<16} {:9.2f} ms  {:5.1f}%\n", role, t * 1e3,
               total > 0 ? 100.0 * t / total : 0.0);
  }
  if (r.check) {
    fmt::print("  check vs FP32 experts: logits rel. error {:.4f}, greedy token agreement "
               "{:.1f}% of {}\n",
               r.check->logits_rel_error, 100.0 * r.check->token_agreement,
               r.check->tokens_compared);
  }
  fmt::print("  trace: {}\n", path);
}

absl::Status RunCommand(const RunArgs& args) {
  const std::string command_line = absl::StrJoin(args.argv, " ");
  if (args.options.backend == "model") {
    ASSIGN_OR_RETURN(std::vector<std::string> modelled,
                     RunModelBackend(args.options, args.format, args.options.moe_backend,
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
  std::vector<double> tps;
  bool on_host = false;
  std::vector<FormatRunOutput> runs;
  const std::vector<std::string> formats = FormatsToRun(args.format);
  for (size_t i = 0; i < formats.size(); ++i) {
    const std::string& format = formats[i];
    ASSIGN_OR_RETURN(runtime::RunResult r,
                     RunFormat(args, format, static_cast<int>(i), static_cast<int>(formats.size())));
    on_host |= r.trace.header().provenance() == proto::PROVENANCE_MEASURED_HOST;
    ASSIGN_OR_RETURN(std::string path, WriteFormatTrace(args, format, r));
    PrintSummary(format, r, path);
    const auto& run = r.trace.header().run();
    tps.push_back(run.wall_time_ns() ? run.tokens_generated() / (run.wall_time_ns() * 1e-9) : 0);
    runs.push_back({format, std::move(r.trace), path});
  }
  if (tps.size() == 2 && tps[0] > 0) {
    fmt::print("nvfp4 / mxfp4 decode throughput on this host: {:.2f}x\n", tps[1] / tps[0]);
  }
  std::vector<std::string> projection;
  if (on_host) {
    // Measured on the host CPU: add what the same workload would do on --target (default
    // the story's RTX PRO 6000), written and labelled as modelled.
    ASSIGN_OR_RETURN(projection, AddModelProjection(args.options, args.format, args.model,
                                                    args.out_dir, command_line));
  }
  // Per format <format>.json/.html/.perfetto.json, and diff.json/.html for two formats.
  // Host-CPU rooflines use --target, the projection's device, so both name one GPU.
  return WriteRunReports(runs, projection, args.out_dir, stdout,
                         on_host ? args.model.target : std::string());
}

}  // namespace

void RegisterRunCommand(CLI::App& app, CommandRunner& runner) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run the bundled DeepSeek-style decode workload (MXFP4 and NVFP4 on identical weights by "
      "default) and write traces, reports and their diff into --out");
  runtime::RunOptions& o = args->options;
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
  cmd->add_option("--format", args->format,
                  "Expert weight format: mxfp4, nvfp4, or both (same weights and prompts)")
      ->check(CLI::IsMember({"mxfp4", "nvfp4", "both"}))
      ->capture_default_str();
  cmd->add_option("--batch", o.batch, "Concurrent sequences decoded per step")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--steps", o.steps, "Decode steps (tokens generated per sequence)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--context", o.context,
                  "Context length of the first sequence; the others spread down to half")
      ->check(CLI::Range(1, 1 << 24))
      ->capture_default_str();
  cmd->add_option("--moe-backend", o.moe_backend,
                  "MoE kernel path: auto (mxfp4 -> slot_gemv, nvfp4 -> w4a16_mma or fp4_mma), "
                  "slot_gemv, w4a16_mma, fp4_mma (on the CPU both MMA paths run the grouped "
                  "kernel); with --backend model a comma list models each path")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            for (absl::string_view item : absl::StrSplit(value, ',')) {
              if (item != "auto" && item != "slot_gemv" && item != "w4a16_mma" &&
                  item != "fp4_mma") {
                return absl::StrCat("'", std::string(item),
                                    "' is not one of auto, slot_gemv, w4a16_mma, fp4_mma");
              }
            }
            return std::string();
          },
          "auto|slot_gemv|w4a16_mma|fp4_mma[,...]"))
      ->capture_default_str();
  cmd->add_option("--mla-kernel", o.mla_kernel,
                  "Sparse-MLA variant recorded: auto (simt with slot_gemv, else mma), simt, mma")
      ->check(CLI::IsMember({"auto", "simt", "mma"}))
      ->capture_default_str();
  cmd->add_option("--layers", o.layers, "Run only the first N layers (0 = all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--tp", o.tp,
                  "Tensor-parallel degree: --backend cuda runs one GPU per rank over NCCL; "
                  "--backend model models the ranks' interconnect; the CPU backend runs tp 1 only")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  AddModelOptions(cmd, args->model);
  cmd->add_option("--seed", o.seed, "Seed of the synthetic weights, prompts and caches")
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "CPU threads (0 = all cores)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--checkpoint", o.checkpoint_dir,
                  "Load expert and dense weights from a quantized checkpoint folder");
  cmd->add_flag("--check", o.check,
                "Compare logits and greedy tokens with a reference using unquantized FP32 "
                "experts");
  cmd->add_option("--out", args->out_dir,
                  "Output folder: <format>.qtrace, <format>.json/.html/.perfetto.json, "
                  "diff.json and diff.html (open this one first)")
      ->capture_default_str();
  cmd->callback([&runner, args, &app] {
    args->argv = {"qprof", "run"};
    for (const std::string& s : app.remaining()) args->argv.push_back(s);
    runner.action = [args] { return RunCommand(*args); };
  });
}

}  // namespace qprof::cli
